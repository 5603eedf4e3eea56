//! The markers found by looking at characters rather than words: hidden characters, look-alike
//! letters, pseudo system tags, hidden HTML comments, secret file paths, exfiltration endpoints,
//! credential variables near a verb that moves them, and base64 runs that hide a message.

use super::super::tokens::Tokens;
use super::super::unicode::{self, HiddenKind};
use super::{Detector, EXCERPT_CHARS, Span, floor_char_boundary};
use aho_corasick::AhoCorasick;
use std::sync::LazyLock;

/// Markers found by looking at characters rather than words, pushed onto `found`. `lower` is
/// `text` with ASCII letters lowercased, `tokens` its word tokens.
pub(super) fn structural_markers(
    text: &str,
    lower: &str,
    tokens: &Tokens,
    found: &mut Vec<(&'static str, Span)>,
) {
    hidden_character_markers(text, found);
    if let Some((s, e)) = unicode::mixed_script_words(text).first() {
        found.push(("homoglyph", (*s, *e)));
    }
    // ASCII lowercasing keeps every byte offset, so spans found in `lower` fit `text`.
    let checks: [(&'static str, Detector); 4] = [
        ("pseudo_system_tag", pseudo_system_tag),
        ("hidden_html_comment", hidden_html_comment),
        ("secret_file_path", secret_file_path),
        ("exfil_endpoint", exfil_endpoint),
    ];
    for (id, check) in checks {
        if let Some(span) = check(lower) {
            found.push((id, span));
        }
    }
    if let Some(span) = credential_variable(text, tokens) {
        found.push(("credential_harvesting", span));
    }
    if let Some(span) = encoded_blob(text) {
        found.push(("encoded_blob", span));
    }
}

/// The first hidden character of each kind, pushed onto `found`.
fn hidden_character_markers(text: &str, found: &mut Vec<(&'static str, Span)>) {
    for hidden in unicode::hidden_characters(text) {
        let id = match hidden.kind {
            HiddenKind::ZeroWidth => "zero_width_character",
            HiddenKind::Bidi => "bidi_control",
            HiddenKind::Tag => "unicode_tag_characters",
            HiddenKind::VariationSelector => "variation_selector",
            HiddenKind::AnsiEscape => "ansi_escape",
            HiddenKind::Control => "control_character",
        };
        if found.iter().any(|(f, _)| *f == id) {
            continue;
        }
        let end = if hidden.kind == HiddenKind::Tag {
            tag_run_end(text, hidden.at)
        } else {
            hidden.at + text[hidden.at..].chars().next().map_or(1, char::len_utf8)
        };
        found.push((id, (hidden.at, end)));
    }
}

fn tag_run_end(text: &str, start: usize) -> usize {
    text[start..]
        .char_indices()
        .find(|(_, c)| !(0xE0000..=0xE007F).contains(&(*c as u32)))
        .map_or(text.len(), |(i, _)| start + i)
}

/// `<IMPORTANT>`, `</system>`, `<|im_start|>`, `[SYSTEM]`, `[INST]`, `<<SYS>>`, `[IMPORTANT: …]`.
fn pseudo_system_tag(lower: &str) -> Option<Span> {
    const ANGLE: &[&str] = &[
        "important",
        "system",
        "system_prompt",
        "system-prompt",
        "instructions",
        "instruction",
        "sys",
        "hidden",
        "secret",
        "admin",
        "assistant",
        "critical",
        "override",
        "im_start",
        "im_end",
        "prompt",
    ];
    const SQUARE: &[&str] = &[
        "important",
        "system",
        "inst",
        "sys",
        "admin",
        "hidden",
        "instructions",
        "instruction",
    ];
    // Every shape opens with `<` or `[`.
    if !lower.bytes().any(|b| b == b'<' || b == b'[') {
        return None;
    }
    if let Some(at) = lower.find("<|")
        && let Some(len) = lower[at..].find("|>")
    {
        return Some((at, at + len + 2));
    }
    if let Some(at) = lower.find("<<sys>>") {
        return Some((at, at + 7));
    }
    for (open, close, names) in [('<', '>', ANGLE), ('[', ']', SQUARE)] {
        for (at, _) in lower.match_indices(open) {
            let rest = &lower[at + 1..];
            let rest = rest.strip_prefix('/').unwrap_or(rest);
            let word_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(rest.len());
            let word = &rest[..word_len];
            let after = rest[word_len..].chars().next();
            let closes = after == Some(close)
                || (open == '[' && after == Some(':'))
                || (open == '<' && after == Some(' '));
            if names.contains(&word) && closes {
                let end = at + 1 + (lower.len() - at - 1 - rest.len()) + word_len + 1;
                return Some((at, end.min(lower.len())));
            }
        }
    }
    None
}

/// An HTML comment with words in it: rendered views hide it, the model reads it.
fn hidden_html_comment(lower: &str) -> Option<Span> {
    if !lower.contains('<') {
        return None;
    }
    let at = lower.find("<!--")?;
    let close = lower[at..].find("-->").map_or(lower.len(), |i| at + i + 3);
    // Without a closing `-->` the last three bytes are left out of the body as well; they may
    // end inside a multi-byte character, so the cut moves back to a character boundary.
    let body_end = floor_char_boundary(lower, close.saturating_sub(3)).max(at + 4);
    let body = &lower[at + 4..body_end];
    body.chars().any(char::is_alphabetic).then_some((at, close))
}

/// Paths of keys and credentials that a tool has no business asking the model to read.
fn secret_file_path(lower: &str) -> Option<Span> {
    const PATHS: &[&str] = &[
        "~/.ssh",
        ".ssh/",
        "id_rsa",
        "id_ed25519",
        "id_ecdsa",
        "id_dsa",
        ".aws/credentials",
        "~/.aws",
        ".cursor/mcp.json",
        "~/.cursor",
        "claude_desktop_config.json",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".docker/config.json",
        ".kube/config",
        "/etc/passwd",
        "/etc/shadow",
        ".bash_history",
        ".zsh_history",
        ".pgpass",
        ".gnupg",
        "wallet.dat",
        ".config/gcloud",
    ];
    static MATCHER: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| AhoCorasick::new(PATHS).ok());
    let word_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut best: Option<Span> = None;
    let matches = MATCHER.iter().flat_map(|m| m.find_overlapping_iter(lower));
    for found in matches {
        let (at, path) = (found.start(), PATHS[found.pattern().as_usize()]);
        let before_ok =
            !path.starts_with(|c: char| c.is_alphanumeric()) || !lower[..at].ends_with(word_char);
        let after_ok = path.ends_with('/') || !lower[found.end()..].starts_with(word_char);
        if before_ok && after_ok && best.is_none_or(|(s, _)| at < s) {
            best = Some((at, found.end()));
        }
    }
    best.or_else(|| dotenv_file(lower))
}

/// `.env` as a file name (also `.env.local`), not `process.env` or `.environment`.
fn dotenv_file(lower: &str) -> Option<Span> {
    lower
        .match_indices(".env")
        .map(|(at, _)| at)
        .find(|&at| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + 4..].chars().next();
            let before_ok = before.is_none_or(|c| c.is_whitespace() || "'\"`/(~[".contains(c));
            let after_ok = after.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            before_ok && after_ok
        })
        .map(|at| (at, at + 4))
}

/// URLs to raw IP addresses, collection services or abused TLDs, and international phone numbers
/// (the WhatsApp exfiltration shape).
fn exfil_endpoint(lower: &str) -> Option<Span> {
    const SERVICES: &[&str] = &[
        "ngrok.io",
        "ngrok-free.app",
        "ngrok.app",
        "webhook.site",
        "requestbin",
        "pipedream.net",
        "burpcollaborator.net",
        "oast.fun",
        "oast.pro",
        "oast.live",
        "oast.site",
        "oast.online",
        "oast.me",
        "interact.sh",
        "trycloudflare.com",
        "beeceptor.com",
        "hookbin.com",
        "requestcatcher.com",
        "canarytokens",
        "pastebin.com",
        "transfer.sh",
        "serveo.net",
        "localtunnel.me",
        "loca.lt",
    ];
    static SERVICE_MATCHER: LazyLock<Option<AhoCorasick>> =
        LazyLock::new(|| AhoCorasick::new(SERVICES).ok());
    if let Some(found) = SERVICE_MATCHER.as_ref().and_then(|m| m.find(lower)) {
        return Some((found.start(), found.end()));
    }
    suspicious_url(lower).or_else(|| phone_number(lower))
}

/// A URL whose host is a raw IP address or ends in an abused TLD.
fn suspicious_url(lower: &str) -> Option<Span> {
    const TLDS: &[&str] = &[
        "tk", "ml", "ga", "cf", "gq", "xyz", "top", "zip", "mov", "click", "pw", "icu", "buzz",
        "cam", "monster", "rest", "su", "cyou", "sbs", "lol", "onion",
    ];
    // Both schemes need a colon; most texts have none.
    if !lower.contains(':') {
        return None;
    }
    for scheme in ["http://", "https://"] {
        for (at, _) in lower.match_indices(scheme) {
            let host_start = at + scheme.len();
            let rest = &lower[host_start..];
            let host_len = rest
                .find(|c: char| "/:?#\"'`)]> \n\t".contains(c))
                .unwrap_or(rest.len());
            let host = rest[..host_len].trim_end_matches('.');
            let raw_ip = host.starts_with('[')
                || (!host.is_empty()
                    && host.split('.').count() == 4
                    && host
                        .split('.')
                        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())));
            let odd_tld = host
                .rsplit('.')
                .next()
                .is_some_and(|tld| host.contains('.') && TLDS.contains(&tld));
            if raw_ip || odd_tld {
                return Some((at, host_start + host_len));
            }
        }
    }
    None
}

/// `+` followed by 10 to 15 digits (spaces, dashes, dots and parentheses allowed between).
fn phone_number(text: &str) -> Option<Span> {
    for (at, _) in text.match_indices('+') {
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric())
        {
            continue;
        }
        let mut digits = 0;
        let mut end = at + 1;
        for (i, c) in text[at + 1..].char_indices() {
            if c.is_ascii_digit() {
                digits += 1;
                end = at + 1 + i + 1;
            } else if !" -.()".contains(c) || i > 24 {
                break;
            }
        }
        let next = text[end..].chars().next();
        if (10..=15).contains(&digits) && next.is_none_or(|c| !c.is_alphanumeric()) {
            return Some((at, end));
        }
    }
    None
}

/// An upper-case credential variable (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`) near a verb that
/// reads or moves it. `tokens` are the word tokens of `text`.
fn credential_variable(text: &str, tokens: &Tokens) -> Option<Span> {
    const PARTS: &[&str] = &[
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIALS",
        "APIKEY",
    ];
    const VERBS: &[&str] = &[
        "send",
        "include",
        "pass",
        "forward",
        "upload",
        "post",
        "share",
        "leak",
        "attach",
        "append",
        "copy",
        "paste",
        "dump",
        "exfiltrate",
        "transmit",
        "email",
        "read",
        "print",
        "reveal",
        "output",
        "echo",
    ];
    // A credential variable has an underscore; most texts have none.
    if !text.contains('_') {
        return None;
    }
    for (start, word) in ascii_runs(text, |b| b.is_ascii_alphanumeric() || b == b'_') {
        let shaped = word.len() >= 5
            && word.contains('_')
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !shaped || !word.split('_').any(|p| PARTS.contains(&p)) {
            continue;
        }
        let index = (0..tokens.len())
            .position(|i| tokens.start(i) >= start)
            .unwrap_or(0);
        let window = index.saturating_sub(8)..(index + 8).min(tokens.len());
        if window.into_iter().any(|i| VERBS.contains(&tokens.word(i))) {
            return Some((start, start + word.len()));
        }
    }
    None
}

/// The bytes a base64 run is made of: both alphabets (`+/` and `-_`) and the `=` padding.
const BASE64_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=');
        byte += 1;
    }
    table
};

/// A base64 run of at least 24 characters that decodes to readable text: a hidden message.
fn encoded_blob(text: &str) -> Option<Span> {
    // The shortest blob worth decoding has 24 characters.
    if text.len() < 24 {
        return None;
    }
    for (start, run) in ascii_runs(text, |b| BASE64_BYTES[usize::from(b)]) {
        let body = run.trim_end_matches('=');
        if body.len() < 24 {
            continue;
        }
        if decode_base64(body).is_some_and(|decoded| reads_as_text(&decoded)) {
            return Some((start, start + run.len()));
        }
    }
    None
}

/// Maximal runs of ASCII characters that satisfy `keep`, with their byte offsets. Bytes of a
/// multi-byte character are never ASCII, so they end a run like any other rejected character.
pub(super) fn ascii_runs(
    text: &str,
    keep: impl Fn(u8) -> bool,
) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + bytes[at..].iter().position(|&b| keep(b))?;
        let len = bytes[start..]
            .iter()
            .position(|&b| !keep(b))
            .unwrap_or(bytes.len() - start);
        at = start + len;
        Some((start, &text[start..at]))
    })
}

fn decode_base64(body: &str) -> Option<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(((bits >> count) & 0xFF) as u8);
        }
    }
    Some(out)
}

/// ` [decodes to: "…"]` for a base64 run, so a reviewer sees the hidden message.
pub(super) fn decoded_preview(run: &str) -> String {
    let decoded = decode_base64(run.trim_end_matches('=')).unwrap_or_default();
    let text: String = String::from_utf8_lossy(&decoded)
        .chars()
        .take(EXCERPT_CHARS)
        .collect();
    format!(" [decodes to: {:?}]", unicode::escape_invisible(&text))
}

fn reads_as_text(bytes: &[u8]) -> bool {
    if bytes.len() < 16 {
        return false;
    }
    let printable = bytes
        .iter()
        .filter(|b| matches!(b, 0x20..=0x7E | b'\n' | b'\t'))
        .count();
    let letters = bytes.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let spaces = bytes.iter().filter(|b| **b == b' ').count();
    printable * 10 >= bytes.len() * 9 && letters * 2 >= bytes.len() && spaces >= 1
}
