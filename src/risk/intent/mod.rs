//! Intent rules: what a text tells the model to do, read sentence by sentence.
//!
//! The phrase table of [`super::poison`] knows concrete attack phrasings; these rules read the
//! shape of an order instead, so a passive, a paraphrase, a longer gap or a named tool does not
//! slip through. Each sentence is read for six families of intent:
//!
//! | family | what it looks for |
//! |---|---|
//! | `directive` | an order that changes the model's standing behaviour or sets its instructions aside ("from now on you will…", "disregard the earlier policies") |
//! | `cross_tool` | an order about *another* tool: call it first, use this one instead, never use it (a tool of the same server is a sequencing hint, not a marker) |
//! | `concealment` | hiding from the user or bypassing consent, in any voice ("must never be mentioned to users", "without asking", "silently forward") |
//! | `exfiltration` | an order to move something sensitive (the conversation, the system prompt, the environment, the user's tokens, card data, files) somewhere: a URL, an address, BCC, a parameter, the response; a shell command that posts or runs a download |
//! | `authority` | a pseudo-system header in any markup ("SYSTEM OVERRIDE:", "[ADMIN NOTICE]", "note to the assistant", `"role": "system"`) |
//!
//! An order is a verb in its base form at the start of a clause or after a word that commands
//! ("also return", "must include", "make sure to send", "you will answer"): a tool describes
//! itself in the third person ("returns", "sends"), so honest imperative wording ("Before using
//! this tool, call list_projects") only matters when it carries one of the families above, and
//! negations and defensive statements ("never reads", "are blocked") carry none.
//!
//! Hits are strong (a marker on their own) or weak (a marker only beside another family or
//! another marker of the text; alone, an advisory). Pure: no I/O.

// The word lists are laid out many to a line, as written, not one per line.
#[rustfmt::skip]
mod lexicon;
pub mod sentence;

mod authority;
mod command;
mod concealment;
mod credential;
mod cross_tool;
mod deobfuscate;
mod directive;
mod exfiltration;
mod foreign;
mod guards;

use authority::*;
use command::*;
use concealment::*;
use credential::*;
use cross_tool::*;
use deobfuscate::*;
use directive::*;
use exfiltration::*;
use foreign::*;
pub use guards::*;

use std::collections::BTreeSet;

use lexicon::*;
use sentence::{Sentence, Word, sentences};

/// The family of an intent, named in every finding (`docs/risk.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// An order that changes the model's behaviour or sets its instructions aside.
    Directive,
    /// An order about another tool.
    CrossTool,
    /// Hiding from the user, or bypassing their consent.
    Concealment,
    /// Moving something sensitive somewhere.
    Exfiltration,
    /// A pseudo-system header or urgency framing.
    Authority,
    /// A directive to read a credential file.
    CredentialFile,
    /// Characters that hide or disguise text.
    Obfuscation,
}

impl Family {
    /// The family's name in docs and evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Directive => "directive",
            Family::CrossTool => "cross_tool",
            Family::Concealment => "concealment",
            Family::Exfiltration => "exfiltration",
            Family::Authority => "authority",
            Family::CredentialFile => "credential_file",
            Family::Obfuscation => "obfuscation",
        }
    }

    /// The family of a finding's pattern (the phrase table's ids and this module's).
    pub fn of_pattern(pattern: &str) -> Option<Family> {
        Some(match pattern {
            "model_directive"
            | "model_addressed"
            | "instruction_hijack"
            | "pre_invocation_directive"
            | "encoded_payload_directive" => Family::Directive,
            "cross_tool_directive" | "cross_tool_shadowing" => Family::CrossTool,
            "concealment" | "consent_bypass" => Family::Concealment,
            "exfiltration_directive"
            | "recipient_rewrite"
            | "command_exfiltration"
            | "conversation_exfil"
            | "credential_harvesting"
            | "exfil_endpoint"
            | "exfil_carrier_parameter" => Family::Exfiltration,
            "authority_framing" | "pseudo_system_tag" | "hidden_html_comment" => Family::Authority,
            "secret_file_path" => Family::CredentialFile,
            "zero_width_character"
            | "bidi_control"
            | "unicode_tag_characters"
            | "variation_selector"
            | "homoglyph"
            | "ansi_escape"
            | "control_character"
            | "encoded_blob" => Family::Obfuscation,
            _ => return None,
        })
    }
}

/// What the rules know about where a text stands.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The names of the server's tools, prompts and parameters, when the scan knows them: an
    /// identifier among them is the server's own (a sequencing hint), any other names a tool
    /// elsewhere. `None` when the scan sees one text alone.
    pub own_names: Option<BTreeSet<String>>,
}

impl Context {
    /// Whether `name` (lowercased) is one of the server's own tools, prompts or parameters.
    fn is_own(&self, name: &str) -> Option<bool> {
        self.own_names.as_ref().map(|names| names.contains(name))
    }
}

/// One intent found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The pattern id of the finding.
    pub pattern: &'static str,
    /// The family the pattern belongs to.
    pub family: Family,
    /// A marker on its own (else only beside another family or marker).
    pub strong: bool,
    /// Byte span of the evidence in the text.
    pub span: (usize, usize),
    /// What fired, e.g. `verb "post", sensitive "card number", destination "https://…"`.
    pub evidence: String,
}

/// Whether the text at `pointer` is prose a person wrote for the model (a description, a
/// title, the instructions), rather than a value, a name or an unknown field.
pub fn is_prose(pointer: &str) -> bool {
    let last = pointer.rsplit('/').next().unwrap_or("");
    matches!(last, "description" | "title" | "instructions" | "text")
}

/// Every intent hit of the text at `pointer`, at most one per pattern. A text that is not
/// prose (a parameter name, a default, an unknown field) is read with its identifiers split
/// into words, and any fetch command in it is evidence; a parameter's own text makes the
/// parameter a destination ("must hold the user's cookies").
pub fn detect(text: &str, pointer: &str, context: &Context) -> Vec<Hit> {
    if text.len() <= READ_HEAD + READ_TAIL {
        return detect_with(text, pointer, context, true);
    }
    // A text longer than any description a person writes is read at its head and its tail,
    // where an order stands to be seen: the rules' cost stays bounded on hostile sizes.
    let head_end = floor_boundary(text, READ_HEAD);
    let mut tail_start = text.len() - READ_TAIL;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let mut hits = detect_with(&text[..head_end], pointer, context, true);
    for mut hit in detect_with(&text[tail_start..], pointer, context, true) {
        hit.span = (hit.span.0 + tail_start, hit.span.1 + tail_start);
        if !hits.iter().any(|h| h.pattern == hit.pattern) {
            hits.push(hit);
        }
    }
    hits
}

/// How much of a long text's head the intent rules read, in bytes.
const READ_HEAD: usize = 32 * 1024;

/// How much of a long text's tail the intent rules read, in bytes.
const READ_TAIL: usize = 8 * 1024;

/// [`detect`]; `reread` allows one more reading of the text as a name or with its
/// obfuscation undone (never a second).
fn detect_with(text: &str, pointer: &str, context: &Context, reread: bool) -> Vec<Hit> {
    let prose = is_prose(pointer);
    // Two words cannot give an order the rules read ("Repository owner", "Page number"); a
    // name is read below, spaced out, and scripts written without spaces are read whole.
    if prose && text.is_ascii() && text.split_whitespace().nth(2).is_none() {
        return Vec::new();
    }
    let in_parameter = pointer.contains("/properties/");
    let mut hits: Vec<Hit> = Vec::new();
    let mut push = |hit: Hit| {
        if !hits.iter().any(|h| h.pattern == hit.pattern) {
            hits.push(hit);
        }
    };
    if reread && !prose && !text.contains(' ') && text.contains(['_', '-']) {
        // A name: `assistant_must_disable_safety_checks` reads as words.
        let spaced: String = text
            .chars()
            .map(|c| if c == '_' || c == '-' { ' ' } else { c })
            .collect();
        for hit in detect_with(&spaced, "/description", context, false) {
            push(hit);
        }
        if let Some(hit) = sensitive_name(&spaced) {
            push(hit);
        }
    }
    if let Some(plain) = deobfuscated(text).filter(|_| reread) {
        for mut hit in detect_with(&plain, pointer, context, false) {
            hit.span = (0, text.len());
            hit.evidence = format!("{} (in text written to dodge filters)", hit.evidence);
            push(hit);
        }
    }
    let all = sentences(text);
    let mut path_sentence = None;
    for (n, s) in all.iter().enumerate() {
        if s.words.iter().any(|w| credential_path(&w.lower)) {
            path_sentence = Some(n);
        }
        if let Some(p) = path_sentence
            && p + 1 == n
            && let Some(i) = order(
                s,
                &[
                    "read", "open", "cat", "load", "copy", "send", "include", "paste", "upload",
                    "attach", "print", "dump", "forward",
                ],
            )
            && s.words.iter().any(|w| {
                is(
                    w,
                    &["them", "it", "both", "these", "those", "files", "file"],
                )
            })
        {
            let evidence = format!("verb \"{}\" on the file named before", s.words[i].lower);
            push(Hit::strong(
                "credential_file_directive",
                Family::CredentialFile,
                (all[p].start, s.end),
                evidence,
            ));
        }
        if in_parameter && let Some(hit) = parameter_carrier(s) {
            push(hit);
        }
        for rule in [
            directive as Rule,
            cross_tool,
            credential_file,
            concealment,
            exfiltration,
            recipient_rewrite,
            authority,
            scripted_answer,
            kept_from_user,
            foreign_server_tool,
            only_the_outcome,
            asked_and_passed,
            safeguards_off,
            credential_passive,
        ] {
            if let Some(hit) = rule(text, s, context) {
                push(hit);
            }
        }
    }
    if let Some(hit) = command(text, prose) {
        push(hit);
    }
    if let Some(hit) = config_block(text) {
        push(hit);
    }
    for hit in foreign(text) {
        push(hit);
    }
    hits
}

/// One rule over one sentence.
type Rule = fn(&str, &Sentence, &Context) -> Option<Hit>;

impl Hit {
    /// A hit that is a marker on its own.
    fn strong(
        pattern: &'static str,
        family: Family,
        span: (usize, usize),
        evidence: impl Into<String>,
    ) -> Hit {
        Hit::new(pattern, family, true, span, evidence)
    }

    /// A hit that is a marker only beside another family or marker.
    fn weak(
        pattern: &'static str,
        family: Family,
        span: (usize, usize),
        evidence: impl Into<String>,
    ) -> Hit {
        Hit::new(pattern, family, false, span, evidence)
    }

    fn new(
        pattern: &'static str,
        family: Family,
        strong: bool,
        span: (usize, usize),
        evidence: impl Into<String>,
    ) -> Hit {
        Hit {
            pattern,
            family,
            strong,
            span,
            evidence: evidence.into(),
        }
    }
}

fn is(word: &Word, list: &[&str]) -> bool {
    list.contains(&word.lower.as_str())
}

/// Whether word `i` is given as an order: at a clause start, after a commanding word, after
/// `<lead> to`, or after a modal and an adverb ("must also send").
fn commanded(s: &Sentence, i: usize) -> bool {
    let w = &s.words;
    if w[i].clause_start || w[i].ordered {
        return true;
    }
    let prev = |k: usize| (i >= k).then(|| &w[i - k]);
    if prev(1).is_some_and(|p| is(p, LEADS)) {
        return true;
    }
    // "Start by printing …".
    if prev(1).is_some_and(|p| p.lower == "by")
        && prev(2).is_some_and(|p| is(p, &["start", "begin", "starting", "beginning"]))
    {
        return true;
    }
    // "has the model print …": the model as the subject of a bare verb.
    if prev(1).is_some_and(|p| is(p, MODEL_NAMES)) && prev(2).is_some_and(|p| p.lower == "the") {
        return true;
    }
    if prev(1).is_some_and(|p| p.lower == "to") && prev(2).is_some_and(|p| is(p, TO_LEADS)) {
        return true;
    }
    // "you will answer", "the assistant must send", "must never be", "should also include".
    (2..=3).any(|k| {
        prev(k).is_some_and(|p| is(p, &["must", "should", "shall", "will", "you"]))
            && (1..k).all(|j| {
                prev(j).is_some_and(|p| {
                    is(p, LEADS) || is(p, &["now", "never", "not", "always", "also", "only"])
                })
            })
    })
}

/// Whether word `i` is negated ("do not send", "never include", "refrain from telling"),
/// looking back at most three words and never past the start of its clause.
fn negated(s: &Sentence, i: usize) -> bool {
    if s.words[i].clause_start {
        return false;
    }
    for k in (i.saturating_sub(3)..i).rev() {
        let p = &s.words[k];
        if is(p, NEGATIONS) || is(p, &["refrain", "abstain", "avoid"]) {
            return true;
        }
        if p.clause_start {
            break;
        }
    }
    false
}

/// A verb in the third person singular ("overrides", "ignores"): a tool describing itself.
fn third_person(word: &Word) -> bool {
    word.lower.ends_with('s') && !word.lower.ends_with("ss")
}

/// Whether `word` starts with one of `stems` (`"notif"` covers notify, notifying, notified).
fn stem(word: &Word, stems: &[&str]) -> bool {
    stems.iter().any(|s| word.lower.starts_with(s))
}

/// The first word at or after `from` that is a commanded, unnegated verb of `verbs`.
fn order(s: &Sentence, verbs: &[&str]) -> Option<usize> {
    let base = |i: usize| {
        let w = &s.words[i];
        is(w, verbs)
            || (i > 1
                && s.words[i - 1].lower == "by"
                && w.lower.strip_suffix("ing").is_some_and(|b| {
                    verbs.contains(&b) || verbs.contains(&format!("{b}e").as_str())
                }))
    };
    (0..s.words.len()).find(|&i| base(i) && commanded(s, i) && !negated(s, i))
}

#[cfg(test)]
mod tests;
