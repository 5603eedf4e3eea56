//! Apify secret input made by Apify's own code: `tests/apify_schemas/encrypt_input.cjs` runs
//! `@apify/input_secrets` (installed by `npm ci` in tests/apify_schemas) to encrypt an INPUT
//! against `input_schema.json` with a fresh passphrase-protected RSA key pair.
//!
//! Include with `#[path = "support/apify_secrets.rs"] mod apify_secrets;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The variable with base64 of the PEM private key.
pub const KEY_FILE_VAR: &str = "APIFY_INPUT_SECRETS_PRIVATE_KEY_FILE";
/// The variable with the key's passphrase.
pub const PASSPHRASE_VAR: &str = "APIFY_INPUT_SECRETS_PRIVATE_KEY_PASSPHRASE";

/// An INPUT as the platform stores it, and the key material the platform gives the run.
pub struct Encrypted {
    /// The INPUT with every secret field encrypted.
    pub input: Value,
    /// Base64 of the PEM private key.
    pub key_file_base64: String,
    /// The private key's passphrase.
    pub passphrase: String,
}

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apify_schemas")
}

/// Why the Node side cannot run here, if it cannot.
pub fn node_missing() -> Option<&'static str> {
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|out| out.status.success()) {
        return Some("node is not installed");
    }
    if !schemas_dir()
        .join("node_modules/@apify/input_secrets")
        .is_dir()
    {
        return Some("run `npm ci` in tests/apify_schemas (.ci/run does)");
    }
    None
}

/// Encrypts `input` with a fresh key; `format` is `pkcs1-des3` or `pkcs8-aes256`.
pub fn encrypt(input: &Value, format: &str) -> Encrypted {
    let mut child = Command::new("node")
        .arg(schemas_dir().join("encrypt_input.cjs"))
        .arg(env!("CARGO_MANIFEST_DIR"))
        .arg(format)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start node");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "encrypt_input.cjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    Encrypted {
        input: printed["input"].clone(),
        key_file_base64: printed["key_file_base64"].as_str().unwrap().to_string(),
        passphrase: printed["passphrase"].as_str().unwrap().to_string(),
    }
}
