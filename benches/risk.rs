//! Prints how long the risk assessment takes per tool, the way `report::summarize_tools` runs it:
//! one `ScanCache` per surface, `assess_tool_with` on every tool. Two corpora: the first 50 tools
//! of the GitHub MCP server v1.6.0 (the tools of the issue-9 whole-run bench) and every tool of
//! its ten releases, one surface per release. When `../shared/fixtures` is absent both fall back
//! on a generated corpus. Last, the cost of one uncached `scan_text` over each distinct text of
//! the corpus. Run with `cargo bench --bench risk`.

use mcp_surface_ledger::risk::{
    ScanCache, assess_tool_with, capability, hints, poison, scan_text, texts,
};
use serde_json::{Value, json};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Tools of the whole-run bench (bench/run.sh takes the first 50 tools of v1.6.0).
const RUN_TOOLS: usize = 50;
const RELEASES: &[&str] = &[
    "v0.23.0", "v0.24.0", "v0.26.3", "v0.27.0", "v0.30.3", "v0.31.0", "v1.3.0", "v1.4.0", "v1.5.0",
    "v1.6.0",
];
/// How many times each measurement is repeated; the median is printed.
const ROUNDS: usize = 31;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/github-mcp-server")
}

/// The `tools` array of one release, `None` when the file is missing or not a tools/list answer.
fn release_tools(version: &str) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(fixtures_dir().join(format!("{version}.json"))).ok()?;
    let answer: Value = serde_json::from_str(&text).ok()?;
    answer.get("tools")?.as_array().cloned()
}

/// A stand-in for a real surface: repeated parameter texts, enums, annotations, varied names.
fn generated_tools(count: usize, seed: usize) -> Vec<Value> {
    const VERBS: &[&str] = &["get", "list", "create", "update", "delete", "search", "run"];
    const NOUNS: &[&str] = &[
        "issue",
        "pull_request",
        "workflow",
        "file",
        "secret",
        "comment",
    ];
    (0..count)
        .map(|i| {
            let verb = VERBS[(i + seed) % VERBS.len()];
            let noun = NOUNS[(i * 7 + seed) % NOUNS.len()];
            json!({
                "name": format!("{verb}_{noun}_{i}"),
                "description": format!(
                    "{verb} a {noun} in a GitHub repository. Use this when the user asks about \
                     {noun} number {i}; returns the {noun} as JSON with its URL."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "owner": {"type": "string", "description": "Repository owner"},
                        "repo": {"type": "string", "description": "Repository name"},
                        "page": {"type": "number", "minimum": 1, "description": "Page number for pagination (min 1)"},
                        "perPage": {"type": "number", "description": "Results per page for pagination (min 1, max 100)"},
                        "method": {"type": "string", "enum": ["get", "list", "update"], "description": "The method to execute"},
                        "body": {"type": "string", "description": format!("The new {noun} body, in markdown")}
                    },
                    "required": ["owner", "repo"]
                },
                "annotations": {"readOnlyHint": verb == "get" || verb == "list", "title": format!("{verb} {noun}")}
            })
        })
        .collect()
}

/// The two corpora as lists of surfaces (each surface a list of tools), with a label.
fn corpora() -> Vec<(String, Vec<Vec<Value>>)> {
    let releases: Option<Vec<Vec<Value>>> = RELEASES.iter().map(|v| release_tools(v)).collect();
    match releases {
        Some(releases) => {
            let run_tools = releases
                .last()
                .map(|tools| tools.iter().take(RUN_TOOLS).cloned().collect())
                .unwrap_or_default();
            vec![
                (format!("v1.6.0, first {RUN_TOOLS} tools"), vec![run_tools]),
                ("all 10 releases, one surface each".to_string(), releases),
            ]
        }
        None => {
            println!(
                "note: {} not found, timing a generated corpus instead",
                fixtures_dir().display()
            );
            vec![
                (
                    format!("generated, {RUN_TOOLS} tools"),
                    vec![generated_tools(RUN_TOOLS, 0)],
                ),
                (
                    "generated, 10 surfaces of 80 tools".to_string(),
                    (0..10).map(|seed| generated_tools(80, seed)).collect(),
                ),
            ]
        }
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Median over `ROUNDS` of one pass over every surface, in microseconds per tool.
fn per_tool_micros<T>(surfaces: &[Vec<Value>], mut pass: impl FnMut(&[Value]) -> T) -> f64 {
    let tools: usize = surfaces.iter().map(Vec::len).sum();
    let samples = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for surface in surfaces {
                black_box(pass(surface));
            }
            start.elapsed()
        })
        .collect();
    median(samples).as_secs_f64() * 1e6 / tools.max(1) as f64
}

/// The whole assessment, one scan cache per surface as `report::summarize_tools` does.
fn assess_surface(tools: &[Value]) -> usize {
    let mut cache = ScanCache::default();
    tools
        .iter()
        .map(|tool| assess_tool_with(&mut cache, tool).findings.len())
        .sum()
}

/// Only the text scan (poisoning markers), cache per surface.
fn scan_surface(tools: &[Value]) -> usize {
    let mut cache = ScanCache::default();
    tools
        .iter()
        .map(|tool| poison::scan_tool_with(&mut cache, tool).len())
        .sum()
}

/// Every distinct text of the corpus scanned once, without a cache: the cost of one text scan
/// (tokens, character markers, phrase index and rules) on its own.
fn distinct_texts(surfaces: &[Vec<Value>]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut distinct = Vec::new();
    for tool in surfaces.iter().flatten() {
        texts::for_each(tool, &mut |_, text| {
            if seen.insert(text.to_string()) {
                distinct.push(text.to_string());
            }
        });
    }
    distinct
}

/// Only the capability inference.
fn infer_surface(tools: &[Value]) -> usize {
    tools
        .iter()
        .map(|tool| capability::infer(tool, &hints::EffectiveHints::of(tool)).len())
        .sum()
}

fn main() {
    println!("risk bench: median of {ROUNDS} rounds, microseconds per tool");
    for (label, surfaces) in corpora() {
        let tools: usize = surfaces.iter().map(Vec::len).sum();
        println!("  {label} ({tools} tools)");
        let assess = per_tool_micros(&surfaces, assess_surface);
        let scan = per_tool_micros(&surfaces, scan_surface);
        let infer = per_tool_micros(&surfaces, infer_surface);
        println!("    assess_tool_with (ScanCache per surface)  {assess:>9.2} µs/tool");
        println!("      of which poison::scan_tool_with         {scan:>9.2} µs/tool");
        println!("      of which capability::infer              {infer:>9.2} µs/tool");
        let distinct = distinct_texts(&surfaces);
        let samples = (0..ROUNDS)
            .map(|_| {
                let start = Instant::now();
                for text in &distinct {
                    black_box(scan_text("/description", text));
                }
                start.elapsed()
            })
            .collect();
        let per_text = median(samples).as_secs_f64() * 1e6 / distinct.len().max(1) as f64;
        println!(
            "    scan_text, each of {} distinct texts once  {per_text:>9.2} µs/text",
            distinct.len()
        );
    }
}
