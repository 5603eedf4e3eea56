//! Risk insight over a server's declared tools: what each tool can do (capabilities, with the
//! evidence), how risky it is, where its annotations or schema are weak, and whether any text an
//! agent reads carries a tool-poisoning marker. Plus the pure helpers the change engine needs:
//! capabilities and markers gained between two runs, rename hints, and the identity signal.
//!
//! Everything here works on raw tool JSON (`serde_json::Value` as served by `tools/list`), is
//! deterministic and does no I/O. See `docs/risk.md` for the pattern table.
//!
//! - [`tokens`]: snake/camel/kebab-aware word splitting with spans.
//! - [`phrase`]: the whole-word phrase matcher the text rules are written in.
//! - [`unicode`]: invisible characters, tag-block decoding, look-alike letters.
//! - [`poison`]: the poisoning pattern table and the text scanner.
//! - [`intent`]: the intent rules (orders to the model, by family) the scanner adds.
//! - [`texts`]: every text of a definition an agent reads, with its JSON pointer.
//! - [`capability`]: capabilities and their evidence.
//! - [`hints`]: the behaviour hints with their effective defaults.
//! - [`quality`]: annotation consistency, schema summary and quality.
//! - [`declared`]: markers in prompts, resources and resource templates.
//! - [`dupkeys`]: duplicate object keys, found while parsing.
//! - [`rename`]: rename hints between removed and added tools.
//! - [`identity`]: the identity signal (same version, replaced server) and severity raising.
//! - [`wordhash`]: the fast hash of the rules' word tables.

pub mod capability;
pub mod declared;
pub mod dupkeys;
pub mod hints;
pub mod identity;
pub mod intent;
pub mod phrase;
pub mod poison;
pub mod quality;
pub mod rename;
pub mod texts;
pub mod tokens;
pub mod unicode;
pub mod wordhash;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use capability::{Capability, Evidence};
pub use dupkeys::{duplicate_key_finding, duplicate_key_findings, duplicate_keys};
pub use hints::EffectiveHints;
pub use identity::{IdentitySignal, identity_signal};
pub use poison::{ScanCache, scan_definition, scan_server_instructions, scan_text};
pub use quality::SchemaSummary;
pub use rename::{RenameHint, rename_hints};

/// How much an agent can break or leak through a tool. Ordered: `Low < Medium < High`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads only, nothing worrying declared.
    Low,
    /// Writes, messages, touches secrets, or reaches the open network.
    Medium,
    /// Deletes, executes, pays, declares itself destructive, or carries a poisoning marker.
    High,
}

impl Risk {
    /// One step up (`low → medium → high`); `high` stays `high`. Used when the identity signal
    /// says a surface changed without a version bump.
    pub fn raised(self) -> Risk {
        match self {
            Risk::Low => Risk::Medium,
            Risk::Medium | Risk::High => Risk::High,
        }
    }
}

/// Finding kinds. `kind` is a plain string in rows; these are the values this module emits.
pub mod kind {
    /// A tool-poisoning marker in a text an agent reads (always severity `high`).
    pub const POISONING: &str = "poisoning";
    /// A weak signal worth a look that is not a marker (does not raise risk).
    pub const ADVISORY: &str = "advisory";
    /// The JSON repeated an object key, so clients may disagree on which copy wins.
    pub const DUPLICATE_KEY: &str = "duplicate_key";
    /// An annotation contradicts the tool's name or capabilities.
    pub const ANNOTATION_INCONSISTENCY: &str = "annotation_inconsistency";
    /// The tool declares no annotations at all.
    pub const MISSING_ANNOTATIONS: &str = "missing_annotations";
    /// The tool has no description.
    pub const MISSING_DESCRIPTION: &str = "missing_description";
    /// A top-level input property has no description.
    pub const UNDOCUMENTED_PARAMETER: &str = "undocumented_parameter";
    /// The tool has no usable `inputSchema` object.
    pub const MISSING_INPUT_SCHEMA: &str = "missing_input_schema";
}

/// One observation about a tool or a text: what, which rule, where, and how bad.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The finding kind, one of [`kind`].
    pub kind: String,
    /// The rule that fired (see `docs/risk.md`).
    pub pattern: String,
    /// JSON pointer of the text or member concerned, relative to the definition scanned.
    pub pointer: String,
    /// The matched text, invisible characters shown as `\u{…}`.
    pub excerpt: String,
    /// How bad this finding is on its own.
    pub severity: Risk,
}

impl Finding {
    /// A finding of `kind` from rule `pattern` at `pointer`.
    pub fn new(kind: &str, pattern: &str, pointer: &str, excerpt: String, severity: Risk) -> Self {
        Finding {
            kind: kind.to_string(),
            pattern: pattern.to_string(),
            pointer: pointer.to_string(),
            excerpt,
            severity,
        }
    }

    /// True for the findings that count as poisoning markers: text markers and duplicate keys.
    pub fn is_marker(&self) -> bool {
        self.kind == kind::POISONING || self.kind == kind::DUPLICATE_KEY
    }
}

/// Everything this module says about one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolAssessment {
    /// Sorted, without repeats.
    pub capabilities: Vec<Capability>,
    /// Why each capability was inferred.
    pub evidence: Vec<Evidence>,
    /// The tool's declared risk: from what its definition says (names, parameters, declared
    /// hints, markers), with no protocol default assumed. `high` here is evidence.
    pub risk: Risk,
    /// The risk the protocol's defaults give a tool that leaves hints out (destructive, may
    /// write): at least [`ToolAssessment::risk`], higher only for an unannotated tool.
    pub assumed_risk: Risk,
    /// Poisoning markers, advisories, annotation and schema quality findings.
    pub findings: Vec<Finding>,
    /// Counts of the input schema.
    pub schema: SchemaSummary,
}

/// Assesses one tool object as served in `tools/list`.
pub fn assess_tool(tool: &Value) -> ToolAssessment {
    assess_tool_with(&mut ScanCache::default(), tool)
}

/// [`assess_tool`] sharing a text-scan cache with the other tools of the same server (the
/// result is the same; repeated texts are scanned once).
pub fn assess_tool_with(cache: &mut ScanCache, tool: &Value) -> ToolAssessment {
    let hints = EffectiveHints::of(tool);
    let evidence = capability::infer(tool, &hints);
    let capabilities = capability::distinct(&evidence);
    let mut findings = poison::scan_tool_with(cache, tool);
    findings.extend(quality::annotation_findings(tool, &hints, &evidence));
    findings.extend(quality::schema_findings(tool));
    let risk = tool_risk(
        &capability::declared(&evidence),
        &EffectiveHints::as_declared(tool),
        &findings,
    );
    let assumed_risk = tool_risk(&capabilities, &hints, &findings).max(risk);
    ToolAssessment {
        capabilities,
        evidence,
        risk,
        assumed_risk,
        findings,
        schema: SchemaSummary::of(tool),
    }
}

/// The risk rule: `high` for delete/execute/payment, a destructive hint or a marker;
/// `medium` for write/messaging/secrets or network reach into an open world; else `low`.
pub fn tool_risk(
    capabilities: &[Capability],
    hints: &EffectiveHints,
    findings: &[Finding],
) -> Risk {
    let has = |c: Capability| capabilities.contains(&c);
    let high = has(Capability::Delete)
        || has(Capability::Execute)
        || has(Capability::Payment)
        || hints.is_destructive()
        || findings.iter().any(Finding::is_marker);
    let medium = has(Capability::Write)
        || has(Capability::Messaging)
        || has(Capability::Secrets)
        || (has(Capability::Network) && hints.open_world);
    if high {
        Risk::High
    } else if medium {
        Risk::Medium
    } else {
        Risk::Low
    }
}

/// A server's declared risk: the highest of its tools, `low` for a server without tools.
pub fn server_risk(tools: &[ToolAssessment]) -> Risk {
    tools.iter().map(|t| t.risk).max().unwrap_or(Risk::Low)
}

/// Capabilities the new assessment has that the old one did not (feeds `capability_added`).
pub fn capabilities_gained(old: &ToolAssessment, new: &ToolAssessment) -> Vec<Capability> {
    new.capabilities
        .iter()
        .filter(|c| !old.capabilities.contains(c))
        .copied()
        .collect()
}

/// The severity of a `capability_added` change: `high` for delete, execute, payment and
/// secrets, else `medium`.
pub fn capability_added_severity(capability: Capability) -> Risk {
    match capability {
        Capability::Delete | Capability::Execute | Capability::Payment | Capability::Secrets => {
            Risk::High
        }
        _ => Risk::Medium,
    }
}

/// Markers in `new` that `old` did not have at the same pointer with the same pattern (feeds
/// `poisoning_marker_added`). Non-marker findings are ignored.
pub fn markers_gained(old: &[Finding], new: &[Finding]) -> Vec<Finding> {
    new.iter()
        .filter(|f| f.is_marker())
        .filter(|f| {
            !old.iter()
                .any(|o| o.is_marker() && o.pattern == f.pattern && o.pointer == f.pointer)
        })
        .cloned()
        .collect()
}

/// Capability name → names of the tools that have it, for the server row.
pub fn capability_map<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a [Capability])>,
) -> std::collections::BTreeMap<Capability, Vec<String>> {
    let mut map: std::collections::BTreeMap<Capability, Vec<String>> = Default::default();
    for (name, capabilities) in tools {
        for capability in capabilities {
            map.entry(*capability).or_default().push(name.to_string());
        }
    }
    for names in map.values_mut() {
        names.sort();
        names.dedup();
    }
    map
}

pub(crate) use crate::surface::pointer_segment;

#[cfg(test)]
mod tests;
