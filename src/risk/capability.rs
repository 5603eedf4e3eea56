//! What a tool can do, inferred from the words it is made of, with the evidence for each call.
//!
//! Verbs (read, write, delete, execute) come from the tool name, its titles and the enum values
//! of an operation selector (`method: ["create", "delete"]`); reach (network, filesystem,
//! payment, messaging, secrets) also from parameter names and the description. Every rule is a
//! whole-word match on snake/camel/kebab tokens, so `undelete_history` is a restore (write), not a
//! delete, and `list_deleted_items` is a read.

use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hints::{EffectiveHints, declared_hint};
use super::tokens::Tokens;
use super::wordhash::WordMap;

/// One thing a tool can do. Ordered as listed; serialized lowercase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// Reads data.
    Read,
    /// Creates or changes data.
    Write,
    /// Removes data.
    Delete,
    /// Runs commands, code or workflows.
    Execute,
    /// Reaches URLs or hosts.
    Network,
    /// Touches files, directories or paths.
    Filesystem,
    /// Moves money.
    Payment,
    /// Sends or reads messages to people.
    Messaging,
    /// Handles secrets, keys, passwords or tokens.
    Secrets,
}

/// Why a capability was inferred, e.g. `name token "delete"` or `parameter "path"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The capability.
    pub capability: Capability,
    /// What triggered it.
    pub evidence: String,
}

mod words;

use Capability::*;

use words::{OPERATION_SELECTORS, PARAMETER_NOISE, PROSE, PROSE_PAIRS, REACH, SECRET_PAIRS, VERBS};

/// A vocabulary table turned around: each word with the capabilities it names, in table order,
/// so a token is looked up once instead of compared with every word of every list.
struct Lexicon(WordMap<&'static str, Vec<Capability>>);

impl Lexicon {
    fn new(table: &[(Capability, &[&'static str])]) -> Lexicon {
        let mut words: WordMap<&'static str, Vec<Capability>> = WordMap::default();
        for (capability, vocabulary) in table {
            for word in *vocabulary {
                let capabilities = words.entry(word).or_default();
                if !capabilities.contains(capability) {
                    capabilities.push(*capability);
                }
            }
        }
        Lexicon(words)
    }

    /// The capabilities `word` names, in table order; empty for any other word.
    fn capabilities(&self, word: &str) -> &[Capability] {
        self.0.get(word).map_or(&[], Vec::as_slice)
    }
}

static VERB_WORDS: LazyLock<Lexicon> = LazyLock::new(|| Lexicon::new(VERBS));
static REACH_WORDS: LazyLock<Lexicon> = LazyLock::new(|| Lexicon::new(REACH));
static PROSE_WORDS: LazyLock<Lexicon> = LazyLock::new(|| Lexicon::new(PROSE));

/// All evidence for one tool, in the order found, without repeats.
pub fn infer(tool: &Value, hints: &EffectiveHints) -> Vec<Evidence> {
    let mut found = Vec::new();
    let mut tokens = Tokens::default();
    let text = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or("");
    let annotation_title = tool
        .get("annotations")
        .and_then(|a| a.get("title"))
        .and_then(Value::as_str)
        .unwrap_or("");
    for (label, source) in [
        ("name token", text("name")),
        ("title word", text("title")),
        ("title word", annotation_title),
    ] {
        tokens.fill(source);
        identifier_evidence(&label, verb_positions(&tokens), &VERB_WORDS, &mut found);
        identifier_evidence(&label, tokens.words(), &REACH_WORDS, &mut found);
    }
    for (parameter, schema) in parameters(tool) {
        tokens.fill(parameter);
        parameter_evidence(parameter, &tokens, &mut found);
        if is_operation_selector(parameter) {
            for value in schema
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(value) = value.as_str() else {
                    continue;
                };
                tokens.fill(value);
                let label = EnumLabel { value, parameter };
                identifier_evidence(&label, verb_positions(&tokens), &VERB_WORDS, &mut found);
            }
        }
    }
    tokens.fill(text("description"));
    prose_evidence(&tokens, &mut found);
    annotation_evidence(hints, declared_hint(tool, "readOnlyHint"), &mut found);
    dedup(found)
}

/// The label of evidence from an operation selector's enum value, written only when evidence
/// is found.
struct EnumLabel<'a> {
    value: &'a str,
    parameter: &'a str,
}

impl fmt::Display for EnumLabel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "enum value {:?} of parameter {:?}, token",
            self.value, self.parameter
        )
    }
}

/// The distinct capabilities in `evidence`, sorted.
pub fn distinct(evidence: &[Evidence]) -> Vec<Capability> {
    let mut capabilities: Vec<Capability> = evidence.iter().map(|e| e.capability).collect();
    capabilities.sort();
    capabilities.dedup();
    capabilities
}

/// The tokens that stand where a verb stands. A name that starts with a verb (`get_workflow_run`)
/// names its object after it, so later words are nouns (`run`), except after `and`/`or`
/// (`create_or_update_file`). A name that starts with a noun (`repo_delete`, `issue_write`) keeps
/// every token.
fn verb_positions(tokens: &Tokens) -> impl Iterator<Item = &str> + Clone {
    let starts_with_verb =
        !tokens.is_empty() && !VERB_WORDS.capabilities(tokens.word(0)).is_empty();
    (0..tokens.len())
        .filter(move |&i| {
            !starts_with_verb || i == 0 || matches!(tokens.word(i - 1), "and" | "or" | "then")
        })
        .map(|i| tokens.word(i))
}

/// The top-level input properties: name and schema.
fn parameters(tool: &Value) -> impl Iterator<Item = (&str, &Value)> {
    tool.get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| (name.as_str(), schema))
}

/// Whether a parameter, compared without case, is one of `OPERATION_SELECTORS`.
fn is_operation_selector(parameter: &str) -> bool {
    if parameter.is_ascii() {
        OPERATION_SELECTORS
            .iter()
            .any(|selector| parameter.eq_ignore_ascii_case(selector))
    } else {
        // Unicode lowercasing can turn a non-ASCII letter into ASCII (the Kelvin sign into `k`).
        OPERATION_SELECTORS.contains(&parameter.to_lowercase().as_str())
    }
}

fn identifier_evidence<'w>(
    label: &dyn fmt::Display,
    words: impl Iterator<Item = &'w str> + Clone,
    lexicon: &Lexicon,
    out: &mut Vec<Evidence>,
) {
    for word in words.clone() {
        for capability in lexicon.capabilities(word) {
            out.push(Evidence {
                capability: *capability,
                evidence: format!("{label} {word:?}"),
            });
        }
    }
    secret_pairs(label, words, out);
}

/// Two neighbouring words that name a secret (`api key`, `access token`).
fn is_secret_pair(first: &str, second: &str) -> bool {
    SECRET_PAIRS.contains(&first) && matches!(second, "key" | "keys" | "token" | "tokens")
}

/// Consecutive pairs of `words`.
fn pairs<'w>(
    words: impl Iterator<Item = &'w str> + Clone,
) -> impl Iterator<Item = (&'w str, &'w str)> {
    words.clone().zip(words.skip(1))
}

fn secret_pairs<'w>(
    label: &dyn fmt::Display,
    words: impl Iterator<Item = &'w str> + Clone,
    out: &mut Vec<Evidence>,
) {
    for (first, second) in pairs(words) {
        if is_secret_pair(first, second) {
            out.push(Evidence {
                capability: Secrets,
                evidence: format!("{label}s \"{first} {second}\""),
            });
        }
    }
}

fn parameter_evidence(parameter: &str, tokens: &Tokens, out: &mut Vec<Evidence>) {
    let mut push = |capability: Capability| {
        out.push(Evidence {
            capability,
            evidence: format!("parameter {parameter:?}"),
        })
    };
    for (capability, _) in REACH {
        let reaches = tokens.words().any(|word| {
            !PARAMETER_NOISE.contains(&word) && REACH_WORDS.capabilities(word).contains(capability)
        });
        if reaches {
            push(*capability);
        }
    }
    // The whole name, its words joined by `_`, is one of these.
    let spelled = |words: &[&str]| tokens.words().eq(words.iter().copied());
    let executes = [
        &["command"][..],
        &["cmd"],
        &["script"],
        &["shell"],
        &["shell", "command"],
    ];
    if executes.iter().any(|words| spelled(words)) {
        push(Execute);
    }
    if spelled(&["to"]) {
        push(Messaging);
    } else if spelled(&["token"]) {
        push(Secrets);
    }
    if pairs(tokens.words()).any(|(first, second)| is_secret_pair(first, second)) {
        push(Secrets);
    }
}

fn prose_evidence(tokens: &Tokens, out: &mut Vec<Evidence>) {
    for word in tokens.words() {
        for capability in PROSE_WORDS.capabilities(word) {
            out.push(Evidence {
                capability: *capability,
                evidence: format!("description word {word:?}"),
            });
        }
    }
    for (word, next) in pairs(tokens.words()) {
        for (capability, first, second) in PROSE_PAIRS {
            if word == *first && next == *second {
                out.push(Evidence {
                    capability: *capability,
                    evidence: format!("description words \"{first} {second}\""),
                });
            }
        }
    }
    secret_pairs(&"description word", tokens.words(), out);
}

/// The evidence of the fallback `write` of a tool that names no verb and declares no
/// `readOnlyHint`: an assumption from the protocol's default, not something the tool said.
const ASSUMED_WRITE: &str = "no read-only promise (effective readOnlyHint: false)";

impl Evidence {
    /// True for the one kind of evidence that is an assumption, not a reading of the
    /// definition: the fallback `write` of a tool that names no verb and declares no
    /// `readOnlyHint`. The declared risk leaves it out.
    pub fn is_assumed(&self) -> bool {
        self.evidence == ASSUMED_WRITE
    }

    /// True when the capability was inferred from words of the tool's description (prose),
    /// the weakest kind of evidence: a `capability_added` resting only on it says so.
    pub fn is_from_description_words(&self) -> bool {
        self.evidence.starts_with("description word")
    }
}

/// The distinct capabilities of `evidence` that rest on more than an assumption, sorted.
pub fn declared(evidence: &[Evidence]) -> Vec<Capability> {
    let mut out: Vec<Capability> = evidence
        .iter()
        .filter(|e| !e.is_assumed())
        .map(|e| e.capability)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A tool whose words name no verb falls back on its effective read-only hint, so every tool
/// gets at least one capability. `read_only_declared` says whether that hint was declared (an
/// explicit `false` is a claim; an absent one is the default assumed).
fn annotation_evidence(
    hints: &EffectiveHints,
    read_only_declared: Option<bool>,
    out: &mut Vec<Evidence>,
) {
    if out
        .iter()
        .any(|e| matches!(e.capability, Read | Write | Delete | Execute))
    {
        return;
    }
    out.push(if hints.read_only {
        Evidence {
            capability: Read,
            evidence: "annotation readOnlyHint: true".to_string(),
        }
    } else if read_only_declared == Some(false) {
        Evidence {
            capability: Write,
            evidence: "annotation readOnlyHint: false".to_string(),
        }
    } else {
        Evidence {
            capability: Write,
            evidence: ASSUMED_WRITE.to_string(),
        }
    });
}

fn dedup(found: Vec<Evidence>) -> Vec<Evidence> {
    let mut out: Vec<Evidence> = Vec::with_capacity(found.len());
    for evidence in found {
        if !out.contains(&evidence) {
            out.push(evidence);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(tool: Value) -> Vec<Capability> {
        distinct(&infer(&tool, &EffectiveHints::of(&tool)))
    }

    fn named(name: &str) -> Vec<Capability> {
        caps(json!({"name": name, "annotations": {"readOnlyHint": false}}))
    }

    #[test]
    fn verbs_from_every_spelling_of_a_name() {
        let cases: &[(&str, &[Capability])] = &[
            ("delete_repo", &[Delete]),
            ("deleteRepo", &[Delete]),
            ("repo-delete", &[Delete]),
            ("DeleteRepository", &[Delete]),
            ("undelete_history", &[Write]),
            ("list_deleted_items", &[Read]),
            ("get_issue", &[Read]),
            ("run_command", &[Execute]),
            ("createIssue", &[Write]),
            ("remove_sub_issue", &[Delete]),
            ("rerun_failed_jobs", &[Execute]),
            ("send_email", &[Write, Messaging]),
            ("download_file", &[Read, Network, Filesystem]),
            ("create_payment_intent", &[Write, Payment]),
            ("get_api_key", &[Read, Secrets]),
            ("list_page_tokens", &[Read]),
            ("get_workflow_run", &[Read]),
            ("create_or_update_file", &[Write]),
            ("search_and_replace", &[Read, Write]),
            ("mark_all_notifications_read", &[Write]),
            ("actions_run_trigger", &[Execute]),
            ("repo_delete", &[Delete]),
        ];
        for (name, expected) in cases {
            let got = named(name);
            for capability in *expected {
                assert!(
                    got.contains(capability),
                    "{name}: expected {capability:?} in {got:?}"
                );
            }
            let verbs = [Read, Write, Delete, Execute];
            for verb in verbs.iter().filter(|v| !expected.contains(v)) {
                assert!(
                    !got.contains(verb),
                    "{name}: unexpected {verb:?} in {got:?}"
                );
            }
        }
    }

    #[test]
    fn reach_from_parameter_names() {
        let tool = json!({
            "name": "do_thing",
            "inputSchema": {"type": "object", "properties": {
                "file_path": {}, "callbackUrl": {}, "amount": {}, "recipients": {}, "apiKey": {}, "command": {},
                "page_token": {}
            }}
        });
        let evidence = infer(&tool, &EffectiveHints::of(&tool));
        let has = |c: Capability, e: &str| {
            evidence
                .iter()
                .any(|x| x.capability == c && x.evidence == e)
        };
        assert!(has(Filesystem, "parameter \"file_path\""));
        assert!(has(Network, "parameter \"callbackUrl\""));
        assert!(has(Payment, "parameter \"amount\""));
        assert!(has(Messaging, "parameter \"recipients\""));
        assert!(has(Secrets, "parameter \"apiKey\""));
        assert!(has(Execute, "parameter \"command\""));
        assert!(
            !evidence
                .iter()
                .any(|x| x.evidence == "parameter \"page_token\"")
        );
    }

    #[test]
    fn operation_enum_values_count_as_verbs() {
        let tool = json!({
            "name": "label_write",
            "inputSchema": {"type": "object", "properties": {
                "method": {"type": "string", "enum": ["create", "update", "delete"]},
                "state": {"type": "string", "enum": ["deleted", "remove"]}
            }}
        });
        let evidence = infer(&tool, &EffectiveHints::of(&tool));
        assert!(
            evidence.iter().any(|e| e.capability == Delete
                && e.evidence.contains("\"delete\" of parameter \"method\""))
        );
        assert!(
            !evidence
                .iter()
                .any(|e| e.evidence.contains("parameter \"state\""))
        );
    }

    #[test]
    fn falls_back_on_annotations_so_every_tool_has_a_capability() {
        assert_eq!(
            caps(json!({"name": "frobnicate_widget", "annotations": {"readOnlyHint": true}})),
            [Read]
        );
        assert_eq!(caps(json!({"name": "frobnicate"})), [Write]);
        let evidence = infer(
            &json!({"name": "x"}),
            &EffectiveHints::of(&json!({"name": "x"})),
        );
        assert_eq!(
            evidence[0].evidence,
            "no read-only promise (effective readOnlyHint: false)"
        );
    }

    #[test]
    fn evidence_says_where_each_word_came_from() {
        let tool = json!({
            "name": "createApiKey",
            "title": "Send mail",
            "description": "Stores an API token behind a webhook; see the file system.",
            "inputSchema": {"type": "object", "properties": {
                "Method": {"type": "string", "enum": ["delete_access_token"]},
                "shell_command": {"type": "string"},
                "to": {"type": "string"}
            }}
        });
        let evidence: Vec<String> = infer(&tool, &EffectiveHints::of(&tool))
            .into_iter()
            .map(|e| e.evidence)
            .collect();
        let expected = [
            "name token \"create\"",
            "name tokens \"api key\"",
            "title word \"send\"",
            "title word \"mail\"",
            "enum value \"delete_access_token\" of parameter \"Method\", token \"delete\"",
            "parameter \"shell_command\"",
            "parameter \"to\"",
            "description word \"webhook\"",
            "description words \"file system\"",
            "description words \"api token\"",
        ];
        for line in expected {
            assert!(
                evidence.iter().any(|e| e == line),
                "{line:?} missing in {evidence:?}"
            );
        }
        // After a leading verb, later words of an enum value are its object, not verbs.
        assert!(
            !evidence
                .iter()
                .any(|e| e.contains("tokens \"access token\""))
        );
    }

    #[test]
    fn operation_selectors_are_matched_without_case() {
        let cases = [
            ("method", true),
            ("ACTION", true),
            ("Operations", true),
            ("op", true),
            ("opcode", false),
            ("méthod", false),
            ("", false),
        ];
        for (parameter, expected) in cases {
            assert_eq!(is_operation_selector(parameter), expected, "{parameter:?}");
        }
    }

    #[test]
    fn description_gives_reach_but_not_verbs() {
        let got = caps(
            json!({"name": "thing", "description": "Deletes everything. Posts to a webhook URL, reads the file system."}),
        );
        assert!(got.contains(&Network));
        assert!(got.contains(&Filesystem));
        assert!(!got.contains(&Delete));
    }
}
