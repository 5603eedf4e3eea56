//! Prints how long the surface core takes on a 5,000-tool surface: canonicalize + hash + diff,
//! next to plain SHA-256 of the same canonical bytes. Run with `cargo bench --bench core`.

use mcp_surface_ledger::diff::compare;
use mcp_surface_ledger::surface::{ServerIdentity, Surface, canonicalize, sha256_hex};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

const TOOLS: usize = 5_000;
const ROUNDS: usize = 7;

/// A realistic tool: a few typed parameters, an enum, bounds, annotations.
fn tool(i: usize, revision: usize) -> Value {
    let mut t = json!({
        "name": format!("tool_{i:05}"),
        "description": format!("Does thing number {i}. Use it when the user asks for {i}."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string", "description": "Repository name"},
                "page": {"type": "number", "minimum": 1, "description": "Page number"},
                "perPage": {"type": "number", "minimum": 1, "maximum": 100},
                "state": {"type": "string", "enum": ["open", "closed", "all"]},
                "labels": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["owner", "repo"]
        },
        "annotations": {"readOnlyHint": i.is_multiple_of(3), "title": format!("Tool {i}")}
    });
    // Every 50th tool changes in the new revision: a new required parameter and a hint flip.
    if revision == 1 && i.is_multiple_of(50) {
        t["inputSchema"]["required"] = json!(["owner", "repo", "state"]);
        t["annotations"]["readOnlyHint"] = json!(false);
    }
    t
}

fn surface(revision: usize) -> Surface {
    let tools = (0..TOOLS).map(|i| tool(i, revision)).collect();
    Surface::from_tools(ServerIdentity::default(), tools).unwrap_or_default()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> Duration {
    let samples = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect();
    median(samples)
}

fn main() {
    let (old, new) = (surface(0), surface(1));
    let tools_array = Value::Array(new.tools.iter().map(|t| t.raw.clone()).collect());
    let bytes = canonicalize(&tools_array).unwrap_or_default();

    let sha_only = time(|| sha256_hex(&bytes));
    let canon_hash = time(|| sha256_hex(&canonicalize(&tools_array).unwrap_or_default()));
    let tool_digest = time(|| new.tool_digest());
    let per_tool = time(|| new.tools.iter().map(|t| t.digests()).collect::<Vec<_>>());
    let diff = time(|| compare(&old, &new).len());
    let all = time(|| {
        (
            new.tool_digest(),
            new.tools.iter().map(|t| t.digests()).collect::<Vec<_>>(),
            compare(&old, &new).len(),
        )
    });

    println!(
        "surface core bench: {TOOLS} tools, {} canonical bytes, median of {ROUNDS} rounds",
        bytes.len()
    );
    println!("  plain sha256 of the canonical bytes      {sha_only:>12.3?}");
    println!("  canonicalize + sha256 (tools array)      {canon_hash:>12.3?}");
    println!("  tool_digest (streamed canonicalize + hash) {tool_digest:>11.3?}");
    println!("  per-tool digests (8 hashes per tool)     {per_tool:>12.3?}");
    println!(
        "  compare old/new ({} changes)            {diff:>12.3?}",
        compare(&old, &new).len()
    );
    println!("  canonicalize + hash + diff (all above)   {all:>12.3?}");
}
