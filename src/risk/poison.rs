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

use serde_json::Value;

mod preference;
mod structural;

use super::intent::{self, Context, Family};
use super::phrase::{PhraseBook, TextIndex};
use super::tokens::Tokens;
use super::unicode;
use super::{Finding, Risk, kind, pointer_segment, texts};
#[cfg(test)]
use structural::ascii_runs;
use structural::{decoded_preview, structural_markers};

/// Longest excerpt kept in a finding, in characters.
const EXCERPT_CHARS: usize = 160;

/// Scans one text for poisoning markers and advisories; at most one finding per pattern. The
/// scan knows nothing of the server around the text, so a tool named in it is only a weak hint
/// (see [`ScanCache::for_definitions`]).
pub fn scan_text(pointer: &str, text: &str) -> Vec<Finding> {
    scan_text_with(&mut Scratch::default(), &Context::default(), pointer, text)
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

/// [`scan_text`] in reused buffers, with what is known of the server.
fn scan_text_with(
    scratch: &mut Scratch,
    context: &Context,
    pointer: &str,
    text: &str,
) -> Vec<Finding> {
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
    let prose = intent::is_prose(pointer);
    hits.retain(|(_, span)| !intent::describes_detection(text, *span));
    hits.retain(|(id, span)| match *id {
        "secret_file_path" => {
            !intent::defended(text, *span)
                && !example_file(text, *span)
                && !intent::given_as_example(text, *span)
                && (!prose || intent::ordered_near(text, *span))
        }
        "pseudo_system_tag" => !intent::listed_tag(text, *span),
        "hidden_html_comment" => !intent::defended(text, *span),
        "cross_tool_shadowing" => !intent::names_only_own_tools(text, *span, context),
        "instruction_hijack" => {
            let before = text[..span.0].trim_end().to_ascii_lowercase();
            !intent::quoted_mention(text, *span)
                && ![" a", " an", " the"]
                    .iter()
                    .any(|article| before.ends_with(article))
        }
        "exfil_endpoint" => !intent::given_as_example(text, *span),
        "credential_harvesting" => !prose || intent::ordered_near(text, *span),
        _ => true,
    });
    let intents: Vec<intent::Hit> = intent::detect(text, pointer, context)
        .into_iter()
        .filter(|h| {
            !intent::quoted_mention(text, h.span) && !intent::describes_detection(text, h.span)
        })
        .collect();
    let mut findings: Vec<Finding> = hits
        .iter()
        .map(|&(id, (start, end))| {
            let mut shown = excerpt(text, start, end);
            if id == "encoded_blob" {
                shown.push_str(&decoded_preview(&text[start..end]));
            }
            finding(kind::POISONING, id, pointer, shown, Risk::High)
        })
        .collect();
    findings.extend(intent_findings(text, pointer, &hits, intents));
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

/// The findings of the intent rules, beside the phrase table's `hits`: a pattern the table
/// already reported is not repeated. Severity comes from the combination: a strong hit, or
/// hits of two families, or any marker of the table make every hit a marker; a weak hit alone
/// is dropped (a plain "use the X tool", an "assistant should" is how vendors write).
fn intent_findings(
    text: &str,
    pointer: &str,
    hits: &[(&'static str, Span)],
    intents: Vec<intent::Hit>,
) -> Vec<Finding> {
    let mut families: Vec<Family> = hits
        .iter()
        .filter_map(|(id, _)| Family::of_pattern(id))
        .chain(intents.iter().map(|h| h.family))
        .collect();
    families.sort();
    families.dedup();
    let marked = !hits.is_empty() || intents.iter().any(|h| h.strong) || families.len() >= 2;
    intents
        .into_iter()
        .filter(|h| !hits.iter().any(|(id, _)| *id == h.pattern))
        .map(|h| {
            let shown = format!(
                "{} [{}: {}]",
                excerpt(text, h.span.0, h.span.1),
                h.family.as_str(),
                h.evidence
            );
            finding(kind::POISONING, h.pattern, pointer, shown, Risk::High)
        })
        .filter(|_| marked)
        .collect()
}

/// The kind of place a pointer names, as far as a scan's findings depend on it: prose or not,
/// inside a parameter or not. Texts are cached per kind of place.
fn place_of(pointer: &str) -> u8 {
    u8::from(intent::is_prose(pointer)) | (u8::from(pointer.contains("/properties/")) << 1)
}

/// A secret file's harmless template (`.env.example`, `.env.sample`, `.env.template`): the
/// word that holds the hit at `span` ends like one.
fn example_file(text: &str, span: Span) -> bool {
    let end = text[span.1..]
        .find(|c: char| c.is_whitespace() || c == ',' || c == ')')
        .map_or(text.len(), |i| span.1 + i);
    let word = text[span.0..end].to_ascii_lowercase();
    [".example", ".sample", ".template", ".dist", ".pub"]
        .iter()
        .any(|e| word.contains(e))
}

/// Scans the server's `instructions` (from `initialize`); pointers start at `/instructions`.
pub fn scan_server_instructions(text: &str) -> Vec<Finding> {
    scan_text("/instructions", text)
}

/// Remembers the findings of texts already scanned. The tools of one server repeat many texts
/// ("Repository owner", "Page number for pagination"), and a text's findings depend only on
/// the kind of place it stands in (prose or a value, in a parameter or not), so each distinct
/// text is scanned once per kind of place and its findings re-pointed. One cache serves one
/// server: it holds what the scan knows of that server's names.
#[derive(Debug, Default)]
pub struct ScanCache {
    /// Findings by the kind of place a text stands in ([`place_of`]) and the text.
    seen: HashMap<(u8, String), Vec<Finding>>,
    scratch: Scratch,
    context: Context,
}

impl ScanCache {
    /// A cache for the texts of one server whose definitions (tools, prompts) are
    /// `definitions`: their names and parameter names are the server's own, so a text that
    /// names one of them gives a sequencing hint, while one that names any other tool points
    /// at a tool elsewhere (a `cross_tool_directive` marker).
    pub fn for_definitions<'a>(definitions: impl IntoIterator<Item = &'a Value>) -> ScanCache {
        ScanCache {
            context: Context {
                own_names: Some(intent::own_names(definitions)),
            },
            ..ScanCache::default()
        }
    }

    /// The findings of the server's `instructions`, with what the cache knows of the server.
    pub fn scan_instructions(&mut self, text: &str) -> Vec<Finding> {
        self.scan("/instructions", text)
    }

    /// The findings of `text`, standing at `pointer`.
    pub fn scan(&mut self, pointer: &str, text: &str) -> Vec<Finding> {
        let key = (place_of(pointer), text.to_string());
        if let Some(found) = self.seen.get(&key) {
            return found
                .iter()
                .map(|f| Finding {
                    pointer: pointer.to_string(),
                    ..f.clone()
                })
                .collect();
        }
        let found = scan_text_with(&mut self.scratch, &self.context, pointer, text);
        self.seen.insert(key, found.clone());
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
