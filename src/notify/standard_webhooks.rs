//! Standard Webhooks 1.0 signing (<https://www.standardwebhooks.com/>): the `whsec_` secret,
//! the message id and the three headers a receiver verifies.
//!
//! The signature is `v1,` and the base64 of HMAC-SHA256, keyed with the secret's bytes, over
//! `{webhook-id}.{webhook-timestamp}.{body}`. Pure: the caller supplies the time.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The prefix of a Standard Webhooks secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// The shortest secret accepted, in bytes after base64 decoding (the spec's lower bound).
pub const MIN_SECRET_BYTES: usize = 24;

/// The longest secret accepted, in bytes after base64 decoding (the spec's upper bound).
pub const MAX_SECRET_BYTES: usize = 64;

/// A webhook signing secret: the decoded key bytes. Its `Debug` never shows them, it has no
/// `Display` and no `Serialize`, and the bytes are wiped when it is dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(Zeroizing<Vec<u8>>);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

impl WebhookSecret {
    /// Reads `whsec_<base64>`. The problem returned never quotes the value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(encoded) = text.strip_prefix(SECRET_PREFIX) else {
            return Err(format!(
                "must start with {SECRET_PREFIX} followed by base64 (a Standard Webhooks secret)"
            ));
        };
        let bytes = Zeroizing::new(
            STANDARD
                .decode(encoded)
                .map_err(|_| format!("is not {SECRET_PREFIX} followed by valid base64"))?,
        );
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&bytes.len()) {
            return Err(format!(
                "must decode to {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes (got {})",
                bytes.len()
            ));
        }
        Ok(WebhookSecret(bytes))
    }

    /// The `webhook-signature` header value for one attempt: `v1,<base64 HMAC-SHA256>`.
    pub fn signature(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        // HMAC takes keys of any length; this cannot fail.
        let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(&self.0) else {
            return String::new();
        };
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-id` of one destination's delivery in one run: the same for every attempt of
/// that delivery, so a receiver that saw it already can drop a repeat, and different for every
/// other run (the chain head names the run's ledger write) and destination. It is derived from
/// neither the URL nor the secret.
pub fn message_id(ledger_name: &str, run_key: &str, destination: usize) -> String {
    let mut hash = Sha256::new();
    hash.update(b"mcp-surface-ledger notify 1\0");
    hash.update(ledger_name.as_bytes());
    hash.update(b"\0");
    hash.update(run_key.as_bytes());
    hash.update(b"\0");
    hash.update(destination.to_string().as_bytes());
    format!("msg_{}", &hex::encode(hash.finalize())[..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the Standard Webhooks reference libraries' test suites.
    #[test]
    fn the_reference_example_signs_as_the_reference_libraries_do() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.signature("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_are_checked_without_quoting_them() {
        let canary = "whsec_c2VjcmV0";
        for (text, problem) in [
            ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "must start with whsec_"),
            ("whsec_!!!not-base64!!!", "valid base64"),
            (canary, "got 6"),
        ] {
            let error = WebhookSecret::parse(text).unwrap_err();
            assert!(error.contains(problem), "{text}: {error}");
            assert!(!error.contains(&text[6..]), "{error}");
        }
        let secret = WebhookSecret::parse(&format!("whsec_{}", STANDARD.encode([7u8; 32])));
        assert_eq!(
            format!("{:?}", secret.unwrap()),
            "WebhookSecret(<redacted>)"
        );
        let long = format!("whsec_{}", STANDARD.encode([7u8; 65]));
        assert!(WebhookSecret::parse(&long).is_err());
    }

    #[test]
    fn message_ids_are_stable_per_run_and_destination_and_differ_otherwise() {
        let id = message_id("DEFAULT", "head-a", 0);
        assert_eq!(id, message_id("DEFAULT", "head-a", 0));
        assert!(id.starts_with("msg_") && id.len() == 36, "{id}");
        for other in [
            message_id("DEFAULT", "head-b", 0),
            message_id("DEFAULT", "head-a", 1),
            message_id("other", "head-a", 0),
        ] {
            assert_ne!(id, other);
        }
    }
}
