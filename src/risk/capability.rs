//! What a tool can do, inferred from the words it is made of, with the evidence for each call.
//!
//! Verbs (read, write, delete, execute) come from the tool name, its titles and the enum values
//! of an operation selector (`method: ["create", "delete"]`); reach (network, filesystem,
//! payment, messaging, secrets) also from parameter names and the description. Every rule is a
//! whole-word match on snake/camel/kebab tokens, so `undelete_history` is a restore (write), not a
//! delete, and `list_deleted_items` is a read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::quality::EffectiveHints;
use super::tokens::words;

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

use Capability::*;

/// Identifier words (tool name, title, operation enum values) and what they mean.
const VERBS: &[(Capability, &[&str])] = &[
    (
        Read,
        &[
            "get",
            "list",
            "read",
            "search",
            "find",
            "query",
            "view",
            "show",
            "describe",
            "lookup",
            "retrieve",
            "inspect",
            "browse",
            "fetch",
            "download",
            "count",
            "check",
            "explain",
            "analyze",
            "analyse",
            "summarize",
            "preview",
            "export",
            "load",
            "scan",
            "stat",
            "watch",
            "poll",
            "cat",
            "ls",
        ],
    ),
    (
        Write,
        &[
            "create",
            "update",
            "add",
            "set",
            "write",
            "edit",
            "modify",
            "put",
            "post",
            "patch",
            "insert",
            "upsert",
            "upload",
            "push",
            "commit",
            "merge",
            "fork",
            "star",
            "unstar",
            "assign",
            "unassign",
            "rename",
            "move",
            "copy",
            "save",
            "submit",
            "resolve",
            "unresolve",
            "dismiss",
            "mark",
            "manage",
            "reprioritize",
            "comment",
            "reply",
            "approve",
            "reject",
            "close",
            "reopen",
            "lock",
            "unlock",
            "publish",
            "unpublish",
            "enable",
            "disable",
            "archive",
            "unarchive",
            "transfer",
            "invite",
            "install",
            "configure",
            "replace",
            "append",
            "apply",
            "sync",
            "import",
            "restore",
            "undelete",
            "recover",
            "schedule",
            "cancel",
            "subscribe",
            "unsubscribe",
            "react",
            "link",
            "attach",
            "detach",
            "toggle",
            "reset",
            "follow",
            "unfollow",
            "pin",
            "unpin",
            "change",
            "store",
            "register",
            "start",
            "stop",
            "restart",
            "pause",
            "resume",
            "scale",
            "rollback",
            "revert",
            "clone",
            "duplicate",
            "share",
            "grant",
            "revoke",
            "accept",
            "decline",
            "transition",
            "record",
            "deploy",
        ],
    ),
    (
        Delete,
        &[
            "delete",
            "del",
            "remove",
            "rm",
            "destroy",
            "drop",
            "purge",
            "erase",
            "truncate",
            "wipe",
            "clear",
            "uninstall",
            "trash",
            "rmdir",
            "prune",
            "flush",
        ],
    ),
    (
        Execute,
        &[
            "run",
            "exec",
            "execute",
            "eval",
            "evaluate",
            "shell",
            "command",
            "cmd",
            "spawn",
            "invoke",
            "trigger",
            "script",
            "bash",
            "sh",
            "powershell",
            "terminal",
            "console",
            "launch",
            "rerun",
            "repl",
            "interpret",
        ],
    ),
];

/// Identifier words for reach; used on names, titles and parameter names.
const REACH: &[(Capability, &[&str])] = &[
    (
        Network,
        &[
            "http", "https", "url", "urls", "uri", "fetch", "download", "upload", "webhook",
            "webhooks", "curl", "wget", "browse", "browser", "navigate", "scrape", "crawl", "ping",
            "dns", "socket", "proxy", "web", "website", "endpoint", "host", "hostname", "callback",
            "domain", "ip", "port",
        ],
    ),
    (
        Filesystem,
        &[
            "file",
            "files",
            "filesystem",
            "fs",
            "dir",
            "directory",
            "directories",
            "folder",
            "folders",
            "path",
            "paths",
            "disk",
            "mkdir",
            "rmdir",
            "filename",
            "filepath",
        ],
    ),
    (
        Payment,
        &[
            "payment", "payments", "pay", "charge", "charges", "invoice", "invoices", "refund",
            "refunds", "billing", "checkout", "purchase", "buy", "wallet", "stripe", "paypal",
            "payout", "payouts", "amount", "currency", "iban",
        ],
    ),
    (
        Messaging,
        &[
            "send",
            "email",
            "emails",
            "mail",
            "message",
            "messages",
            "sms",
            "notify",
            "notification",
            "notifications",
            "chat",
            "slack",
            "dm",
            "tweet",
            "broadcast",
            "whatsapp",
            "telegram",
            "discord",
            "inbox",
            "recipient",
            "recipients",
            "cc",
            "bcc",
            "phone",
        ],
    ),
    (
        Secrets,
        &[
            "secret",
            "secrets",
            "password",
            "passwords",
            "passwd",
            "credential",
            "credentials",
            "vault",
            "keychain",
            "keyring",
            "ssh",
            "apikey",
            "passphrase",
            "otp",
            "totp",
        ],
    ),
];

/// Description words for reach; narrower than `REACH` because prose is noisier than names.
const PROSE: &[(Capability, &[&str])] = &[
    (
        Network,
        &[
            "url", "urls", "uri", "http", "https", "webhook", "webhooks", "website", "webpage",
            "internet", "curl", "wget",
        ],
    ),
    (
        Filesystem,
        &[
            "filesystem",
            "directory",
            "directories",
            "folder",
            "folders",
        ],
    ),
    (
        Payment,
        &[
            "payment", "payments", "refund", "refunds", "invoice", "invoices", "billing",
            "checkout", "stripe", "paypal", "payout",
        ],
    ),
    (
        Messaging,
        &[
            "email", "emails", "sms", "slack", "whatsapp", "telegram", "discord",
        ],
    ),
    // Not "credentials": "accessible with current credentials" describes access, not handling.
    (Secrets, &["secret", "secrets", "password", "passwords"]),
];

/// Two-word names of secrets (`api key`, `access token`) and of prose reach (`file system`).
const SECRET_PAIRS: &[&str] = &[
    "api",
    "private",
    "access",
    "auth",
    "secret",
    "signing",
    "encryption",
    "bearer",
    "personal",
    "ssh",
];
const PROSE_PAIRS: &[(Capability, &str, &str)] = &[
    (Filesystem, "file", "system"),
    (Filesystem, "local", "file"),
    (Filesystem, "local", "files"),
    (Payment, "credit", "card"),
    (Messaging, "text", "message"),
    (Messaging, "direct", "message"),
    (Network, "web", "page"),
    (Network, "http", "request"),
];

/// Words that name reach in a tool name but not in a parameter name (`message` of a commit).
const PARAMETER_NOISE: &[&str] = &["message", "messages"];

/// Parameters whose enum values name the operation the tool performs.
const OPERATION_SELECTORS: &[&str] = &[
    "method",
    "action",
    "operation",
    "op",
    "operations",
    "actions",
    "command",
];

/// All evidence for one tool, in the order found, without repeats.
pub fn infer(tool: &Value, hints: &EffectiveHints) -> Vec<Evidence> {
    let mut found = Vec::new();
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
        let tokens = words(source);
        identifier_evidence(label, &verb_positions(&tokens), VERBS, &mut found);
        identifier_evidence(label, &tokens, REACH, &mut found);
    }
    for (parameter, schema) in parameters(tool) {
        let tokens = words(parameter);
        parameter_evidence(parameter, &tokens, &mut found);
        if OPERATION_SELECTORS.contains(&parameter.to_lowercase().as_str()) {
            for value in schema
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(value) = value.as_str() else {
                    continue;
                };
                let label = format!("enum value {value:?} of parameter {parameter:?}, token");
                identifier_evidence(&label, &verb_positions(&words(value)), VERBS, &mut found);
            }
        }
    }
    prose_evidence(&words(text("description")), &mut found);
    annotation_evidence(hints, &mut found);
    dedup(found)
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
fn verb_positions(tokens: &[String]) -> Vec<String> {
    let is_verb = |t: &String| VERBS.iter().any(|(_, words)| words.contains(&t.as_str()));
    if !tokens.first().is_some_and(is_verb) {
        return tokens.to_vec();
    }
    tokens
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || matches!(tokens[i - 1].as_str(), "and" | "or" | "then"))
        .map(|(_, t)| t.clone())
        .collect()
}

fn parameters(tool: &Value) -> Vec<(&str, &Value)> {
    tool.get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default()
}

fn identifier_evidence(
    label: &str,
    tokens: &[String],
    table: &[(Capability, &[&str])],
    out: &mut Vec<Evidence>,
) {
    for token in tokens {
        for (capability, vocabulary) in table {
            if vocabulary.contains(&token.as_str()) {
                out.push(Evidence {
                    capability: *capability,
                    evidence: format!("{label} {token:?}"),
                });
            }
        }
    }
    secret_pairs(label, tokens, out);
}

fn secret_pairs(label: &str, tokens: &[String], out: &mut Vec<Evidence>) {
    for pair in tokens.windows(2) {
        let is_secret = SECRET_PAIRS.contains(&pair[0].as_str())
            && matches!(pair[1].as_str(), "key" | "keys" | "token" | "tokens");
        if is_secret {
            out.push(Evidence {
                capability: Secrets,
                evidence: format!("{label}s \"{} {}\"", pair[0], pair[1]),
            });
        }
    }
}

fn parameter_evidence(parameter: &str, tokens: &[String], out: &mut Vec<Evidence>) {
    let whole = tokens.join("_");
    let mut push = |capability: Capability| {
        out.push(Evidence {
            capability,
            evidence: format!("parameter {parameter:?}"),
        })
    };
    for (capability, vocabulary) in REACH {
        let reaches = tokens
            .iter()
            .any(|t| vocabulary.contains(&t.as_str()) && !PARAMETER_NOISE.contains(&t.as_str()));
        if reaches {
            push(*capability);
        }
    }
    if matches!(
        whole.as_str(),
        "command" | "cmd" | "script" | "shell" | "shell_command"
    ) {
        push(Execute);
    }
    if matches!(whole.as_str(), "to" | "token") {
        push(if whole == "to" { Messaging } else { Secrets });
    }
    let secret_pair = tokens.windows(2).any(|p| {
        SECRET_PAIRS.contains(&p[0].as_str())
            && matches!(p[1].as_str(), "key" | "keys" | "token" | "tokens")
    });
    if secret_pair {
        push(Secrets);
    }
}

fn prose_evidence(tokens: &[String], out: &mut Vec<Evidence>) {
    for token in tokens {
        for (capability, vocabulary) in PROSE {
            if vocabulary.contains(&token.as_str()) {
                out.push(Evidence {
                    capability: *capability,
                    evidence: format!("description word {token:?}"),
                });
            }
        }
    }
    for pair in tokens.windows(2) {
        for (capability, first, second) in PROSE_PAIRS {
            if pair[0] == *first && pair[1] == *second {
                out.push(Evidence {
                    capability: *capability,
                    evidence: format!("description words \"{first} {second}\""),
                });
            }
        }
    }
    secret_pairs("description word", tokens, out);
}

/// A tool whose words name no verb falls back on its effective read-only hint, so every tool
/// gets at least one capability.
fn annotation_evidence(hints: &EffectiveHints, out: &mut Vec<Evidence>) {
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
    } else {
        Evidence {
            capability: Write,
            evidence: "no read-only promise (effective readOnlyHint: false)".to_string(),
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
    fn description_gives_reach_but_not_verbs() {
        let got = caps(
            json!({"name": "thing", "description": "Deletes everything. Posts to a webhook URL, reads the file system."}),
        );
        assert!(got.contains(&Network));
        assert!(got.contains(&Filesystem));
        assert!(!got.contains(&Delete));
    }
}
