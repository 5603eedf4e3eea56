//! The surface a test peer serves, as one JSON document shared by every peer kind.
//!
//! Shape: `{"name", "version", "instructions"?, "page_size"?, "tools": [...],
//! "resources"?: [...], "prompts"?: [...], "notify_before_lists"?: bool}`; tools, resources and
//! prompts are raw MCP objects. The Python peer reads it from a file, the rmcp peer from
//! shared state.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A tool object with a name, a description and an object input schema.
pub fn tool(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    })
}

/// `count` tools named `tool-00`, `tool-01`, … (names sort in served order).
pub fn numbered_tools(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| tool(&format!("tool-{i:02}"), &format!("Tool number {i}")))
        .collect()
}

/// A surface with identity, tools and (when given) resources and prompts.
pub fn surface(name: &str, version: &str, tools: Vec<Value>) -> Value {
    json!({
        "name": name,
        "version": version,
        "instructions": format!("Instructions of {name}"),
        "tools": tools,
    })
}

/// A surface file in a temporary directory that a test can rewrite between two probes.
pub struct SurfaceFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl SurfaceFile {
    /// Writes `surface` to a fresh temporary file.
    pub fn new(surface: &Value) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("surface.json");
        let file = SurfaceFile { _dir: dir, path };
        file.write(surface);
        file
    }

    /// Replaces the served surface (atomically, so the peer never reads half a file).
    pub fn write(&self, surface: &Value) {
        let temp = self.path.with_extension("tmp");
        std::fs::write(&temp, serde_json::to_vec_pretty(surface).expect("json"))
            .expect("write surface");
        std::fs::rename(&temp, &self.path).expect("rename surface");
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
