//! Optional Ed25519 signatures of chain heads (`ledger_signing_key`).
//!
//! The signed message is `"mcp-surface-ledger/chain-head@1\n" + ledger_name + "\n" + seq +
//! "\n" + head` (UTF-8, `seq` in decimal), so a signature cannot be moved to another ledger or
//! another write. Keys and signatures are hex. The secret key never leaves this type: its
//! `Debug` is redacted and it has no `Display` or `Serialize`.

use std::fmt;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

/// The secret signing key of a ledger (the input's `ledger_signing_key`).
pub struct SigningSecret(SigningKey);

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(<redacted>)")
    }
}

impl PartialEq for SigningSecret {
    fn eq(&self, other: &Self) -> bool {
        self.0.verifying_key() == other.0.verifying_key()
    }
}

impl SigningSecret {
    /// Reads a 32-byte Ed25519 secret key (seed) given as 64 hex characters. The error never
    /// quotes the text.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let bytes = hex::decode(text.trim())
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or("must be an Ed25519 secret key: 64 hex characters (32 bytes)")?;
        Ok(SigningSecret(SigningKey::from_bytes(&bytes)))
    }

    /// The public key, hex.
    pub fn public_key_hex(&self) -> String {
        hex::encode(self.0.verifying_key().as_bytes())
    }

    /// The signature (hex) of one head.
    pub fn sign_head(&self, ledger_name: &str, seq: u64, head: &str) -> String {
        hex::encode(self.0.sign(&message(ledger_name, seq, head)).to_bytes())
    }
}

/// The bytes a head's signature covers.
pub fn message(ledger_name: &str, seq: u64, head: &str) -> Vec<u8> {
    format!("mcp-surface-ledger/chain-head@1\n{ledger_name}\n{seq}\n{head}").into_bytes()
}

/// Reads a public key given as 64 hex characters.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes = hex::decode(text.trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| "the public key must be 64 hex characters (32 bytes)".to_string())?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| "the public key is not an Ed25519 key".to_string())
}

/// Whether `signature` (hex) is `key`'s signature of this head.
pub fn verifies(
    key: &VerifyingKey,
    ledger_name: &str,
    seq: u64,
    head: &str,
    signature: &str,
) -> bool {
    let Some(bytes) = hex::decode(signature)
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b).ok())
    else {
        return false;
    };
    key.verify_strict(
        &message(ledger_name, seq, head),
        &Signature::from_bytes(&bytes),
    )
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_with_their_key_only() {
        let a = SigningSecret::from_hex(&"11".repeat(32)).unwrap();
        let b = SigningSecret::from_hex(&"22".repeat(32)).unwrap();
        let signature = a.sign_head("L", 3, "abc");
        let key_a = parse_public_key(&a.public_key_hex()).unwrap();
        let key_b = parse_public_key(&b.public_key_hex()).unwrap();
        assert!(verifies(&key_a, "L", 3, "abc", &signature));
        assert!(!verifies(&key_b, "L", 3, "abc", &signature));
        assert!(
            !verifies(&key_a, "L", 4, "abc", &signature),
            "another write"
        );
        assert!(
            !verifies(&key_a, "M", 3, "abc", &signature),
            "another ledger"
        );
        assert!(!verifies(&key_a, "L", 3, "abc", "zz"));
    }

    #[test]
    fn the_secret_is_never_shown() {
        let secret = "ab".repeat(32);
        let key = SigningSecret::from_hex(&secret).unwrap();
        assert!(!format!("{key:?}").contains(&secret));
        let error = SigningSecret::from_hex("ab-not-hex-secret").unwrap_err();
        assert!(!error.contains("not-hex-secret"));
        assert!(parse_public_key("00").is_err());
    }
}
