//! The normalized surface of one MCP server: identity, tools (raw JSON kept), canonical JSON
//! (RFC 8785) and the digests over it. Pure: no I/O.
//!
//! Invariants of a [`Surface`]:
//! - `tools` is sorted by name (UTF-16 order, as in canonical JSON) and holds each name once;
//!   a repeated name keeps its first occurrence and is listed in `duplicate_tool_names`;
//! - every tool's raw JSON has a canonical form (nesting at most [`canon::MAX_DEPTH`]);
//! - entries that are not tools (not an object, no string `name`, too deep) are never dropped
//!   silently: they are listed in `invalid_tools`.

pub mod annotations;
pub mod canon;
pub mod declared;
pub mod digest;
pub mod listing;
pub mod tool;
pub mod validity;

pub use annotations::EffectiveAnnotations;
pub use canon::{CanonError, canonicalize};
pub use declared::{
    Declared, DeclaredItem, DeclaredKind, ItemDigests, ListRead, ListSummary, ResourceList,
    Summaries,
};
pub use digest::{DIGEST_ALGORITHM, Sha256Digest, hash_value, sha256_hex, try_hash_value};
pub use listing::{Prompt, Resource, prompts_from_list_result, resources_from_list_result};
pub use tool::{Tool, ToolDigests};

/// Escapes one JSON pointer segment (RFC 6901): `~` as `~0`, `/` as `~1`.
pub fn pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;

/// Why a list result could not be read at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SurfaceError {
    /// The JSON-RPC `result` is not an object.
    #[error("list result is not a JSON object")]
    ResultNotObject,
    /// The result has no array under the expected key.
    #[error("list result has no `{0}` array")]
    MissingArray(&'static str),
}

/// Who the server says it is (from `initialize` or `server/discover`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct ServerIdentity {
    /// `serverInfo.name`.
    pub name: Option<String>,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// `serverInfo.version`.
    pub version: Option<String>,
    /// The negotiated protocol revision.
    pub protocol_version: Option<String>,
    /// The server's `instructions` text.
    pub instructions: Option<String>,
}

/// A `tools` entry that is not a usable tool. It is reported, never silently dropped.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct InvalidTool {
    /// Position in the concatenated `tools` arrays of all pages.
    pub index: usize,
    /// The `name` field when it is a string.
    pub name: Option<String>,
    /// What is wrong with the entry.
    pub reason: InvalidToolReason,
    /// A short explanation (which rule, and where in the definition); empty in records written
    /// before it existed.
    #[serde(default)]
    pub detail: String,
}

/// What makes a `tools` entry unusable.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InvalidToolReason {
    /// The entry is not a JSON object.
    NotAnObject,
    /// The entry has no string `name`.
    MissingName,
    /// The entry nests deeper than [`canon::MAX_DEPTH`] and has no canonical form.
    TooDeep,
    /// The `name` is the empty string.
    EmptyName,
    /// The `inputSchema` is not a JSON object, or its `type` does not admit an object.
    InputSchemaNotObject,
    /// An `x-mcp-header` annotation breaks a rule of the 2026-07-28 schema (empty, not an HTTP
    /// token, repeated, on a non-primitive or `number` parameter, or not reachable).
    InvalidHeader,
}

/// The declared surface of one server as read in one run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Surface {
    /// Who the server says it is.
    pub identity: ServerIdentity,
    /// The tools, sorted by name, one per name.
    pub tools: Vec<Tool>,
    /// Names served more than once (each listed once, sorted); the first occurrence is kept.
    pub duplicate_tool_names: Vec<String>,
    /// Entries of the `tools` arrays that are not usable tools.
    pub invalid_tools: Vec<InvalidTool>,
    /// Prompts, resources and resource templates (empty for a server that declares none).
    #[serde(default, skip_serializing_if = "Declared::is_empty")]
    pub declared: Declared,
}

impl Surface {
    /// Builds a surface from the concatenated `tools` arrays of all `tools/list` pages.
    ///
    /// Never fails on bad entries (they land in `invalid_tools`); the `Result` is kept so the
    /// signature matches [`Surface::from_tools_list_result`].
    pub fn from_tools(
        identity: ServerIdentity,
        tools: Vec<Value>,
    ) -> Result<Surface, SurfaceError> {
        let mut seen = HashSet::new();
        let mut duplicates = Vec::new();
        let mut kept = Vec::new();
        let mut invalid = Vec::new();
        for (index, raw) in tools.into_iter().enumerate() {
            let name = raw.get("name").and_then(Value::as_str).map(str::to_owned);
            match (entry_problem(&raw, name.as_deref()), name) {
                (None, Some(name)) => {
                    if seen.insert(name.clone()) {
                        kept.push(Tool { name, raw });
                    } else if !duplicates.contains(&name) {
                        duplicates.push(name);
                    }
                }
                (problem, name) => {
                    let (reason, detail) = problem.unwrap_or((
                        InvalidToolReason::MissingName,
                        "the entry has no string name".into(),
                    ));
                    invalid.push(InvalidTool {
                        index,
                        name,
                        reason,
                        detail,
                    });
                }
            }
        }
        kept.sort_by(|a, b| canon::cmp_utf16(&a.name, &b.name));
        duplicates.sort_by(|a, b| canon::cmp_utf16(a, b));
        Ok(Surface {
            identity,
            tools: kept,
            duplicate_tool_names: duplicates,
            invalid_tools: invalid,
            declared: Declared::default(),
        })
    }

    /// Builds a surface from one `tools/list` result object (`{"tools": [...], ...}`).
    pub fn from_tools_list_result(
        identity: ServerIdentity,
        result: &Value,
    ) -> Result<Surface, SurfaceError> {
        let tools = listing::list_items(result, "tools")?;
        Self::from_tools(identity, tools.clone())
    }

    /// The same surface with its prompts, resources and resource templates.
    pub fn with_declared(self, declared: Declared) -> Surface {
        Surface { declared, ..self }
    }

    /// Digest of the whole declared surface. For a server that declares no prompt, resource or
    /// template it is the hash of the array of raw tool objects in name order (so the order in
    /// which the server lists tools does not matter), exactly as before those were read;
    /// otherwise the hash of `{"tools": <that hash>, ...}` with the declared items added
    /// ([`Declared::digest_material`]).
    pub fn tool_digest(&self) -> String {
        self.canonical_tools().tool_digest()
    }

    /// The canonical bytes of every tool in one pass: the [`Surface::tool_digest`], and each
    /// tool's [`ToolDigests`] from the same bytes when they are needed (a first or changed
    /// surface), without serializing any tool again.
    pub fn canonical_tools(&self) -> CanonicalTools<'_> {
        let mut bytes = Vec::with_capacity(64 * 1024);
        let mut spans = Vec::with_capacity(self.tools.len());
        bytes.push(b'[');
        for (i, tool) in self.tools.iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            match tool.write_canonical(&mut bytes) {
                Ok(span) => spans.push(span),
                // Surfaces refuse uncanonicalizable tools; kept total for safety.
                Err(error) => {
                    return CanonicalTools {
                        surface: self,
                        bytes: Err(error),
                        spans,
                    };
                }
            }
        }
        bytes.push(b']');
        CanonicalTools {
            surface: self,
            bytes: Ok(bytes),
            spans,
        }
    }

    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools
            .binary_search_by(|t| canon::cmp_utf16(&t.name, name))
            .ok()
            .map(|i| &self.tools[i])
    }
}

/// The canonical bytes of a surface's tool array, with where each tool lies in them
/// ([`Surface::canonical_tools`]).
pub struct CanonicalTools<'a> {
    surface: &'a Surface,
    /// The array's bytes, or why a tool had no canonical form.
    bytes: Result<Vec<u8>, CanonError>,
    /// One per tool, in the surface's order (fewer when a tool had no canonical form).
    spans: Vec<tool::ToolSpans>,
}

impl CanonicalTools<'_> {
    /// The hash of the whole array ([`Surface::tool_digest`]).
    pub fn tool_digest(&self) -> String {
        let tools = match &self.bytes {
            Ok(bytes) => sha256_hex(bytes),
            Err(error) => digest::uncanonicalizable_hash(error),
        };
        let declared = &self.surface.declared;
        if declared.is_empty() {
            return tools;
        }
        let mut material = declared.digest_material();
        if let Value::Object(map) = &mut material {
            map.insert("tools".to_string(), Value::String(tools));
        }
        hash_value(&material)
    }

    /// The hash of each tool's raw canonical bytes (its [`ToolDigests::raw_hash`]), in the
    /// surface's order.
    pub fn raw_hashes(&self) -> Vec<Sha256Digest> {
        match &self.bytes {
            Ok(bytes) => self
                .spans
                .iter()
                .map(|span| Sha256Digest::of(&bytes[span.raw.clone()]))
                .collect(),
            Err(_) => self
                .surface
                .tools
                .iter()
                .map(|t| t.digests().raw_hash)
                .collect(),
        }
    }

    /// Every digest of every tool, in the surface's order: the same as [`Tool::digests`] of
    /// each, from the bytes already written.
    pub fn tool_digests(&self) -> Vec<ToolDigests> {
        let tools = &self.surface.tools;
        match &self.bytes {
            Ok(bytes) => tools
                .iter()
                .zip(&self.spans)
                .map(|(tool, span)| tool.digests_from(bytes, Ok(span)))
                .collect(),
            Err(_) => tools.iter().map(Tool::digests).collect(),
        }
    }
}

/// Why a `tools` entry is not a usable tool, or `None` when it is.
fn entry_problem(raw: &Value, name: Option<&str>) -> Option<(InvalidToolReason, String)> {
    let Some(object) = raw.as_object() else {
        return Some((
            InvalidToolReason::NotAnObject,
            "the entry is not a JSON object".into(),
        ));
    };
    let Some(name) = name else {
        return Some((
            InvalidToolReason::MissingName,
            "the entry has no string name".into(),
        ));
    };
    if let Err(error) = canon::check_depth(raw) {
        return Some((InvalidToolReason::TooDeep, error.to_string()));
    }
    validity::problem(object, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(s: &Surface) -> Vec<&str> {
        s.tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn tools_are_sorted_and_found_by_name() {
        let s = Surface::from_tools(
            ServerIdentity::default(),
            vec![
                json!({"name": "b"}),
                json!({"name": "a", "x": 1}),
                json!({"name": "c"}),
            ],
        )
        .unwrap();
        assert_eq!(names(&s), ["a", "b", "c"]);
        assert_eq!(s.tool("a").unwrap().raw["x"], 1);
        assert!(s.tool("zz").is_none());
    }

    #[test]
    fn duplicates_keep_the_first_and_are_reported() {
        let s = Surface::from_tools(
            ServerIdentity::default(),
            vec![
                json!({"name": "a", "description": "first"}),
                json!({"name": "a", "description": "second"}),
                json!({"name": "a", "description": "third"}),
            ],
        )
        .unwrap();
        assert_eq!(s.tools.len(), 1);
        assert_eq!(s.tool("a").unwrap().description(), Some("first"));
        assert_eq!(s.duplicate_tool_names, ["a"]);
    }

    #[test]
    fn invalid_entries_are_reported_not_dropped() {
        let mut deep = json!(1);
        for _ in 0..canon::MAX_DEPTH {
            deep = json!([deep]);
        }
        let s = Surface::from_tools(
            ServerIdentity::default(),
            vec![
                json!(5),
                json!({"description": "no name"}),
                json!({"name": 3}),
                json!({"name": "deep", "x": deep}),
                json!({"name": "ok"}),
            ],
        )
        .unwrap();
        assert_eq!(names(&s), ["ok"]);
        let reasons: Vec<_> = s
            .invalid_tools
            .iter()
            .map(|i| (i.index, i.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                (0, InvalidToolReason::NotAnObject),
                (1, InvalidToolReason::MissingName),
                (2, InvalidToolReason::MissingName),
                (3, InvalidToolReason::TooDeep),
            ]
        );
        assert_eq!(s.invalid_tools[3].name.as_deref(), Some("deep"));
    }

    #[test]
    fn tool_digest_ignores_listing_order_but_sees_content() {
        let a = Surface::from_tools(
            ServerIdentity::default(),
            vec![json!({"name": "a"}), json!({"name": "b"})],
        )
        .unwrap();
        let b = Surface::from_tools(
            ServerIdentity::default(),
            vec![json!({"name": "b"}), json!({"name": "a"})],
        )
        .unwrap();
        let c = Surface::from_tools(
            ServerIdentity::default(),
            vec![json!({"name": "b"}), json!({"name": "a", "title": "x"})],
        )
        .unwrap();
        assert_eq!(a.tool_digest(), b.tool_digest());
        assert_ne!(a.tool_digest(), c.tool_digest());
        // By definition: the hash of the array of raw tools in name order.
        let raws = json!([{"name": "a", "title": "x"}, {"name": "b"}]);
        assert_eq!(c.tool_digest(), hash_value(&raws));
    }

    #[test]
    fn a_surface_that_declares_nothing_else_keeps_the_digest_of_earlier_versions() {
        let tools = vec![
            json!({"name": "b"}),
            json!({"name": "a", "inputSchema": {"type": "object"}}),
        ];
        let s = Surface::from_tools(ServerIdentity::default(), tools).unwrap();
        // The value main (tools only) computes for this surface: pinned, so no upgrade
        // re-baselines a server that lists no prompt, resource or template.
        let pinned = "f06d0ff0b4a65540d859b487062bfad2ca4bd1032768dcc509957c5101e7b94d";
        assert_eq!(s.tool_digest(), pinned);
        let (empty, _) = Declared::from_reads(
            Some(ListRead::default()),
            Some(ListRead::default()),
            Some(ListRead::default()),
        );
        let s = s.with_declared(empty);
        assert_eq!(s.tool_digest(), pinned, "declared but empty lists");
        let (one, _) = Declared::from_reads(
            Some(ListRead {
                items: vec![json!({"name": "p"})],
                truncated: false,
            }),
            None,
            Some(ListRead::default()),
        );
        let with_prompt = s.clone().with_declared(one.clone());
        assert_ne!(with_prompt.tool_digest(), pinned);
        let mut material = one.digest_material();
        material["tools"] = json!(pinned);
        assert_eq!(with_prompt.tool_digest(), hash_value(&material));
    }

    #[test]
    fn one_canonical_pass_gives_every_digest() {
        let s = Surface::from_tools(
            ServerIdentity::default(),
            vec![
                json!({"name": "b", "inputSchema": {"type": "object", "b": 1.0, "a": [null]},
                       "outputSchema": {"z": 1}, "description": "d"}),
                json!({"name": "a"}),
                json!({"name": "c", "inputSchema": null, "annotations": {"readOnlyHint": true}}),
            ],
        )
        .unwrap();
        let canonical = s.canonical_tools();
        assert_eq!(canonical.tool_digest(), s.tool_digest());
        let each: Vec<ToolDigests> = s.tools.iter().map(Tool::digests).collect();
        assert_eq!(canonical.tool_digests(), each);
        let raw: Vec<Sha256Digest> = s
            .tools
            .iter()
            .map(|t| Sha256Digest::of_value(&t.raw))
            .collect();
        assert_eq!(canonical.raw_hashes(), raw);
    }

    #[test]
    fn list_result_parsing() {
        let s = Surface::from_tools_list_result(
            ServerIdentity::default(),
            &json!({"tools": [{"name": "a"}], "nextCursor": "n"}),
        )
        .unwrap();
        assert_eq!(names(&s), ["a"]);
        assert_eq!(
            Surface::from_tools_list_result(ServerIdentity::default(), &json!({"tool": []})),
            Err(SurfaceError::MissingArray("tools"))
        );
        assert_eq!(
            Surface::from_tools_list_result(ServerIdentity::default(), &json!(null)),
            Err(SurfaceError::ResultNotObject)
        );
    }
}
