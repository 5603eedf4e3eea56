//! SHA-256 digests over canonical JSON bytes.

use super::canon::{self, CanonError};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Names the digest construction in every output that carries a digest: SHA-256 over the
/// RFC 8785 canonical bytes, version 1 of this crate's field selection.
pub const DIGEST_ALGORITHM: &str = "sha256-jcs/1";

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Lower-case hex SHA-256 of the canonical bytes of `v`.
///
/// A value without a canonical form (nested deeper than [`canon::MAX_DEPTH`]) hashes as the
/// marker string `"!uncanonicalizable:<reason>"`, so callers always get a digest; surfaces refuse
/// such values earlier (see `Surface::from_tools`), so this never happens for a stored tool.
pub fn hash_value(v: &Value) -> String {
    match canon::canonicalize(v) {
        Ok(bytes) => sha256_hex(&bytes),
        Err(err) => uncanonicalizable_hash(&err),
    }
}

/// The digest that stands for a value without a canonical form.
pub(crate) fn uncanonicalizable_hash(err: &CanonError) -> String {
    sha256_hex(uncanonicalizable_marker(err).as_bytes())
}

/// Like [`hash_value`] but reports a value that has no canonical form.
pub fn try_hash_value(v: &Value) -> Result<String, CanonError> {
    canon::canonicalize(v).map(|bytes| sha256_hex(&bytes))
}

fn uncanonicalizable_marker(err: &CanonError) -> String {
    format!("!uncanonicalizable:{err}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sha256_of_known_bytes() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hash_value_hashes_canonical_bytes() {
        let v = json!({"b": 1.0, "a": [true, null]});
        let expected = sha256_hex(br#"{"a":[true,null],"b":1}"#);
        assert_eq!(hash_value(&v), expected);
        assert_eq!(try_hash_value(&v).unwrap(), expected);
    }
}
