//! Secret input fields, decrypted in memory before the input is validated.
//!
//! Apify stores every input field declared `isSecret` encrypted: the INPUT record holds, for
//! that field, a string `ENCRYPTED_VALUE:<password>:<value>` (string fields) or
//! `ENCRYPTED_JSON:[<schemaHash>:]<password>:<value>` (arrays and objects; the plaintext is JSON
//! text). `password` is a random AES-256 key followed by a 16-byte GCM nonce, encrypted with the
//! run's RSA public key (OAEP, SHA-1, the Node default); `value` is the AES-256-GCM ciphertext
//! with its 16-byte tag appended. Both parts are base64. The private key reaches the run as
//! base64 of a passphrase-protected PEM in `APIFY_INPUT_SECRETS_PRIVATE_KEY_FILE`, with the
//! passphrase in `APIFY_INPUT_SECRETS_PRIVATE_KEY_PASSPHRASE`.
//!
//! [`decrypt_input`] replaces every encrypted top-level value by its plaintext. A value that
//! looks encrypted but cannot be decrypted refuses the input, naming the field and never the
//! value. Nothing here logs.

use std::fmt;

use aes_gcm::aead::consts::U16;
use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::aes::Aes256;
use aes_gcm::{AesGcm, Nonce};
use base64::Engine;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use rsa::pkcs8::DecodePrivateKey;
use rsa::{Oaep, PrivateKey};
use serde_json::{Map, Value};
use sha1::Sha1;
use zeroize::Zeroizing;

use crate::input::{FieldProblem, InputError};

/// Prefix of an encrypted string field.
pub const ENCRYPTED_VALUE_PREFIX: &str = "ENCRYPTED_VALUE:";
/// Prefix of an encrypted array or object field (the plaintext is JSON text).
pub const ENCRYPTED_JSON_PREFIX: &str = "ENCRYPTED_JSON:";
/// Environment variable with base64 of the PEM private key.
pub const KEY_FILE_VAR: &str = "APIFY_INPUT_SECRETS_PRIVATE_KEY_FILE";
/// Environment variable with the private key's passphrase.
pub const PASSPHRASE_VAR: &str = "APIFY_INPUT_SECRETS_PRIVATE_KEY_PASSPHRASE";

const AES_KEY_LEN: usize = 32;
const GCM_NONCE_LEN: usize = 16;
const GCM_TAG_LEN: usize = 16;

/// AES-256-GCM with the 16-byte nonce Apify uses (not the usual 12).
type Aes256Gcm16 = AesGcm<Aes256, U16>;

/// Node's `Buffer.from(.., "base64")` accepts missing padding; so does this engine.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a secret could not be decrypted. Messages never contain key material or plaintext.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SecretError {
    /// The run was given no private key.
    #[error("{KEY_FILE_VAR} and {PASSPHRASE_VAR} are not set")]
    NoKey,
    /// The key variable is not base64 of a PEM text.
    #[error("{KEY_FILE_VAR} is not base64 of a PEM private key")]
    KeyEncoding,
    /// The PEM is not an RSA private key in a supported form, or the passphrase is wrong.
    #[error("the private key cannot be loaded ({0}); check {PASSPHRASE_VAR}")]
    Key(&'static str),
    /// The value does not have the `PREFIX:[hash:]password:value` shape.
    #[error("it is not of the form PREFIX:[schemaHash:]password:value with base64 parts")]
    Format,
    /// The RSA part does not decrypt with this key (another key, or damaged).
    #[error("its password does not decrypt with this run's private key")]
    Password,
    /// The AES part fails its authentication tag (damaged or tampered).
    #[error("its value fails the AES-GCM integrity check")]
    Value,
    /// The plaintext is not UTF-8, or an `ENCRYPTED_JSON` plaintext is not JSON.
    #[error("its decrypted text is not valid {0}")]
    Plaintext(&'static str),
}

/// Where the key comes from: the two environment variables, loaded only when an encrypted
/// value is actually met. Debug shows whether each variable is set, never its content.
#[derive(Clone, Default)]
pub struct InputSecrets {
    key_file_base64: Option<String>,
    passphrase: Option<String>,
}

impl InputSecrets {
    /// The two variables as read by `PlatformEnv`.
    pub fn new(key_file_base64: Option<String>, passphrase: Option<String>) -> Self {
        InputSecrets {
            key_file_base64,
            passphrase,
        }
    }

    fn load(&self) -> Result<SecretKey, SecretError> {
        match &self.key_file_base64 {
            Some(key) => SecretKey::load(key, self.passphrase.as_deref().unwrap_or("")),
            None => Err(SecretError::NoKey),
        }
    }
}

impl fmt::Debug for InputSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputSecrets")
            .field(
                "key_file",
                &self.key_file_base64.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "passphrase",
                &self.passphrase.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The run's RSA private key for secret input. Debug never shows it.
pub struct SecretKey {
    key: PrivateKey,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

impl SecretKey {
    /// Loads the key from base64 of a PEM text: encrypted or plain PKCS#8, or PKCS#1 plain or
    /// with legacy OpenSSL encryption (`Proc-Type: 4,ENCRYPTED`), which is how Apify's keys
    /// are stored.
    pub fn load(key_file_base64: &str, passphrase: &str) -> Result<Self, SecretError> {
        let compact: String = key_file_base64.split_whitespace().collect();
        let pem_bytes = Zeroizing::new(
            BASE64
                .decode(compact)
                .map_err(|_| SecretError::KeyEncoding)?,
        );
        let pem = std::str::from_utf8(&pem_bytes).map_err(|_| SecretError::KeyEncoding)?;
        let key = match pem_label(pem) {
            Some("ENCRYPTED PRIVATE KEY") => PrivateKey::from_pkcs8_encrypted_pem(pem, passphrase)
                .map_err(|_| {
                    SecretError::Key("encrypted PKCS#8: wrong passphrase or damaged key")
                })?,
            Some("PRIVATE KEY") => PrivateKey::from_pkcs8_pem(pem)
                .map_err(|_| SecretError::Key("PKCS#8 key is not a valid RSA key"))?,
            Some("RSA PRIVATE KEY") => legacy::load_pkcs1(pem, passphrase)?,
            _ => return Err(SecretError::Key("not an RSA private key PEM")),
        };
        Ok(SecretKey { key })
    }

    /// Decrypts one `password`/`value` pair into its UTF-8 plaintext.
    pub fn decrypt(&self, password: &str, value: &str) -> Result<Zeroizing<String>, SecretError> {
        let password = BASE64.decode(password).map_err(|_| SecretError::Format)?;
        let sealed = BASE64.decode(value).map_err(|_| SecretError::Format)?;
        let key_iv = Zeroizing::new(
            self.key
                .decrypt(Oaep::<Sha1>::new(), &password)
                .map_err(|_| SecretError::Password)?,
        );
        if key_iv.len() != AES_KEY_LEN + GCM_NONCE_LEN || sealed.len() < GCM_TAG_LEN {
            return Err(SecretError::Password);
        }
        let (aes_key, iv) = key_iv.split_at(AES_KEY_LEN);
        let cipher = Aes256Gcm16::new_from_slice(aes_key).map_err(|_| SecretError::Password)?;
        let nonce = Nonce::<U16>::try_from(iv).map_err(|_| SecretError::Password)?;
        let plain = cipher
            .decrypt(&nonce, sealed.as_slice())
            .map_err(|_| SecretError::Value)?;
        String::from_utf8(plain)
            .map(Zeroizing::new)
            .map_err(|_| SecretError::Plaintext("UTF-8"))
    }
}

/// The label of the first PEM block, e.g. `RSA PRIVATE KEY`.
fn pem_label(pem: &str) -> Option<&str> {
    pem.lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix("-----BEGIN "))
        .and_then(|rest| rest.strip_suffix("-----"))
}

/// Which kind of secret a string holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `ENCRYPTED_VALUE`: the plaintext is the string itself.
    Text,
    /// `ENCRYPTED_JSON`: the plaintext is JSON text.
    Json,
}

/// The parts of an encrypted value, borrowed from it.
#[derive(Debug, PartialEq, Eq)]
struct Sealed<'a> {
    kind: Kind,
    password: &'a str,
    value: &'a str,
}

/// `None` for an ordinary string; `Some(Err)` for a string that carries an encrypted prefix but
/// not the rest of the shape.
fn parse_sealed(text: &str) -> Option<Result<Sealed<'_>, SecretError>> {
    let (kind, rest) = if let Some(rest) = text.strip_prefix(ENCRYPTED_VALUE_PREFIX) {
        (Kind::Text, rest)
    } else if let Some(rest) = text.strip_prefix(ENCRYPTED_JSON_PREFIX) {
        (Kind::Json, rest)
    } else {
        return None;
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let (password, value) = match parts.as_slice() {
        [password, value] | [_, password, value] => (*password, *value),
        _ => return Some(Err(SecretError::Format)),
    };
    if !parts.iter().all(|part| is_base64_text(part)) || password.is_empty() || value.is_empty() {
        return Some(Err(SecretError::Format));
    }
    Some(Ok(Sealed {
        kind,
        password,
        value,
    }))
}

/// The character set of Apify's pattern: base64 letters, then at most three `=`.
fn is_base64_text(part: &str) -> bool {
    let body = part.trim_end_matches('=');
    part.len() - body.len() <= 3
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-'))
}

/// Decrypts one sealed value into what the field holds.
fn open(sealed: &Sealed<'_>, key: &SecretKey) -> Result<Value, SecretError> {
    let plain = key.decrypt(sealed.password, sealed.value)?;
    match sealed.kind {
        Kind::Text => Ok(Value::String(plain.as_str().to_owned())),
        Kind::Json => serde_json::from_str(&plain).map_err(|_| SecretError::Plaintext("JSON")),
    }
}

/// Replaces every encrypted top-level value of the INPUT JSON by its plaintext and returns the
/// bytes to validate. Input that is not a JSON object, or holds nothing encrypted, comes back
/// unchanged (its own validation reports what is wrong with it). The key is loaded only when
/// something is encrypted.
pub fn decrypt_input(bytes: &[u8], secrets: &InputSecrets) -> Result<Vec<u8>, InputError> {
    let Ok(Value::Object(mut map)) = serde_json::from_slice::<Value>(bytes) else {
        return Ok(bytes.to_vec());
    };
    let sealed_fields: Vec<String> = map
        .iter()
        .filter(|(_, value)| value.as_str().and_then(parse_sealed).is_some())
        .map(|(field, _)| field.clone())
        .collect();
    if sealed_fields.is_empty() {
        return Ok(bytes.to_vec());
    }
    let problems = open_fields(&mut map, &sealed_fields, &secrets.load());
    if !problems.is_empty() {
        return Err(InputError::new(problems));
    }
    serde_json::to_vec(&Value::Object(map))
        .map_err(|_| InputError::whole("could not be rebuilt after decrypting its secret fields"))
}

/// Opens each named field in place; returns one problem per field that could not be opened.
fn open_fields(
    map: &mut Map<String, Value>,
    fields: &[String],
    key: &Result<SecretKey, SecretError>,
) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    for field in fields {
        let Some(slot) = map.get_mut(field) else {
            continue;
        };
        let opened = match (slot.as_str().and_then(parse_sealed), key) {
            (Some(Ok(sealed)), Ok(key)) => open(&sealed, key),
            (Some(Err(error)), _) => Err(error),
            (_, Err(error)) => Err(error.clone()),
            (None, _) => continue,
        };
        match opened {
            Ok(value) => *slot = value,
            Err(error) => problems.push(FieldProblem {
                field: field.clone(),
                problem: advice(&error),
            }),
        }
    }
    problems
}

/// What the user reads: what failed and what to do, never the value.
fn advice(error: &SecretError) -> String {
    let remedy = match error {
        SecretError::NoKey => {
            "; an encrypted secret can only be read in an Apify platform run: give the value in \
             plain text for a local run"
        }
        SecretError::KeyEncoding | SecretError::Key(_) => {
            "; this is a platform configuration problem: report it to the platform operator"
        }
        _ => "; enter the value again in the Actor's input editor so that it is encrypted anew",
    };
    format!("is an encrypted secret that cannot be decrypted: {error}{remedy}")
}

/// Legacy OpenSSL PEM encryption of PKCS#1 keys (`Proc-Type: 4,ENCRYPTED` + `DEK-Info`).
mod legacy {
    use aes::{Aes128, Aes192, Aes256};
    use cbc::cipher::block_padding::Pkcs7;
    use cbc::cipher::{BlockCipherDecrypt, BlockModeDecrypt, KeyInit, KeyIvInit};
    use des::TdesEde3;
    use md5::{Digest, Md5};
    use rsa::PrivateKey;
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use zeroize::Zeroizing;

    use super::{BASE64, Engine, SecretError};

    /// The header lines and the base64 body of one PEM block.
    struct Block<'a> {
        headers: Vec<(&'a str, &'a str)>,
        body: String,
    }

    fn split_block(pem: &str) -> Block<'_> {
        let mut headers = Vec::new();
        let mut body = String::new();
        for line in pem.lines().map(str::trim) {
            if line.starts_with("-----") || line.is_empty() {
                continue;
            }
            match line.split_once(':') {
                Some((name, value)) => headers.push((name.trim(), value.trim())),
                None => body.push_str(line),
            }
        }
        Block { headers, body }
    }

    /// Loads a `RSA PRIVATE KEY` block, decrypting it first when its headers say so.
    pub(super) fn load_pkcs1(pem: &str, passphrase: &str) -> Result<PrivateKey, SecretError> {
        let block = split_block(pem);
        let der = Zeroizing::new(
            BASE64
                .decode(&block.body)
                .map_err(|_| SecretError::Key("PKCS#1 body is not base64"))?,
        );
        let header = |name: &str| {
            block
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        };
        let der = match header("DEK-Info") {
            None if header("Proc-Type").is_none() => der,
            None => return Err(SecretError::Key("encrypted PKCS#1 without DEK-Info")),
            Some(dek) => decrypt_body(dek, &der, passphrase)?,
        };
        PrivateKey::from_pkcs1_der(&der)
            .map_err(|_| SecretError::Key("PKCS#1: wrong passphrase or damaged key"))
    }

    /// Decrypts the DER under `DEK-Info: <cipher>,<hex iv>` with the OpenSSL key derivation
    /// (`EVP_BytesToKey`, MD5, one round, the first 8 IV bytes as salt).
    fn decrypt_body(
        dek: &str,
        data: &[u8],
        passphrase: &str,
    ) -> Result<Zeroizing<Vec<u8>>, SecretError> {
        let (cipher, iv_hex) = dek
            .split_once(',')
            .ok_or(SecretError::Key("malformed DEK-Info"))?;
        let iv = hex::decode(iv_hex.trim()).map_err(|_| SecretError::Key("malformed DEK-Info"))?;
        if iv.len() < 8 {
            return Err(SecretError::Key("malformed DEK-Info"));
        }
        let wrong = |_| SecretError::Key("PKCS#1: wrong passphrase or damaged key");
        let plain = match cipher.trim().to_ascii_uppercase().as_str() {
            "DES-EDE3-CBC" => cbc_decrypt::<TdesEde3>(passphrase, &iv, data).map_err(wrong)?,
            "AES-128-CBC" => cbc_decrypt::<Aes128>(passphrase, &iv, data).map_err(wrong)?,
            "AES-192-CBC" => cbc_decrypt::<Aes192>(passphrase, &iv, data).map_err(wrong)?,
            "AES-256-CBC" => cbc_decrypt::<Aes256>(passphrase, &iv, data).map_err(wrong)?,
            _ => return Err(SecretError::Key("unsupported DEK-Info cipher")),
        };
        Ok(plain)
    }

    fn cbc_decrypt<C>(passphrase: &str, iv: &[u8], data: &[u8]) -> Result<Zeroizing<Vec<u8>>, ()>
    where
        C: BlockCipherDecrypt + KeyInit,
    {
        let key = bytes_to_key(passphrase.as_bytes(), &iv[..8], C::key_size());
        let decryptor = cbc::Decryptor::<C>::new_from_slices(&key, iv).map_err(|_| ())?;
        decryptor
            .decrypt_padded_vec::<Pkcs7>(data)
            .map(Zeroizing::new)
            .map_err(|_| ())
    }

    /// OpenSSL's `EVP_BytesToKey` with MD5 and one iteration.
    fn bytes_to_key(passphrase: &[u8], salt: &[u8], len: usize) -> Zeroizing<Vec<u8>> {
        let mut key = Zeroizing::new(Vec::with_capacity(len + 16));
        let mut previous: Vec<u8> = Vec::new();
        while key.len() < len {
            let mut md5 = Md5::new();
            md5.update(&previous);
            md5.update(passphrase);
            md5.update(salt);
            previous = md5.finalize().to_vec();
            key.extend_from_slice(&previous);
        }
        key.truncate(len);
        key
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use rsa::pkcs8::DecodePublicKey;
    use rsa::rand_core::{TryCryptoRng, TryRng};
    use rsa::{Oaep, PublicKey};
    use serde_json::json;

    use super::*;

    const PASSPHRASE: &str = "unit-test-passphrase";
    const PKCS1_DES3: &str = include_str!("../../tests/data/input_secrets/pkcs1_des3.pem");
    const PKCS1_AES256: &str = include_str!("../../tests/data/input_secrets/pkcs1_aes256.pem");
    const PKCS8_AES256: &str = include_str!("../../tests/data/input_secrets/pkcs8_aes256.pem");
    const PKCS8_DES3_SHA1: &str =
        include_str!("../../tests/data/input_secrets/pkcs8_des3_sha1.pem");
    const PUBLIC: &str = include_str!("../../tests/data/input_secrets/public.pem");

    /// A deterministic generator for test encryption only (xorshift).
    struct TestRng(u64);

    impl TryRng for TestRng {
        type Error = Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            self.try_next_u64().map(|v| v as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            Ok(self.0)
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
            for byte in dst {
                *byte = self.try_next_u64()? as u8;
            }
            Ok(())
        }
    }

    impl TryCryptoRng for TestRng {}

    fn b64(pem: &str) -> String {
        BASE64.encode(pem)
    }

    fn secrets() -> InputSecrets {
        InputSecrets::new(Some(b64(PKCS1_DES3)), Some(PASSPHRASE.to_string()))
    }

    /// Encrypts like Apify: random key+IV, AES-256-GCM with the tag appended, RSA-OAEP(SHA-1).
    fn seal(plain: &str) -> (String, String) {
        let mut rng = TestRng(0x9E37_79B9_7F4A_7C15);
        let mut key_iv = [0u8; AES_KEY_LEN + GCM_NONCE_LEN];
        rng.try_fill_bytes(&mut key_iv).unwrap();
        let cipher = Aes256Gcm16::new_from_slice(&key_iv[..AES_KEY_LEN]).unwrap();
        let nonce = Nonce::<U16>::try_from(&key_iv[AES_KEY_LEN..]).unwrap();
        let sealed = cipher.encrypt(&nonce, plain.as_bytes()).unwrap();
        let public = PublicKey::from_public_key_pem(PUBLIC).unwrap();
        let password = public
            .encrypt(&mut rng, Oaep::<Sha1>::new(), &key_iv)
            .unwrap();
        (BASE64.encode(password), BASE64.encode(sealed))
    }

    fn sealed_json(value: &Value) -> String {
        let (password, sealed) = seal(&value.to_string());
        format!("{ENCRYPTED_JSON_PREFIX}abcdef0123:{password}:{sealed}")
    }

    #[test]
    fn every_supported_key_format_loads_and_decrypts() {
        let (password, sealed) = seal("s3cret");
        for pem in [PKCS1_DES3, PKCS1_AES256, PKCS8_AES256, PKCS8_DES3_SHA1] {
            let key = SecretKey::load(&b64(pem), PASSPHRASE).unwrap();
            assert_eq!(key.decrypt(&password, &sealed).unwrap().as_str(), "s3cret");
        }
    }

    #[test]
    fn key_loading_failures() {
        let cases = [
            (b64(PKCS1_DES3), "wrong", "PKCS#1"),
            (b64(PKCS1_AES256), "wrong", "PKCS#1"),
            (b64(PKCS8_AES256), "wrong", "PKCS#8"),
            (b64(PKCS8_DES3_SHA1), "wrong", "PKCS#8"),
            ("%%% not base64".to_string(), PASSPHRASE, "base64"),
            (b64("hello"), PASSPHRASE, "not an RSA private key"),
            (b64(PUBLIC), PASSPHRASE, "not an RSA private key"),
        ];
        for (key, passphrase, expected) in cases {
            let error = SecretKey::load(&key, passphrase).unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
    }

    #[test]
    fn debug_shows_no_key_material() {
        let key = SecretKey::load(&b64(PKCS1_DES3), PASSPHRASE).unwrap();
        assert_eq!(format!("{key:?}"), "SecretKey(<redacted>)");
        let printed = format!("{:?}", secrets());
        assert!(!printed.contains(PASSPHRASE) && !printed.contains(&b64(PKCS1_DES3)[..20]));
        assert!(printed.contains("<redacted>"));
    }

    #[test]
    fn parsing_table() {
        let ok = |kind, password, value| {
            Some(Ok(Sealed {
                kind,
                password,
                value,
            }))
        };
        let cases = [
            ("plain text", None),
            ("ENCRYPTED_VALUE", None),
            ("ENCRYPTED_VALUE:pw:val", ok(Kind::Text, "pw", "val")),
            (
                "ENCRYPTED_JSON:hash:pw:val==",
                ok(Kind::Json, "pw", "val=="),
            ),
            ("ENCRYPTED_JSON:pw:val", ok(Kind::Json, "pw", "val")),
            ("ENCRYPTED_JSON:a:b:c:d", Some(Err(SecretError::Format))),
            ("ENCRYPTED_VALUE:onlyone", Some(Err(SecretError::Format))),
            ("ENCRYPTED_VALUE:pw:va l", Some(Err(SecretError::Format))),
            ("ENCRYPTED_VALUE:pw:val====", Some(Err(SecretError::Format))),
            ("ENCRYPTED_VALUE::val", Some(Err(SecretError::Format))),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_sealed(text), expected, "{text}");
        }
    }

    #[test]
    fn decryption_failures_table() {
        let key = SecretKey::load(&b64(PKCS1_DES3), PASSPHRASE).unwrap();
        let (password, sealed) = seal("s3cret");
        let mut tampered_tag = BASE64.decode(&sealed).unwrap();
        *tampered_tag.last_mut().unwrap() ^= 1;
        let mut tampered_body = BASE64.decode(&sealed).unwrap();
        tampered_body[0] ^= 1;
        let mut other_password = BASE64.decode(&password).unwrap();
        other_password[5] ^= 1;
        let cases = [
            (password.clone(), "@@@".to_string(), SecretError::Format),
            ("@@@".to_string(), sealed.clone(), SecretError::Format),
            (
                password.clone(),
                BASE64.encode(tampered_tag),
                SecretError::Value,
            ),
            (
                password.clone(),
                BASE64.encode(tampered_body),
                SecretError::Value,
            ),
            (
                password.clone(),
                BASE64.encode([1u8; 8]),
                SecretError::Password,
            ),
            (
                BASE64.encode(other_password),
                sealed.clone(),
                SecretError::Password,
            ),
            (BASE64.encode([7u8; 128]), sealed, SecretError::Password),
        ];
        for (password, sealed, expected) in cases {
            assert_eq!(key.decrypt(&password, &sealed).unwrap_err(), expected);
        }
    }

    #[test]
    fn input_round_trip_replaces_only_encrypted_fields() {
        let credentials = json!([{"origin": "https://a.example", "header": "Authorization", "value": "Bearer t0k3n"}]);
        let (password, sealed) = seal("plain-string");
        let input = json!({
            "servers": ["https://a.example/mcp"],
            "server_credentials": sealed_json(&credentials),
            "note": format!("{ENCRYPTED_VALUE_PREFIX}{password}:{sealed}"),
            "count": 3,
        });
        let bytes = decrypt_input(input.to_string().as_bytes(), &secrets()).unwrap();
        let out: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(out["server_credentials"], credentials);
        assert_eq!(out["note"], "plain-string");
        assert_eq!(out["servers"], input["servers"]);
        assert_eq!(out["count"], 3);
    }

    #[test]
    fn input_without_secrets_is_unchanged_and_the_key_is_not_needed() {
        let none = InputSecrets::default();
        for raw in [&b"{\"servers\": []}"[..], b"not json", b"[1,2]", b""] {
            assert_eq!(decrypt_input(raw, &none).unwrap(), raw);
        }
    }

    #[test]
    fn undecryptable_input_names_the_field_never_the_value() {
        let credentials =
            json!([{"origin": "https://a.example", "header": "X-Key", "value": "canary-value-77"}]);
        let sealed = sealed_json(&credentials);
        let input = json!({ "server_credentials": sealed.clone() }).to_string();
        let wrong_pass = InputSecrets::new(Some(b64(PKCS1_DES3)), Some("nope".to_string()));
        let damaged = json!({ "server_credentials": format!("{sealed}x=") }).to_string();
        let not_json = {
            let (password, body) = seal("{not json");
            json!({ "server_credentials": format!("{ENCRYPTED_JSON_PREFIX}{password}:{body}") })
                .to_string()
        };
        let cases = [
            (
                &input,
                InputSecrets::default(),
                "in plain text for a local run",
            ),
            (&input, wrong_pass, "wrong passphrase"),
            (&damaged, secrets(), "enter the value again"),
            (&not_json, secrets(), "not valid JSON"),
        ];
        for (raw, secrets, expected) in cases {
            let error = decrypt_input(raw.as_bytes(), &secrets).unwrap_err();
            assert_eq!(error.fields(), vec!["server_credentials"]);
            let text = error.to_string();
            assert!(text.contains(expected), "{text}");
            assert!(!text.contains("canary-value-77") && !text.contains(&sealed[20..40]));
        }
    }
}
