//! `snapshot` and `diff` read an authenticated surface with a secret header given on the
//! command line (`--header`, `--header-file`, `LEDGER_HEADER`), under the rules of
//! `server_credentials`: sent to the URL's own origin only, never printed.
//!
//! Against the official Python SDK as an OAuth resource server that accepts one token. The
//! binary runs at the most verbose log level, and nothing it prints may contain the token.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};

use serde_json::Value;
use support::auth_peer;
use support::surface::{SurfaceFile, surface, tool};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");
const TOKEN: &str = "cli-canary-9b2f61d0c4";

/// The binary with a clean environment, `extra` environment variables, at trace level.
fn ledger(args: &[&str], extra: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env("RUST_LOG", "trace");
    for (name, _) in std::env::vars() {
        if name.starts_with("APIFY_")
            || name.starts_with("ACTOR_")
            || name.starts_with("LEDGER_")
            || name == "CRAWLEE_STORAGE_DIR"
        {
            command.env_remove(name);
        }
    }
    command.envs(extra.iter().copied());
    command.output().unwrap()
}

/// Exit code, standard output and error, with the check that the token appears in neither.
fn checked(output: Output) -> (i32, String, String) {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "the secret was printed:\n{stdout}\n{stderr}"
    );
    (output.status.code().unwrap_or(-1), stdout, stderr)
}

fn tool_names(snapshot: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(snapshot).unwrap();
    value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_command_line_header_reads_the_authenticated_surface_and_is_never_shown() {
    let file = SurfaceFile::new(&surface(
        "py-private",
        "1.0.0",
        vec![tool("search", "Search things")],
    ));
    let Some(peer) = auth_peer::start_python_accepting(&file, TOKEN) else {
        return support::skip("python auth peer", "tests/peers/install.sh has not run");
    };
    let url = peer.url.as_str();
    let header = format!("Authorization: Bearer {TOKEN}");

    // Without the header the server refuses; the override works before the subcommand.
    let (code, _, stderr) = checked(ledger(&["--allow-private-targets", "snapshot", url], &[]));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("AUTH_REQUIRED"), "{stderr}");

    // --header, after the subcommand's own override flag.
    let (code, stdout, stderr) = checked(ledger(
        &[
            "snapshot",
            "--allow-private-targets",
            "--header",
            &header,
            url,
        ],
        &[],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(tool_names(&stdout), ["search"]);

    // --header-file and LEDGER_HEADER keep the value out of the command line.
    let dir = tempfile::tempdir().unwrap();
    let header_file = dir.path().join("header");
    std::fs::write(&header_file, format!("{header}\n")).unwrap();
    let from_file = [
        "--allow-private-targets",
        "snapshot",
        "--header-file",
        header_file.to_str().unwrap(),
        url,
    ];
    let (code, stdout, stderr) = checked(ledger(&from_file, &[]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(tool_names(&stdout), ["search"]);
    let (code, stdout, stderr) = checked(ledger(
        &["--allow-private-targets", "snapshot", url],
        &[("LEDGER_HEADER", &header)],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(tool_names(&stdout), ["search"]);

    // diff reads both sides with it (same origin); the surface did not change.
    let (code, stdout, stderr) = checked(ledger(
        &[
            "--allow-private-targets",
            "diff",
            url,
            url,
            "--format",
            "json",
        ],
        &[("LEDGER_HEADER", &header)],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"changes\""), "{stdout}");

    // A wrong token: the server's refusal, exit 3, the secret still unshown.
    let wrong = format!("Authorization: Bearer {TOKEN}-wrong");
    let (code, _, stderr) = checked(ledger(
        &[
            "--allow-private-targets",
            "snapshot",
            "--header",
            &wrong,
            url,
        ],
        &[],
    ));
    assert_eq!(code, 3, "{stderr}");
}

#[test]
fn a_header_the_server_refuses_is_auth_rejected_and_no_header_is_auth_required() {
    // The Rust SDK (rmcp) behind a bearer check: a real MCP server that accepts one token.
    let peer = support::rmcp_peer::RmcpPeer::start_requiring(
        surface(
            "rmcp-private",
            "1.0.0",
            vec![tool("search", "Search things")],
        ),
        support::rmcp_peer::RmcpMode::default(),
        TOKEN,
    );
    let url = peer.url.as_str();
    let right = format!("Authorization: Bearer {TOKEN}");
    let (code, stdout, stderr) = checked(ledger(
        &[
            "--allow-private-targets",
            "snapshot",
            "--header",
            &right,
            url,
        ],
        &[],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(tool_names(&stdout), ["search"]);

    // No header: the login wall, and the message does not blame a header that was not sent.
    let (code, _, stderr) = checked(ledger(&["--allow-private-targets", "snapshot", url], &[]));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("(AUTH_REQUIRED)"), "{stderr}");
    assert!(!stderr.contains("AUTH_REJECTED"), "{stderr}");

    // A header sent and refused: AUTH_REJECTED, with what to do, in every way of giving it.
    let wrong = format!("Authorization: Bearer {TOKEN}-wrong");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &wrong).unwrap();
    let path = file.path().to_str().unwrap();
    // (arguments after the override, environment)
    type Way<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let ways: [Way; 3] = [
        (vec!["snapshot", "--header", &wrong, url], vec![]),
        (vec!["snapshot", "--header-file", path, url], vec![]),
        (
            vec!["snapshot", url],
            vec![("LEDGER_HEADER", wrong.as_str())],
        ),
    ];
    for (mut args, env) in ways {
        args.insert(0, "--allow-private-targets");
        let (code, stdout, stderr) = checked(ledger(&args, &env));
        assert_eq!(code, 3, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(
            stderr.contains("not read (AUTH_REJECTED): the server refused the header given")
                && stderr.contains("(HTTP 401); check or renew it"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("AUTH_REQUIRED"), "{stderr}");
    }

    // `diff` probes the same way.
    let (code, _, stderr) = checked(ledger(
        &[
            "--allow-private-targets",
            "diff",
            url,
            url,
            "--header",
            &wrong,
        ],
        &[],
    ));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("(AUTH_REJECTED)"), "{stderr}");
}

#[test]
fn a_command_line_header_is_refused_where_it_could_leak_and_errors_never_show_it() {
    let header = format!("Authorization: Bearer {TOKEN}");
    // Two URLs on different origins: the secret would go to both.
    let (code, _, stderr) = checked(ledger(
        &[
            "--allow-private-targets",
            "diff",
            "http://127.0.0.1:9/mcp",
            "http://127.0.0.1:10/mcp",
            "--header",
            &header,
        ],
        &[],
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("different origins"), "{stderr}");

    // A header that may not carry a credential: named with the origin, value unshown.
    let host = format!("Host: {TOKEN}");
    let (code, _, stderr) = checked(ledger(
        &["snapshot", "--header", &host, "http://127.0.0.1:9/mcp"],
        &[],
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("http://127.0.0.1:9") && stderr.contains("\"Host\""),
        "{stderr}"
    );

    // Not `Name: value` at all.
    let (code, _, stderr) = checked(ledger(
        &["snapshot", "--header", TOKEN, "http://127.0.0.1:9/mcp"],
        &[],
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("Name: value"), "{stderr}");
}

#[test]
fn serve_offers_no_probe_flags_because_it_never_probes() {
    let (code, help, _) = checked(ledger(&["serve", "--help"], &[]));
    assert_eq!(code, 0);
    assert!(help.contains("--storage-dir"), "{help}");
    for flag in ["--allow-private-targets", "--header"] {
        assert!(!help.contains(flag), "serve --help offers {flag}:\n{help}");
    }
}
