//! One side of a comparison: a snapshot file, a raw `tools/list` result, standard input, or a
//! live server, turned into a [`Surface`].
//!
//! Accepted JSON shapes (the first that matches wins):
//! - a snapshot printed by `snapshot` (it has a `snapshot_format` member);
//! - a JSON-RPC response whose `result` is a `tools/list` result;
//! - a `tools/list` result object (`{"tools": [...]}`);
//! - a bare array of tool objects.

use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

use super::snapshot::{self, SNAPSHOT_FORMAT, Snapshot};
use super::{CliError, ProbeSettings};
use crate::surface::{Declared, DeclaredItem, ServerIdentity, Surface};

/// Where one side comes from, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `-`: read JSON from standard input.
    Stdin,
    /// An `http://` or `https://` URL: probe the server now.
    Url(String),
    /// Anything else: a JSON file.
    File(PathBuf),
}

impl Source {
    /// Interprets one command-line argument.
    pub fn parse(argument: &str) -> Source {
        let lower = argument.to_ascii_lowercase();
        if argument == "-" {
            Source::Stdin
        } else if lower.starts_with("http://") || lower.starts_with("https://") {
            Source::Url(argument.to_string())
        } else {
            Source::File(PathBuf::from(argument))
        }
    }

    /// How this side is named in rows and reports.
    pub fn label(&self) -> String {
        match self {
            Source::Stdin => "(stdin)".to_string(),
            Source::Url(url) => url.clone(),
            Source::File(path) => path.display().to_string(),
        }
    }
}

/// One side, read: its surface and, when it came from a probe or a snapshot, what the
/// snapshot says about the server.
#[derive(Debug, Clone)]
pub struct Side {
    /// How the side is named (URL, file path or `(stdin)`).
    pub label: String,
    /// The surface to compare.
    pub surface: Surface,
    /// The snapshot, when the side is a live server or a snapshot file.
    pub snapshot: Option<Value>,
}

/// Reads one side. A URL is probed with the same egress rules and limits as the Actor run.
pub async fn load(source: &Source, settings: &ProbeSettings) -> Result<Side, CliError> {
    let label = source.label();
    match source {
        Source::Url(url) => {
            let snapshot = snapshot::take(url, settings).await?;
            side_of_snapshot(label, &snapshot)
        }
        Source::Stdin => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| CliError::BadInput(format!("cannot read standard input: {e}")))?;
            side_of_json(label, &bytes)
        }
        Source::File(path) => {
            let bytes = std::fs::read(path).map_err(|e| {
                let hint = (e.kind() == std::io::ErrorKind::NotFound)
                    .then(|| crate::targets::scheme_suggestion(&path.to_string_lossy()))
                    .flatten()
                    .map(|url| {
                        format!("; to read a server instead, give its URL with the scheme: {url}")
                    })
                    .unwrap_or_default();
                CliError::BadInput(format!("cannot read {}: {e}{hint}", path.display()))
            })?;
            side_of_json(label, &bytes)
        }
    }
}

fn side_of_snapshot(label: String, snapshot: &Snapshot) -> Result<Side, CliError> {
    let value = serde_json::to_value(snapshot)
        .map_err(|e| CliError::Runtime(format!("cannot encode the snapshot: {e}")))?;
    side_of_value(label, value)
}

/// Reads one side from JSON bytes (pure: no I/O).
pub fn side_of_json(label: String, bytes: &[u8]) -> Result<Side, CliError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| CliError::BadInput(format!("{label}: not valid JSON: {e}")))?;
    side_of_value(label, value)
}

/// Reads one side from a parsed JSON document in any accepted shape.
pub fn side_of_value(label: String, value: Value) -> Result<Side, CliError> {
    let bad = |what: String| CliError::BadInput(format!("{label}: {what}"));
    if value.get("snapshot_format").is_some() {
        let format = value["snapshot_format"].as_str().unwrap_or_default();
        if format != SNAPSHOT_FORMAT {
            return Err(bad(format!(
                "unsupported snapshot_format {format:?} (expected {SNAPSHOT_FORMAT:?})"
            )));
        }
        let identity: ServerIdentity = serde_json::from_value(value["server"].clone())
            .map_err(|e| bad(format!("snapshot `server` is not readable: {e}")))?;
        let tools = value["tools"]
            .as_array()
            .ok_or_else(|| bad("snapshot has no `tools` array".to_string()))?
            .iter()
            .map(|tool| tool.get("definition").cloned().unwrap_or(Value::Null))
            .collect();
        let declared: Declared = match value.get("declared") {
            Some(declared) => serde_json::from_value(declared.clone())
                .map_err(|e| bad(format!("snapshot `declared` is not readable: {e}")))?,
            None => Declared::default(),
        };
        let raws = |items: Vec<DeclaredItem>| items.into_iter().map(|i| i.raw).collect();
        let summaries = declared.summaries();
        let declared = Declared::from_stored(
            raws(declared.prompts),
            raws(declared.resources),
            raws(declared.resource_templates),
            summaries,
            declared.unread,
        );
        let surface = Surface::from_tools(identity, tools)
            .map_err(|e| bad(e.to_string()))?
            .with_declared(declared);
        return Ok(Side {
            label,
            surface,
            snapshot: Some(value),
        });
    }
    let surface = if let Value::Array(tools) = &value {
        Surface::from_tools(ServerIdentity::default(), tools.clone())
    } else if let Some(result) = value.get("result").filter(|_| value.get("jsonrpc").is_some()) {
        Surface::from_tools_list_result(ServerIdentity::default(), result)
    } else {
        Surface::from_tools_list_result(ServerIdentity::default(), &value)
    }
    .map_err(|e| {
        bad(format!(
            "{e}; expected a snapshot, a tools/list result, a JSON-RPC response or an array of tools"
        ))
    })?;
    Ok(Side {
        label,
        surface,
        snapshot: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_sorted_into_sources() {
        let table = [
            ("-", Source::Stdin),
            (
                "https://x.example/mcp",
                Source::Url("https://x.example/mcp".into()),
            ),
            (
                "HTTP://x.example/mcp",
                Source::Url("HTTP://x.example/mcp".into()),
            ),
            ("before.json", Source::File("before.json".into())),
            ("http.json", Source::File("http.json".into())),
        ];
        for (argument, expected) in table {
            assert_eq!(Source::parse(argument), expected, "{argument}");
        }
    }

    #[test]
    fn every_accepted_shape_gives_the_same_tools() {
        let tool = json!({"name": "b", "inputSchema": {"type": "object"}});
        let other = json!({"name": "a", "description": "x"});
        let shapes = [
            json!({"tools": [tool, other]}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool, other]}}),
            json!([tool, other]),
            json!({
                "snapshot_format": SNAPSHOT_FORMAT,
                "server": {"name": "n", "version": "1"},
                "tools": [{"name": "b", "definition": tool}, {"name": "a", "definition": other}],
            }),
        ];
        for shape in shapes {
            let side = side_of_value("t".into(), shape.clone()).unwrap();
            let names: Vec<&str> = side.surface.tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["a", "b"], "{shape}");
            assert_eq!(side.surface.tools[1].raw, tool);
        }
    }

    #[test]
    fn a_snapshot_keeps_the_identity() {
        let side = side_of_value(
            "t".into(),
            json!({"snapshot_format": SNAPSHOT_FORMAT, "server": {"version": "2.1"}, "tools": []}),
        )
        .unwrap();
        assert_eq!(side.surface.identity.version.as_deref(), Some("2.1"));
        assert!(side.snapshot.is_some());
    }

    #[test]
    fn unusable_documents_are_bad_input() {
        for (bytes, needle) in [
            (&b"{not json"[..], "not valid JSON"),
            (&b"{\"items\": []}"[..], "tools"),
            (&b"\"text\""[..], "not a JSON object"),
            (
                &b"{\"snapshot_format\": \"other/9\", \"tools\": []}"[..],
                "unsupported snapshot_format",
            ),
        ] {
            let error = side_of_json("f.json".into(), bytes).unwrap_err();
            assert!(matches!(error, CliError::BadInput(_)), "{error}");
            assert!(error.to_string().contains(needle), "{error}");
            assert!(error.to_string().starts_with("f.json: "), "{error}");
        }
    }
}
