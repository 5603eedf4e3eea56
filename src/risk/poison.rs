//! Tool-poisoning markers: the pattern table of `docs/risk.md`, applied to every text an agent
//! reads.
//!
//! Each rule looks for a concrete attack shape (a hidden directive, a secret path, a concealment
//! request, an exfiltration channel, hidden characters), never for emphasis alone: "IMPORTANT: do
//! not call this more than 3 times" and "You MUST call this function before …" are how honest
//! vendors write, and they produce nothing here.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use serde_json::Value;

mod preference;

use super::phrase::{PhraseBook, TextIndex};
use super::tokens::Tokens;
use super::unicode::{self, HiddenKind};
use super::{Finding, Risk, kind, pointer_segment, texts};

/// Longest excerpt kept in a finding, in characters.
const EXCERPT_CHARS: usize = 160;

/// Scans one text for poisoning markers and advisories; at most one finding per pattern.
pub fn scan_text(pointer: &str, text: &str) -> Vec<Finding> {
    scan_text_with(&mut Scratch::default(), pointer, text)
}

/// The buffers one text scan works in, kept from text to text so that scanning the many texts
/// of a server allocates little.
#[derive(Debug, Default)]
struct Scratch {
    tokens: Tokens,
    index: TextIndex,
    /// The text with ASCII letters lowercased (same byte offsets as the text).
    lower: String,
}

/// [`scan_text`] in reused buffers.
fn scan_text_with(scratch: &mut Scratch, pointer: &str, text: &str) -> Vec<Finding> {
    scratch.tokens.fill(text);
    scratch.lower.clear();
    scratch.lower.push_str(text);
    scratch.lower.make_ascii_lowercase();
    let mut hits: Vec<(&'static str, Span)> = Vec::new();
    structural_markers(text, &scratch.lower, &scratch.tokens, &mut hits);
    let rules = &*PHRASE_RULES;
    rules.book.index(&scratch.tokens, &mut scratch.index);
    for (id, phrases) in &rules.rules {
        if hits.iter().any(|(hit, _)| hit == id) {
            continue;
        }
        let first_match = phrases
            .clone()
            .find_map(|phrase| rules.book.find(phrase, &scratch.index));
        if let Some((a, b)) = first_match {
            hits.push((id, (scratch.tokens.start(a), scratch.tokens.end(b))));
        }
    }
    preference::resolve(text, &mut hits);
    let mut findings: Vec<Finding> = hits
        .into_iter()
        .map(|(id, (start, end))| {
            let mut shown = excerpt(text, start, end);
            if id == "encoded_blob" {
                shown.push_str(&decoded_preview(&text[start..end]));
            }
            finding(kind::POISONING, id, pointer, shown, Risk::High)
        })
        .collect();
    if let Some((start, end)) = whitespace_padding(text) {
        findings.push(finding(
            kind::ADVISORY,
            "whitespace_padding",
            pointer,
            excerpt(text, start, end),
            Risk::Medium,
        ));
    }
    findings
}

fn finding(kind_: &str, pattern: &str, pointer: &str, excerpt: String, severity: Risk) -> Finding {
    Finding::new(kind_, pattern, pointer, excerpt, severity)
}

/// Scans the server's `instructions` (from `initialize`); pointers start at `/instructions`.
pub fn scan_server_instructions(text: &str) -> Vec<Finding> {
    scan_text("/instructions", text)
}

/// Remembers the findings of texts already scanned. The tools of one server repeat many texts
/// ("Repository owner", "Page number for pagination"), and a text's findings do not depend on
/// where it stands, so each distinct text is scanned once and its findings re-pointed.
#[derive(Debug, Default)]
pub struct ScanCache {
    seen: HashMap<String, Vec<Finding>>,
    scratch: Scratch,
}

impl ScanCache {
    /// The findings of `text`, standing at `pointer`.
    pub fn scan(&mut self, pointer: &str, text: &str) -> Vec<Finding> {
        if let Some(found) = self.seen.get(text) {
            return found
                .iter()
                .map(|f| Finding {
                    pointer: pointer.to_string(),
                    ..f.clone()
                })
                .collect();
        }
        let found = scan_text_with(&mut self.scratch, pointer, text);
        self.seen.insert(text.to_string(), found.clone());
        found
    }
}

/// Scans every text of one definition (tool, prompt, resource); pointers relative to it.
pub fn scan_definition(definition: &Value) -> Vec<Finding> {
    scan_definition_with(&mut ScanCache::default(), definition)
}

/// [`scan_definition`] sharing a cache with other definitions of the same server.
pub fn scan_definition_with(cache: &mut ScanCache, definition: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    texts::for_each(definition, &mut |pointer, text| {
        findings.extend(cache.scan(pointer, text));
    });
    findings
}

/// Scans a tool: its texts, then its optional parameters that could carry stolen data out.
pub fn scan_tool(tool: &Value) -> Vec<Finding> {
    scan_tool_with(&mut ScanCache::default(), tool)
}

/// [`scan_tool`] sharing a cache with the other tools of the same server.
pub fn scan_tool_with(cache: &mut ScanCache, tool: &Value) -> Vec<Finding> {
    let mut findings = scan_definition_with(cache, tool);
    let has_marker = findings.iter().any(|f| f.kind == kind::POISONING);
    for (name, pointer) in optional_carrier_parameters(tool) {
        let (kind_, pattern, severity) = if has_marker {
            (kind::POISONING, "exfil_carrier_parameter", Risk::High)
        } else {
            (kind::ADVISORY, "exfil_carrier_candidate", Risk::Low)
        };
        findings.push(finding(
            kind_,
            pattern,
            &pointer,
            unicode::escape_invisible(&name),
            severity,
        ));
    }
    findings
}

/// Parameter names that attacks use to smuggle conversation or secrets out (MCP-Shield list,
/// Invariant's `sidenote`), compared without case, `_` or `-`.
const CARRIER_NAMES: &[&str] = &[
    "sidenote",
    "note",
    "notes",
    "context",
    "history",
    "chathistory",
    "conversation",
    "conversationhistory",
    "feedback",
    "debug",
    "debuginfo",
    "extra",
    "extrainfo",
    "diagnostics",
    "telemetry",
    "callbackurl",
    "webhookurl",
    "reporturi",
    "reporturl",
];

fn optional_carrier_parameters(tool: &Value) -> Vec<(String, String)> {
    let schema = tool.get("inputSchema");
    let Some(properties) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .keys()
        .filter(|name| !required.contains(&name.as_str()))
        .filter(|name| is_carrier_name(name))
        .map(|name| {
            (
                name.clone(),
                format!("/inputSchema/properties/{}", pointer_segment(name)),
            )
        })
        .collect()
}

/// A carrier name compared without case, `_`, `-` or any other non-alphanumeric character.
fn is_carrier_name(name: &str) -> bool {
    if name.is_ascii() {
        let folded = name.bytes().filter(u8::is_ascii_alphanumeric);
        CARRIER_NAMES.iter().any(|carrier| {
            folded
                .clone()
                .map(|b| b.to_ascii_lowercase())
                .eq(carrier.bytes())
        })
    } else {
        // Unicode lowercasing can turn a non-ASCII letter into ASCII (the Kelvin sign into `k`).
        let folded: String = name
            .chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
            .to_lowercase();
        CARRIER_NAMES.contains(&folded.as_str())
    }
}

/// The phrase-based rules: each fires when any of its phrases matches. All phrases live in one
/// book, so a text is indexed once for all of them.
struct PhraseRules {
    book: PhraseBook,
    /// Rule id and the book's numbers of its phrases, in the order the rules are tried.
    rules: Vec<(&'static str, Range<usize>)>,
}

impl PhraseRules {
    fn new(rules: &[(&'static str, Vec<String>)]) -> PhraseRules {
        let mut all: Vec<&str> = Vec::new();
        let mut ranges = Vec::new();
        for (id, phrases) in rules {
            let first = all.len();
            all.extend(phrases.iter().map(String::as_str));
            ranges.push((*id, first..all.len()));
        }
        PhraseRules {
            book: PhraseBook::new(&all),
            rules: ranges,
        }
    }
}

/// Words that name something an attacker wants read or sent: keys, credentials, the chat.
const SENSITIVE: &str = "ssh|rsa|ed25519|credential*|password*|passwd|secret*|env|dotenv|environment|conversation|cookie*";
/// Verbs that move data somewhere.
const SEND: &str = "send|include|pass|forward|upload|post|share|leak|attach|append|copy|paste|dump|exfiltrate|transmit|email";

/// One rule of the table: its id and its phrases.
fn rule(id: &'static str, phrases: &[&str]) -> (&'static str, Vec<String>) {
    (id, phrases.iter().map(|p| p.to_string()).collect())
}

static PHRASE_RULES: LazyLock<PhraseRules> = LazyLock::new(|| {
    let read_or_send = format!("read|cat|open|fetch|retrieve|extract|gather|collect|{SEND}");
    PhraseRules::new(&[
        rule(
            "concealment",
            &[
                "do|does|must|should|shall|will not ~1 tell|mention|inform|notify|reveal|show|alert|disclose|warn ~3 user|users|human",
                "never tell|mention|inform|notify|reveal|show|alert|disclose|warn ~3 user|users|human",
                "without telling|informing|notifying|alerting|asking|showing ~2 user|users|human",
                "hide|conceal ~4 from ~2 user|users|human",
                "user|users should|must|will not ~1 know|notice|see|be ~1 aware|told|informed",
                "could|might|would|will|may upset|alarm|worry|scare|confuse ~2 user|users",
                "merely|just|only|simply ~2 implementation detail|details",
                "keep this|these|it ~2 secret|hidden|private ~2 from ~2 user|users",
            ],
        ),
        rule(
            "pre_invocation_directive",
            &[
                &format!(
                    "before ~2 using|calling|invoking|running|executing|use|call|invoke|run ~3 tool|function|this|it ~8 {read_or_send} ~8 {SENSITIVE}"
                ),
                "otherwise ~3 tool|function ~2 not|never ~1 work",
            ],
        ),
        rule(
            "conversation_exfil",
            &[
                &format!(
                    "{SEND}|put|add|insert|provide|record|store ~3 full|entire|whole|complete|all|every|verbatim ~2 conversation*|chat|transcript*|dialog*"
                ),
                &format!(
                    "{SEND}|put|add|insert|provide ~4 previous|prior|earlier|past ~2 conversation*|instructions|prompt*"
                ),
                &format!("reveal|repeat|print|output|{SEND} ~4 system prompt*|instructions"),
            ],
        ),
        rule(
            "instruction_hijack",
            &[
                "ignore|disregard|forget ~3 previous|prior|above|earlier|preceding|all|any|other|original|system|your ~2 instruction*|prompt*|direction*|guideline*",
                "override ~3 previous|prior|system|original ~2 instruction*|prompt*",
                "you are now a|an|in|the|my|dan|unrestricted|jailbroken|free",
                "your ~1 new|real|true|actual instruction*|task|role|purpose|goal",
                "new|updated system instruction*|prompt*",
                "do not follow|obey ~3 previous|user|system|other|original ~2 instruction*|rule*",
            ],
        ),
        rule(
            "cross_tool_shadowing",
            &[
                "when|while|if|whenever this tool is available|present|installed|loaded|enabled|connected",
                "also present|available|installed ~3 tool|server",
                "side effect|effects on ~6 tool|tools|function|server",
                "supersede|supersedes|superseded|overrides ~3 tool|tools|function|server|instruction*",
                "always call|use|invoke|run this ~2 first",
                "call|use|invoke|run this ~3 before|instead ~2 any|all|every ~1 other ~2 tool|tools|function*",
                "other tool|tools|server|servers must|should|will ~3 send|use|call|route|include|add|bcc|cc|forward",
            ],
        ),
        rule(
            preference::PREFERENCE,
            &[
                "this tool ~2 preferred|prefer ~2 over|to|instead",
                "prefer this tool ~3 over|to|instead",
            ],
        ),
        rule(
            "credential_harvesting",
            &[
                &format!("{SEND}|print|reveal ~4 environment|env ~1 variable*|vars|var"),
                &format!("{SEND}|print|reveal ~4 printenv|environ"),
            ],
        ),
        rule(
            "encoded_payload_directive",
            &[
                "decode|deobfuscate|unescape ~6 execute|eval|evaluate|follow|obey",
                &format!("encode|encoded|base64|obfuscate ~6 {SEND} ~8 {SENSITIVE}"),
                &format!("{SEND} ~6 {SENSITIVE} ~6 encode|encoded|base64|obfuscate"),
            ],
        ),
    ])
});

type Span = (usize, usize);
/// A detector that looks at characters: returns the span of its first hit.
type Detector = fn(&str) -> Option<Span>;

/// Markers found by looking at characters rather than words, pushed onto `found`. `lower` is
/// `text` with ASCII letters lowercased, `tokens` its word tokens.
fn structural_markers(
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
fn ascii_runs(text: &str, keep: impl Fn(u8) -> bool) -> impl Iterator<Item = (usize, &str)> {
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
fn decoded_preview(run: &str) -> String {
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

/// Long runs of blank space that push text out of view.
fn whitespace_padding(text: &str) -> Option<Span> {
    let mut run_start = None;
    let mut spaces = 0;
    let mut newlines = 0;
    for (i, c) in text.char_indices() {
        if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\u{3000}' || c == '\u{A0}' {
            let start = *run_start.get_or_insert(i);
            if c == '\n' {
                newlines += 1;
            } else {
                spaces += 1;
            }
            if spaces >= 40 || newlines >= 10 {
                let end = text[i..]
                    .find(|c: char| !c.is_whitespace())
                    .map_or(text.len(), |j| i + j);
                return Some((start, end));
            }
        } else {
            run_start = None;
            spaces = 0;
            newlines = 0;
        }
    }
    None
}

/// The matched span, widened a little, cut to `EXCERPT_CHARS`, invisible characters escaped and
/// tag characters decoded.
fn excerpt(text: &str, start: usize, end: usize) -> String {
    let start = floor_char_boundary(text, start);
    let end = floor_char_boundary(text, end.max(start));
    let matched = &text[start..end];
    let mut shown: String = matched.chars().take(EXCERPT_CHARS).collect();
    if matched.chars().count() > EXCERPT_CHARS {
        shown.push('…');
    }
    let mut out = unicode::escape_invisible(&shown);
    let decoded = unicode::decode_tags(matched);
    if !decoded.is_empty() {
        out.push_str(&format!(" [tag characters spell: {decoded:?}]"));
    }
    if matched.trim().is_empty() {
        out = format!("{} blank characters", matched.chars().count());
    }
    out
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests;
