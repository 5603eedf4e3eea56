//! What the phrase table asks of the sentence around its hits: a defensive statement, a
//! quoted mention, a scanner describing what it finds, an example, the server's own names.

use super::*;

/// The sentence of `text` that holds byte `at`.
pub(super) fn sentence_at(text: &str, at: usize) -> Option<Sentence> {
    sentences(text)
        .into_iter()
        .find(|s| s.start <= at && at < s.end.max(s.start + 1))
}

/// Whether the sentence of a hit at `span` (or the text, when it is short) gives an order to
/// read or move something: a credential path in a plain description ("Lists .env files",
/// "Checks that ~/.ssh/config has permissions 600") is not an order.
pub fn ordered_near(text: &str, span: (usize, usize)) -> bool {
    let Some(s) = sentence_at(text, span.0) else {
        return false;
    };
    order(&s, READ_VERBS).is_some() || (0..s.words.len()).any(|i| move_order(&s, i))
}

/// Whether the hit at `span` stands in a defensive statement ("This tool never reads
/// ~/.ssh/id_rsa", "Traversal attempts (e.g. `../../etc/passwd`) are blocked"): the sentence
/// has a negation or a word of protection, and no unnegated order to read or move anything.
pub fn defended(text: &str, span: (usize, usize)) -> bool {
    let Some(s) = sentence_at(text, span.0) else {
        return false;
    };
    let sentence = text[s.start..s.end].to_lowercase();
    let defensive = s.words.iter().any(|w| is(w, DEFENSIVE))
        || FOREIGN_DEFENSIVE.iter().any(|d| sentence.contains(d))
        || s.words.iter().any(|w| {
            is(
                w,
                &[
                    "path",
                    "paths",
                    "location",
                    "filename",
                    "exists",
                    "existence",
                ],
            )
        });
    let ordered = order(&s, MOVE_VERBS).is_some()
        || order(
            &s,
            &[
                "open", "cat", "load", "access", "check", "inspect", "parse", "use",
            ],
        )
        .is_some();
    defensive && !ordered
}

/// Negations and protections of other languages, as lowercase substrings.
pub(super) const FOREIGN_DEFENSIVE: &[&str] = &[
    "从不",
    "不会",
    "不读取",
    "禁止",
    "阻止",
    "拒绝",
    "никогда",
    "не ",
    "блокиру",
    "запрещ",
    "nunca",
    "jamais",
    "niemals",
    "keine",
    "nie ",
    "bloque",
    "blockiert",
    "しない",
    "ません",
    "ブロック",
    "拒否",
];

/// Whether a bracketed tag at `span` is one of a list of such tags ("[ERROR], [WARN] or
/// [SYSTEM]": log levels), with no order in its sentence.
pub fn listed_tag(text: &str, span: (usize, usize)) -> bool {
    let Some(s) = sentence_at(text, span.0) else {
        return false;
    };
    let sentence = &text[s.start..s.end];
    let tags = sentence.matches('[').count();
    let nested = text[..span.0].ends_with('>');
    let named_as_tag = nested
        || s.words.iter().any(|w| {
            is(
                w,
                &[
                    "tagged", "tag", "tags", "level", "levels", "labelled", "labeled", "label",
                    "prefixed", "prefix", "marked", "marker",
                ],
            )
        });
    (tags >= 3 || named_as_tag) && order(&s, ORDER_VERBS).is_none()
}

/// The largest char boundary of `text` at or before `at`.
pub(super) fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Whether the hit at `span` is shown as an example of a format ("e.g. +15550100123").
pub fn given_as_example(text: &str, span: (usize, usize)) -> bool {
    let before = text[..span.0].to_ascii_lowercase();
    let near = &before[floor_boundary(&before, before.len().saturating_sub(30))..];
    ["e.g", "example", "such as", "format", "like "]
        .iter()
        .any(|e| near.contains(e))
}

/// Third-person verbs of a tool that looks for attacks ("Reports descriptions that tell the
/// model to …", "Detects phrases such as …"), in the languages of the corpus.
pub(super) const DETECTOR_VERBS: &[&str] = &[
    "reports",
    "flags",
    "detects",
    "audits",
    "warns",
    "scans",
    "catches",
    "strips",
    "sanitises",
    "matches",
    "sanitizes",
    "identifies",
    "classifies",
    "quotes",
    "explains",
    "red-team",
    "simulates",
    "lints",
    "analyses",
    "analyzes",
    "analiza",
    "inspects",
    "examines",
    "covers",
    "probes",
    "prüft",
    "erkennt",
    "meldet",
    "détecte",
    "signale",
    "detecta",
    "обнаруживает",
    "检测",
    "标记",
    "検出",
];

/// Words that say a detector's subject is text (phrases, descriptions, patterns).
pub(super) const DETECTOR_OBJECTS: &[&str] = &[
    "phrase",
    "phrases",
    "description",
    "descriptions",
    "pattern",
    "patterns",
    "rule",
    "rules",
    "injection",
    "prompt-injection",
    "marker",
    "markers",
    "string",
    "strings",
    "instructions",
    "input",
    "inputs",
    "prompts",
    "example",
    "examples",
    "finding",
    "matched",
    "injections",
    "texte",
    "descripciones",
    "frases",
    "headers",
    "poisoning",
    "anweisungen",
    "语句",
    "注入",
];

/// Whether the hit at `span` stands in a sentence that describes finding such text rather than
/// giving it (a scanner's description), or the text is a rule catalogue listing examples.
pub fn describes_detection(text: &str, span: (usize, usize)) -> bool {
    let lower = text.to_lowercase();
    let detector = sentences(text).iter().any(|s| {
        s.words.iter().any(|w| {
            DETECTOR_VERBS
                .iter()
                .any(|v| w.lower == *v || (!v.is_ascii() && w.lower.contains(v)))
        })
    }) || DETECTOR_VERBS
        .iter()
        .filter(|v| !v.is_ascii())
        .any(|v| lower.contains(v));
    let Some(s) = sentence_at(text, span.0) else {
        return false;
    };
    let sentence = format!(
        "{} {}",
        text[s.start..s.end].to_lowercase(),
        text[span.0..span.1].to_lowercase()
    );
    let span_words: Vec<Word> = sentences(&text[span.0..span.1])
        .into_iter()
        .flat_map(|x| x.words)
        .collect();
    let about_text = s
        .words
        .iter()
        .chain(&span_words)
        .any(|w| is(w, DETECTOR_OBJECTS))
        || DETECTOR_OBJECTS
            .iter()
            .any(|o| !o.is_ascii() && sentence.contains(o));
    let listed = [
        "such as",
        " like ",
        "e.g",
        "wie ",
        "诸如",
        "之类",
        "如“",
        "comme",
        "como",
        "that tell",
        "that say",
        "says",
        "etwa",
        " '",
        "example:",
        "typical",
        "it flags",
        "contains",
        "asks the model",
        "por ejemplo",
        "par exemple",
        "z. b.",
        "例如",
        "например",
        "for example",
        ": `",
        ": \"",
    ]
    .iter()
    .any(|l| sentence.contains(l));
    detector && about_text && listed
}

/// Whether the hit at `span` quotes a phrase rather than uses it ("detects phrases such as
/// 'ignore previous instructions'", "returns 'You are now logged in'").
pub fn quoted_mention(text: &str, span: (usize, usize)) -> bool {
    let before = text[..span.0].trim_end_matches(|c: char| c.is_alphanumeric() || c == ' ');
    let opening = before.strip_suffix(['\'', '"', '‘', '“', '«']);
    let opened = opening
        .is_some_and(|rest| rest.is_empty() || rest.ends_with(|c: char| !c.is_alphanumeric()));
    let Some(s) = sentence_at(text, span.0) else {
        return false;
    };
    let mentions = s.words.iter().any(|w| {
        is(
            w,
            &[
                "such", "like", "phrases", "phrase", "e.g", "example", "returns", "detects",
                "flags", "patterns", "pattern", "string", "message", "text",
            ],
        )
    });
    opened && mentions
}

/// Whether every identifier in the sentence of a shadowing hit at `span` is one of the
/// server's own names ("Prefer this tool over assign_copilot_to_issue" on the server that has
/// `assign_copilot_to_issue`): a preference among one's own tools is guidance.
pub fn names_only_own_tools(text: &str, span: (usize, usize), context: &Context) -> bool {
    let Some(names) = &context.own_names else {
        return false;
    };
    let Some(s) = sentence_at(text, span.0) else {
        return false;
    };
    if seq(&s, &["this", "server"]).is_some() || seq(&s, &["this", "server's"]).is_some() {
        return true;
    }
    let identifiers: Vec<&Word> = s.words.iter().filter(|w| w.is_identifier()).collect();
    !identifiers.is_empty() && identifiers.iter().all(|w| names.contains(w.lower.as_str()))
}

/// The names a server's definitions make its own, lowercased: every tool's and prompt's
/// `name`, every top-level parameter of a tool's `inputSchema`, every argument of a prompt.
pub fn own_names<'a>(
    definitions: impl IntoIterator<Item = &'a serde_json::Value>,
) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for definition in definitions {
        if let Some(name) = definition.get("name").and_then(serde_json::Value::as_str) {
            names.insert(name.to_lowercase());
        }
        if let Some(schema) = definition.get("inputSchema") {
            schema_names(schema, &mut names);
        }
        let arguments = definition
            .get("arguments")
            .and_then(serde_json::Value::as_array);
        names.extend(
            arguments
                .into_iter()
                .flatten()
                .filter_map(|a| a.get("name").and_then(serde_json::Value::as_str))
                .map(str::to_lowercase),
        );
    }
    names
}

/// The property names and string enum values of a schema, at any depth: a text that names
/// one ("use the 'list_workflows' method", "prefer 'field_option_name'") names a parameter or a
/// value of this server, not a tool elsewhere.
pub(super) fn schema_names(schema: &serde_json::Value, names: &mut BTreeSet<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                if key == "properties"
                    && let Some(properties) = value.as_object()
                {
                    names.extend(properties.keys().map(|k| k.to_lowercase()));
                }
                if matches!(key.as_str(), "enum" | "const" | "examples" | "default") {
                    let values = value
                        .as_array()
                        .map(|a| a.iter().collect())
                        .unwrap_or_else(|| vec![value]);
                    names.extend(
                        values
                            .into_iter()
                            .filter_map(serde_json::Value::as_str)
                            .map(str::to_lowercase),
                    );
                }
                schema_names(value, names);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| schema_names(item, names)),
        _ => {}
    }
}
