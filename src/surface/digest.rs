//! SHA-256 digests over canonical JSON bytes.

use std::fmt;

use super::canon::{self, CanonError};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Names the digest construction in every output that carries a digest: SHA-256 over the
/// RFC 8785 canonical bytes, version 1 of this crate's field selection.
pub const DIGEST_ALGORITHM: &str = "sha256-jcs/1";

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A SHA-256 digest held as its 32 bytes, read and written as 64 lower-case hex characters.
///
/// Per-tool digests are most of what a run keeps in memory for every server (the insight of
/// each surface); as bytes they take a third of their hex text and no allocation of their own,
/// while every row, record and page still shows the same hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256Digest([u8; 32]);

impl Sha256Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Sha256Digest(Sha256::digest(bytes).into())
    }

    /// The digest of the canonical bytes of `v` ([`hash_value`], as bytes).
    pub fn of_value(v: &Value) -> Self {
        match canon::canonicalize(v) {
            Ok(bytes) => Self::of(&bytes),
            Err(error) => Self::of_uncanonicalizable(&error),
        }
    }

    /// The digest that stands for a value without a canonical form.
    pub(crate) fn of_uncanonicalizable(error: &CanonError) -> Self {
        Self::of(uncanonicalizable_marker(error).as_bytes())
    }

    /// Parses 64 hex characters (either case); `None` for anything else.
    pub fn from_hex(text: &str) -> Option<Self> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(Sha256Digest(bytes))
    }

    /// The 32 bytes of the digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The lower-case hex text.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0u8; 64];
        // Cannot fail: the buffer is exactly twice the digest's length.
        hex::encode_to_slice(self.0, &mut text).map_err(|_| fmt::Error)?;
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for Sha256Digest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Sha256Digest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Sha256Digest::from_hex(&text).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Str(&text),
                &"64 hex characters of a SHA-256 digest",
            )
        })
    }
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
    Sha256Digest::of_uncanonicalizable(err).to_hex()
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
    fn digests_read_and_write_as_lower_case_hex() {
        let digest = Sha256Digest::of(b"abc");
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(digest.to_string(), hex);
        assert_eq!(format!("{digest:?}"), hex);
        assert_eq!(serde_json::to_value(digest).unwrap(), json!(hex));
        let back: Sha256Digest = serde_json::from_value(json!(hex)).unwrap();
        assert_eq!(back, digest);
        assert_eq!(
            Sha256Digest::of_value(&json!({"b": 1, "a": 2})).to_hex(),
            hash_value(&json!({"a": 2, "b": 1}))
        );
        for bad in [
            json!("ba78"),
            json!(hex.replace('b', "x")),
            json!(7),
            json!(format!("{hex}00")),
        ] {
            assert!(
                serde_json::from_value::<Sha256Digest>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn hash_value_hashes_canonical_bytes() {
        let v = json!({"b": 1.0, "a": [true, null]});
        let expected = sha256_hex(br#"{"a":[true,null],"b":1}"#);
        assert_eq!(hash_value(&v), expected);
        assert_eq!(try_hash_value(&v).unwrap(), expected);
    }
}
