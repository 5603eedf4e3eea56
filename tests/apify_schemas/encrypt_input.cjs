// Encrypts an INPUT the way the Apify platform stores it, with Apify's own code
// (@apify/input_secrets, installed with the validators by `npm ci` here), for the Rust test
// tests/input_secrets.rs.
//
// Usage: node encrypt_input.cjs <repo root> <key format>  (INPUT JSON on stdin)
//   key format: "pkcs1-des3" (PKCS#1 PEM with legacy OpenSSL DES-EDE3-CBC encryption, the form
//   of Apify's own test keys) or "pkcs8-aes256" (encrypted PKCS#8, AES-256-CBC).
// Prints one JSON object: { input, key_file_base64, passphrase }. The fresh key pair lives
// only in this process and the test.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { encryptInputSecrets, decryptInputSecrets } = require('@apify/input_secrets');

const [root, format] = process.argv.slice(2);
const encodings = {
    'pkcs1-des3': { type: 'pkcs1', cipher: 'des-ede3-cbc' },
    'pkcs8-aes256': { type: 'pkcs8', cipher: 'aes-256-cbc' },
};
if (!root || !encodings[format]) {
    console.error('usage: node encrypt_input.cjs <repo root> <pkcs1-des3|pkcs8-aes256> < INPUT.json');
    process.exit(64);
}

const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const inputSchema = JSON.parse(fs.readFileSync(path.join(root, 'input_schema.json'), 'utf8'));
const passphrase = crypto.randomBytes(12).toString('hex');
const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { format: 'pem', passphrase, ...encodings[format] },
});

const encrypted = encryptInputSecrets({ input, inputSchema, publicKey: crypto.createPublicKey(publicKey) });

// The SDK's own decryption must give the input back, or the fixture is wrong.
const back = decryptInputSecrets({
    input: encrypted,
    privateKey: crypto.createPrivateKey({ key: privateKey, passphrase }),
});
if (JSON.stringify(back) !== JSON.stringify(input)) {
    console.error('@apify/input_secrets did not round-trip the input');
    process.exit(1);
}

process.stdout.write(JSON.stringify({
    input: encrypted,
    key_file_base64: Buffer.from(privateKey, 'utf8').toString('base64'),
    passphrase,
}));
