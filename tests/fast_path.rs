//! The unchanged-bytes fast path (issue 39, `run::unchanged`): a server whose answers are byte
//! for byte the ones its ledger entry recorded is not built, canonicalized or assessed again.
//!
//! Every scenario runs the same sequence against two ledgers, one with the fast path and one
//! with `RunOptions::always_build_surfaces` (the full path), and requires the same rows from
//! both, run after run; `RunOutcome::surfaces_reused` says when the fast path was taken. A
//! one-byte edit anywhere (a tool on the first or a later cursor page, a prompt, a resource, a
//! resource template, the server info, the instructions) must leave the fast path and be
//! reported as the full path reports it. The server is hand-written (`support/paged_mcp.rs`)
//! so that every byte of every answer is the test's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/paged_mcp.rs"]
mod paged_mcp;
mod support;

use actor::{RunDir, stable};
use mcp_surface_ledger::run::{RunOptions, RunOutcome};
use paged_mcp::{Answers, PagedMcp, Release};
use serde_json::{Value, json};

/// The committed release the scenarios start from: 5 tools, 3 prompts, 3 resources and a
/// template, 2 items per page, instructions.
fn base() -> Answers {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay/declared/r1.json");
    Release::from_file(&path).answers()
}

/// Changes the byte right after the first `needle` in `text` (a letter or digit to another).
fn flip(text: &str, needle: &str) -> String {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in {text}"))
        + needle.len();
    let mut bytes = text.as_bytes().to_vec();
    bytes[at] = match bytes[at] {
        b'z' | b'Z' | b'9' => bytes[at] - 1,
        b => b + 1,
    };
    String::from_utf8(bytes).unwrap()
}

/// One edit of one answer: where, and what it does to the answers.
struct Edit {
    what: &'static str,
    apply: fn(&mut Answers),
    /// Whether the full path reports a change for it.
    reported: bool,
}

fn page<'a>(answers: &'a mut Answers, method: &str, index: usize) -> &'a mut String {
    let pages = answers.pages.get_mut(method).unwrap();
    let index = index.min(pages.len() - 1);
    &mut pages[index]
}

fn edits() -> Vec<Edit> {
    vec![
        Edit {
            what: "a tool on the first page",
            apply: |a| {
                let p = page(a, "tools/list", 0);
                *p = flip(p, r#""description":""#);
            },
            reported: true,
        },
        Edit {
            what: "a tool on a later cursor page",
            apply: |a| {
                let p = page(a, "tools/list", usize::MAX);
                *p = flip(p, r#""description":""#);
            },
            reported: true,
        },
        Edit {
            what: "a prompt on a later page",
            apply: |a| {
                let p = page(a, "prompts/list", 1);
                *p = flip(p, r#""description":""#);
            },
            reported: true,
        },
        Edit {
            what: "a resource",
            apply: |a| {
                let p = page(a, "resources/list", 0);
                *p = flip(p, r#""mimeType":"text/"#);
            },
            reported: true,
        },
        Edit {
            what: "a resource template",
            apply: |a| {
                let p = page(a, "resources/templates/list", 0);
                *p = flip(p, r#""uriTemplate":"notes:///{"#);
            },
            reported: true,
        },
        Edit {
            what: "the server info",
            apply: |a| a.discover = flip(&a.discover, r#""version":""#),
            reported: true,
        },
        Edit {
            what: "the instructions",
            apply: |a| a.discover = flip(&a.discover, r#""instructions":""#),
            reported: true,
        },
        Edit {
            what: "white space in a later tools page (a new digest, nothing to report)",
            apply: |a| {
                let p = page(a, "tools/list", usize::MAX);
                *p = p.replacen('{', "{ ", 1);
            },
            reported: false,
        },
    ]
}

/// Every class, so that every change is a row.
fn input(url: &str) -> Value {
    let classes: Vec<&str> = mcp_surface_ledger::diff::ChangeClass::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    json!({"servers": [url], "alert_on": classes, "count_resources_and_prompts": true})
}

/// A ledger read with the fast path and one read with the full path, side by side.
struct Pair {
    fast: RunDir,
    full: RunDir,
    input: Value,
}

impl Pair {
    fn new(url: &str) -> Pair {
        Pair {
            fast: RunDir::new(),
            full: RunDir::new(),
            input: input(url),
        }
    }

    /// Runs both; requires the same rows (clock and wire fields aside) and returns how many
    /// surfaces the fast one reused and its rows.
    async fn run(&self, what: &str) -> (usize, Vec<Value>) {
        let fast = run(&self.fast, &self.input, false).await;
        let full = run(&self.full, &self.input, true).await;
        assert_eq!(
            full.surfaces_reused, 0,
            "{what}: the full path reused a surface"
        );
        let rows = |dir: &RunDir| dir.rows().iter().map(stable).collect::<Vec<_>>();
        let (fast_rows, full_rows) = (rows(&self.fast), rows(&self.full));
        actor::assert_rows_eq(&fast_rows, &full_rows);
        (fast.surfaces_reused, fast_rows)
    }
}

async fn run(dir: &RunDir, input: &Value, always_build_surfaces: bool) -> RunOutcome {
    let options = RunOptions {
        always_build_surfaces,
        ..RunOptions::default()
    };
    match dir.run_with_options(input, options, &[]).await {
        Ok(outcome) => outcome,
        Err(error) => panic!("the run failed: {error}"),
    }
}

fn change_rows(rows: &[Value]) -> usize {
    rows.iter().filter(|r| r["record_type"] == "change").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_byte_edit_anywhere_leaves_the_fast_path_and_is_reported_as_before() {
    for edit in edits() {
        let server = PagedMcp::start(base());
        let pair = Pair::new(&server.url);
        let what = edit.what;
        let (reused, _) = pair.run(what).await;
        assert_eq!(reused, 0, "{what}: a first read has nothing to reuse");
        let (reused, rows) = pair.run(what).await;
        assert_eq!(reused, 1, "{what}: unchanged answers take the fast path");
        assert_eq!(change_rows(&rows), 0, "{what}");

        let mut answers = server.answers();
        (edit.apply)(&mut answers);
        assert_ne!(
            answers,
            server.answers(),
            "{what}: the edit changed nothing"
        );
        server.set(answers);
        let (reused, rows) = pair.run(what).await;
        assert_eq!(reused, 0, "{what}: edited answers took the fast path");
        assert_eq!(change_rows(&rows) > 0, edit.reported, "{what}: {rows:#?}");

        let (reused, rows) = pair.run(what).await;
        assert_eq!(reused, 1, "{what}: the edited answers, unchanged again");
        assert_eq!(change_rows(&rows), 0, "{what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_change_with_the_same_bytes_is_reported_by_the_full_path() {
    let server = PagedMcp::start(base());
    let pair = Pair::new(&server.url);
    pair.run("baseline").await;
    server.set_unauthorized(true);
    let (reused, _) = pair.run("auth required").await;
    assert_eq!(reused, 0);
    server.set_unauthorized(false);
    // The same bytes as the entry's, but the server no longer asks for auth: that is a change
    // the fast path cannot report, so the read takes the full path.
    let (reused, rows) = pair.run("readable again").await;
    assert_eq!(reused, 0, "an auth change took the fast path");
    assert!(
        rows.iter()
            .any(|r| r["change_class"] == "auth_requirement_changed"),
        "{rows:#?}"
    );
    let (reused, _) = pair.run("unchanged").await;
    assert_eq!(reused, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_surface_with_invalid_tools_always_takes_the_full_path() {
    let mut release = Release::from_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/replay/declared/r1.json"),
    );
    release
        .tools
        .push(json!({"name": "", "description": "no name"}));
    let server = PagedMcp::start(release.answers());
    let pair = Pair::new(&server.url);
    for what in ["first", "second", "third"] {
        let (reused, rows) = pair.run(what).await;
        assert_eq!(reused, 0, "{what}");
        assert_eq!(rows[0]["invalid_tools_total"], 1, "{what}");
    }
}

/// A real peer, the official Python SDK on the classic era, answering as an event stream (or
/// plain JSON): its unchanged answers take the fast path from the second read on, and a
/// one-character edit of a tool on its second page is reported as the full path reports it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_peer_takes_the_fast_path_and_its_edits_do_not() {
    use support::python::PythonMode;
    use support::surface::{SurfaceFile, numbered_tools};
    let surface = |description: &str| {
        let mut tools = numbered_tools(5);
        tools[3]["description"] = json!(description);
        json!({
            "name": "py-fast", "version": "1.0.0", "page_size": 2, "tools": tools,
            "prompts": [{"name": "greet", "description": "Greets the user"}],
            "resources": [{"uri": "file:///a.md", "name": "a.md", "mimeType": "text/markdown"}],
        })
    };
    for json_response in [false, true] {
        let file = SurfaceFile::new(&surface("Reads the fourth thing."));
        let mode = PythonMode {
            json_response,
            stateless: false,
        };
        let Some(peer) = support::python::start(&file, mode) else {
            return support::skip("fast path, Python peer", "Python peer not installed");
        };
        let pair = Pair::new(peer.url().as_str());
        let what = if json_response {
            "JSON"
        } else {
            "event stream"
        };
        assert_eq!(pair.run(what).await.0, 0, "{what}: first read");
        assert_eq!(pair.run(what).await.0, 1, "{what}: unchanged");
        file.write(&surface("Reads the fourth thinG."));
        let (reused, rows) = pair.run(what).await;
        assert_eq!(reused, 0, "{what}: edited");
        assert!(
            rows.iter()
                .any(|r| r["change_class"] == "tool_description_changed"),
            "{what}: {rows:#?}"
        );
        assert_eq!(pair.run(what).await.0, 1, "{what}: unchanged again");
    }
}
