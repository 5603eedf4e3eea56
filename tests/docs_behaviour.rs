//! What the README says about the command line, the reason codes and the benchmark is what
//! the program does: `diff --help` names every format, `--allow-private-targets` follows one
//! rule, the `HTTP_ERROR` / `NOT_JSON` / `TRANSPORT_UNSUPPORTED` rows match what real answers
//! of non-MCP web servers give, and the Performance section names what a plain clone lacks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::any;
use mcp_surface_ledger::mcp::{ProbeOptions, probe};
use mcp_surface_ledger::reason::ReasonCode;
use url::Url;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const HTML: &str = "text/html; charset=utf-8";

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The README's reason-code table row of `code`.
fn reason_row(code: &str) -> String {
    let readme = read("README.md");
    readme
        .lines()
        .find(|line| line.starts_with(&format!("| `{code}` |")))
        .unwrap_or_else(|| panic!("README has a row for {code}"))
        .to_string()
}

fn run(args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env("RUST_LOG", "error");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_") || name.starts_with("ACTOR_") || name.starts_with("LEDGER_") {
            command.env_remove(name);
        }
    }
    command.output().unwrap()
}

#[test]
fn diff_help_names_every_output_format() {
    let output = run(&["diff", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let format_line = help
        .lines()
        .find(|line| line.trim_start().starts_with("--format"))
        .unwrap();
    for format in ["json", "table", "markdown", "html", "sarif"] {
        assert!(format_line.contains(format), "{format}: {format_line}");
    }
    assert!(
        read("README.md").contains("[--format json|table|markdown|html|sarif]"),
        "the README's usage line names the same formats"
    );
}

#[test]
fn allow_private_targets_is_for_the_commands_that_probe_only() {
    let storage = tempfile::tempdir().unwrap();
    let dir = storage.path().to_str().unwrap();
    for command in [
        vec!["serve", "--port", "0", "--storage-dir", dir],
        vec!["verify", "--storage-dir", dir],
        vec!["demo-server", "--change", "http://127.0.0.1:1/mcp"],
    ] {
        let before: Vec<&str> = std::iter::once("--allow-private-targets")
            .chain(command.iter().copied())
            .collect();
        let output = run(&before);
        assert_eq!(output.status.code(), Some(2), "{before:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("never probes"), "{before:?}: {stderr}");
        let mut after = command.clone();
        after.insert(1, "--allow-private-targets");
        let output = run(&after);
        assert_eq!(output.status.code(), Some(2), "{after:?}");
    }
    // snapshot and diff take it before or after the subcommand alike: the closed port is then
    // contacted (exit 3, unreadable), where without the flag the URL is refused (exit 2).
    let url = "http://127.0.0.1:1/mcp";
    assert_eq!(run(&["snapshot", url]).status.code(), Some(2));
    assert_eq!(
        run(&["--allow-private-targets", "snapshot", url])
            .status
            .code(),
        Some(3)
    );
    assert_eq!(
        run(&["snapshot", "--allow-private-targets", url])
            .status
            .code(),
        Some(3)
    );
    let readme = read("README.md");
    assert!(readme.contains("`serve`, `verify` and `demo-server` never probe a\n  server and refuse it in either place (exit 2"));
}

/// A web server that is not an MCP endpoint: `post` answers POST, `get` answers GET.
fn site(post: (StatusCode, &'static str), get_answer: (StatusCode, &'static str)) -> Router {
    Router::new().fallback(any(move |method: axum::http::Method| async move {
        let (status, content_type) = if method == axum::http::Method::POST {
            post
        } else {
            get_answer
        };
        (
            status,
            [(header::CONTENT_TYPE, content_type)],
            "<h1>a web page</h1>",
        )
            .into_response()
    }))
}

async fn code_of(router: Router) -> (ReasonCode, Option<u16>) {
    let addr = support::background::serve(router);
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    match probe(&support::loopback_client(), &url, &ProbeOptions::default()).await {
        Ok(observation) => panic!("{url} is no MCP server, yet it was read: {observation:?}"),
        Err(failure) => (failure.error.reason_code(), failure.http_status),
    }
}

#[tokio::test]
async fn web_servers_that_are_not_mcp_endpoints_get_the_codes_the_readme_names() {
    // A URL that answers every request with one status: HTTP_ERROR, 4xx and 5xx alike.
    for status in [404, 405, 501, 500, 503] {
        let status = StatusCode::from_u16(status).unwrap();
        assert_eq!(
            code_of(site((status, HTML), (status, HTML))).await,
            (ReasonCode::HttpError, Some(status.as_u16()))
        );
    }
    let row = reason_row("HTTP_ERROR");
    for named in ["404", "405", "501", "transient"] {
        assert!(row.contains(named), "{named}: {row}");
    }
    // A site that serves its page to every request, POST included: NOT_JSON.
    let page = (StatusCode::OK, HTML);
    assert_eq!(
        code_of(site(page, page)).await,
        (ReasonCode::NotJson, Some(200))
    );
    assert!(reason_row("NOT_JSON").contains("web page"));
    // A site root or docs page (POST refused, GET a web page): TRANSPORT_UNSUPPORTED.
    for refused in [404, 405] {
        let status = StatusCode::from_u16(refused).unwrap();
        assert_eq!(
            code_of(site((status, HTML), page)).await,
            (ReasonCode::TransportUnsupported, Some(refused))
        );
    }
    let row = reason_row("TRANSPORT_UNSUPPORTED");
    assert!(
        row.contains("site root") && row.contains("404 or 405"),
        "{row}"
    );
}

#[test]
fn the_performance_section_says_what_a_plain_clone_lacks() {
    let readme = read("README.md");
    let (_, performance) = readme.split_once("## Performance").unwrap();
    let fleet = read("examples/bench_fleet.rs");
    let fixture = fleet
        .lines()
        .find_map(|line| line.strip_prefix("const DEFAULT_SURFACE: &str = \""))
        .and_then(|rest| rest.strip_suffix("\";"))
        .expect("bench_fleet names its default surface");
    assert!(performance.contains(fixture), "{fixture}");
    assert!(performance.contains("tests/peers/install.sh"));
    assert!(performance.contains("--skip-python"));
    let script = read("bench/run.sh");
    assert!(script.contains("run tests/peers/install.sh, set PYTHON, or pass --skip-python"));
    assert!(fleet.contains("not found, generating tools"));
}

/// The README's SARIF section counts the rules as the log has them: one per change class,
/// plus the ledger's own. Every class the engine knows is also in `input_schema.json`'s
/// `alert_on` and named in the README's class table.
#[test]
fn the_readme_counts_every_change_class() {
    use mcp_surface_ledger::diff::ChangeClass;
    const WORDS: [&str; 41] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "twenty-one",
        "twenty-two",
        "twenty-three",
        "twenty-four",
        "twenty-five",
        "twenty-six",
        "twenty-seven",
        "twenty-eight",
        "twenty-nine",
        "thirty",
        "thirty-one",
        "thirty-two",
        "thirty-three",
        "thirty-four",
        "thirty-five",
        "thirty-six",
        "thirty-seven",
        "thirty-eight",
        "thirty-nine",
        "forty",
    ];
    let readme = read("README.md");
    let classes = ChangeClass::ALL.len();
    let rules = format!("one per change class, all {}, always", WORDS[classes]);
    assert!(readme.contains(&rules), "README should say: {rules}");
    let schema: serde_json::Value = serde_json::from_str(&read("input_schema.json")).unwrap();
    let listed = &schema["properties"]["alert_on"]["items"]["enum"];
    for class in ChangeClass::ALL {
        let name = class.as_str();
        assert!(
            listed.as_array().unwrap().iter().any(|v| v == name),
            "{name} in alert_on"
        );
        assert!(
            readme.contains(&format!("`{name}`")),
            "{name} in the README"
        );
    }
}
