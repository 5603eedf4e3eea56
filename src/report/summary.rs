//! The per-tool summaries of a server row: each tool's digests, effective hints and risk
//! assessment, the findings in the server's prompts, resources and resource templates, the
//! server's declared and assumed risk, and the revision of what they compute (the insight cache
//! is keyed on it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::risk::{self, Capability, Finding, Risk, ToolAssessment};
use crate::surface::{Sha256Digest, Surface, Tool, ToolDigests};

/// One tool as listed in a server row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// Tool name.
    pub name: String,
    /// Hash of the description.
    pub description_hash: Sha256Digest,
    /// Hash of the input schema.
    pub input_schema_hash: Sha256Digest,
    /// Hash of the output schema, when there is one.
    pub output_schema_hash: Option<Sha256Digest>,
    /// Hash of the effective annotations.
    pub annotations_hash: Sha256Digest,
    /// Hash of `{name, description, inputSchema}` (interoperable contract hash).
    pub contract_hash: Sha256Digest,
    /// Effective `readOnlyHint`.
    pub read_only_hint: bool,
    /// Effective `destructiveHint`.
    pub destructive_hint: bool,
    /// Effective `idempotentHint`.
    pub idempotent_hint: bool,
    /// Effective `openWorldHint`.
    pub open_world_hint: bool,
    /// What the tool lets an agent do, inferred from its definition.
    pub capabilities: Vec<Capability>,
    /// The tool's declared risk: what its definition says, no protocol default assumed.
    pub risk: Risk,
    /// The risk if the protocol's defaults hold for the hints it leaves out (an unannotated
    /// tool counts as destructive): at least `risk`.
    pub assumed_risk: Risk,
    /// Poisoning markers and quality findings.
    pub findings: Vec<Finding>,
}

impl ToolSummary {
    /// Summarizes one tool of a surface, with its digests and risk assessment.
    pub fn of(tool: &Tool, digests: ToolDigests, assessment: ToolAssessment) -> Self {
        let hints = tool.effective_annotations();
        ToolSummary {
            name: tool.name.clone(),
            description_hash: digests.description_hash,
            input_schema_hash: digests.input_schema_hash,
            output_schema_hash: digests.output_schema_hash,
            annotations_hash: digests.annotations_hash,
            contract_hash: digests.contract_hash,
            read_only_hint: hints.read_only_hint,
            destructive_hint: hints.destructive_hint,
            idempotent_hint: hints.idempotent_hint,
            open_world_hint: hints.open_world_hint,
            capabilities: assessment.capabilities,
            risk: assessment.risk,
            assumed_risk: assessment.assumed_risk,
            findings: assessment.findings,
        }
    }
}

/// Revision of what [`summarize_tools`] computes. Insight cached by an earlier run is reused only
/// when it was computed at this revision: bump it whenever a code change can alter any summary
/// (hashes, hints, capabilities, risk, findings). `tests/insight_fingerprint.rs` fails until
/// that is done.
pub const INSIGHT_REVISION: u32 = 4;

/// What a server row says of a surface beyond its digests: the per-tool summaries, the
/// server's declared risk, capability → tool names, and the findings in its prompts, resources
/// and resource templates. It depends only on the surface, so the insight cache keeps it.
///
/// The capability map is derived from the tools' own capabilities when it is asked for or
/// serialized (as `capabilities`, between `risk` and `declared_findings`), and ignored when
/// read: a fleet's cached insight is held for a whole run, and the map repeated every tool
/// name a second time (about 4 KB of a 50-tool surface's 21 KB).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolSummaries {
    /// One summary per tool, in the surface's order.
    pub tools: Vec<ToolSummary>,
    /// The server's declared risk: the highest of its tools, `high` when its instructions or
    /// a prompt, resource or template carry a poisoning marker.
    pub risk: Risk,
    /// The findings in the texts of prompts, resources and resource templates, each pointer
    /// naming the item and the text (`prompts["greet"]/description`).
    pub declared_findings: Vec<Finding>,
}

impl ToolSummaries {
    /// Capability → names of the tools that have it (each list sorted).
    pub fn capabilities(&self) -> BTreeMap<Capability, Vec<String>> {
        risk::capability_map(
            self.tools
                .iter()
                .map(|t| (t.name.as_str(), t.capabilities.as_slice())),
        )
    }
}

impl Serialize for ToolSummaries {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("ToolSummaries", 4)?;
        out.serialize_field("tools", &self.tools)?;
        out.serialize_field("risk", &self.risk)?;
        out.serialize_field("capabilities", &self.capabilities())?;
        out.serialize_field("declared_findings", &self.declared_findings)?;
        out.end()
    }
}

/// Adds a `duplicate_key` finding (a poisoning marker) to each named tool whose served JSON
/// repeated an object key, raising that tool's risk and the server's to high. `repeated` holds
/// `(tool name, pointer inside the tool)`.
pub fn mark_repeated_keys(summaries: &mut ToolSummaries, repeated: &[(String, String)]) {
    for (name, pointer) in repeated {
        if let Some(tool) = summaries.tools.iter_mut().find(|t| &t.name == name) {
            tool.findings.push(risk::duplicate_key_finding(pointer));
            tool.risk = Risk::High;
            tool.assumed_risk = Risk::High;
            summaries.risk = Risk::High;
        }
    }
}

/// A server's declared and assumed risk once the duplicate-key findings of `repeated` are
/// added ([`mark_repeated_keys`], then [`assumed_server_risk`]), without copying its
/// summaries to mark them: a repeated key in any of its tools makes both high.
pub fn server_risks(summaries: &ToolSummaries, repeated: &[(String, String)]) -> (Risk, Risk) {
    let marked = repeated
        .iter()
        .any(|(name, _)| summaries.tools.iter().any(|t| &t.name == name));
    if marked {
        (Risk::High, Risk::High)
    } else {
        (summaries.risk, assumed_server_risk(summaries))
    }
}

/// A server's assumed risk: its declared risk, or higher when an unannotated tool is rated
/// by the protocol's defaults.
pub fn assumed_server_risk(summaries: &ToolSummaries) -> Risk {
    summaries
        .tools
        .iter()
        .map(|t| t.assumed_risk)
        .fold(summaries.risk, Risk::max)
}

/// The per-tool summaries of a surface plus the server-level risk, the capability map and the
/// findings of its prompts, resources and templates. A poisoning marker in the server's
/// instructions, or in a prompt, resource or template, makes the server's risk high as well.
pub fn summarize_tools(surface: &Surface) -> ToolSummaries {
    summarize_tools_with(surface, surface.canonical_tools().tool_digests())
}

/// [`summarize_tools`] with the tools' digests already computed (in the surface's order), as
/// a run has them from the pass that gave the surface's digest.
pub fn summarize_tools_with(surface: &Surface, digests: Vec<ToolDigests>) -> ToolSummaries {
    let mut cache =
        risk::declared::cache_for(surface.tools.iter().map(|t| &t.raw), &surface.declared);
    let assessed: Vec<(&Tool, ToolAssessment)> = surface
        .tools
        .iter()
        .map(|t| (t, risk::assess_tool_with(&mut cache, &t.raw)))
        .collect();
    let tools_risk = assessed
        .iter()
        .map(|(_, a)| a.risk)
        .max()
        .unwrap_or(Risk::Low);
    let poisoned_instructions = surface
        .identity
        .instructions
        .as_deref()
        .is_some_and(|text| cache.scan_instructions(text).iter().any(Finding::is_marker));
    let declared_findings = risk::declared::scan_all_with(&mut cache, &surface.declared);
    let poisoned_declared = declared_findings.iter().any(Finding::is_marker);
    let server_risk = if poisoned_instructions || poisoned_declared {
        Risk::High
    } else {
        tools_risk
    };
    let tools = assessed
        .into_iter()
        .zip(digests)
        .map(|((tool, assessment), digests)| ToolSummary::of(tool, digests, assessment))
        .collect();
    ToolSummaries {
        tools,
        risk: server_risk,
        declared_findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, risk: Risk, assumed_risk: Risk) -> ToolSummary {
        let digest = Sha256Digest::of(name.as_bytes());
        ToolSummary {
            name: name.to_string(),
            description_hash: digest,
            input_schema_hash: digest,
            output_schema_hash: None,
            annotations_hash: digest,
            contract_hash: digest,
            read_only_hint: false,
            destructive_hint: false,
            idempotent_hint: false,
            open_world_hint: false,
            capabilities: Vec::new(),
            risk,
            assumed_risk,
            findings: Vec::new(),
        }
    }

    #[test]
    fn server_risks_are_those_of_the_marked_summaries() {
        use Risk::{High, Low, Medium};
        let repeated = |names: &[&str]| -> Vec<(String, String)> {
            names
                .iter()
                .map(|n| (n.to_string(), "/x".to_string()))
                .collect()
        };
        // (tools as (name, risk, assumed risk), server risk, repeated keys' tool names)
        type Case<'a> = (Vec<(&'a str, Risk, Risk)>, Risk, Vec<(String, String)>);
        let cases: Vec<Case> = vec![
            (vec![("a", Low, Low)], Low, repeated(&[])),
            (vec![("a", Low, Medium)], Low, repeated(&[])),
            (
                vec![("a", Low, Low), ("b", Medium, High)],
                Medium,
                repeated(&[]),
            ),
            (vec![("a", Low, Low)], High, repeated(&[])),
            (vec![("a", Low, Low)], Low, repeated(&["a"])),
            (vec![("a", Low, Low)], Low, repeated(&["gone"])),
            (
                vec![("a", Low, Low), ("b", Low, Medium)],
                Low,
                repeated(&["gone", "b"]),
            ),
            (vec![], Low, repeated(&["a"])),
        ];
        for (tools, risk, repeated) in cases {
            let summaries = ToolSummaries {
                tools: tools.iter().map(|(n, r, a)| tool(n, *r, *a)).collect(),
                risk,
                declared_findings: Vec::new(),
            };
            let mut marked = summaries.clone();
            mark_repeated_keys(&mut marked, &repeated);
            let expected = (marked.risk, assumed_server_risk(&marked));
            assert_eq!(
                server_risks(&summaries, &repeated),
                expected,
                "{tools:?} {repeated:?}"
            );
        }
    }

    #[test]
    fn the_capability_map_is_derived_written_in_place_and_ignored_when_read() {
        let mut write = tool("write_file", Risk::High, Risk::High);
        write.capabilities = vec![Capability::Write, Capability::Read];
        let mut read = tool("read_file", Risk::Low, Risk::Low);
        read.capabilities = vec![Capability::Read];
        let summaries = ToolSummaries {
            tools: vec![write, read],
            risk: Risk::High,
            declared_findings: Vec::new(),
        };
        let map = summaries.capabilities();
        assert_eq!(map[&Capability::Read], ["read_file", "write_file"]);
        assert_eq!(map[&Capability::Write], ["write_file"]);
        let text = serde_json::to_string(&summaries).unwrap();
        let keys: Vec<usize> = [
            "\"tools\"",
            "\"risk\"",
            "\"capabilities\"",
            "\"declared_findings\"",
        ]
        .iter()
        .map(|key| text.rfind(key).unwrap())
        .collect();
        assert!(keys.is_sorted(), "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["capabilities"], serde_json::to_value(&map).unwrap());
        // A stored map that disagrees with the tools is not believed.
        let mut stored = value.clone();
        stored["capabilities"] = serde_json::json!({"delete": ["read_file"]});
        let read_back: ToolSummaries = serde_json::from_value(stored).unwrap();
        assert_eq!(read_back, summaries);
        assert_eq!(read_back.capabilities(), map);
    }
}
