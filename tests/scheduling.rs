//! The scheduling examples of README.md ("Local scheduling") are the files under
//! `examples/scheduling/`, shown verbatim, and the cron wrapper works as cron runs it: with
//! only `PATH=/usr/bin:/bin` in its environment, the binary's absolute path set the documented
//! way (the `BIN=` line), silent after a clean run, one line and the run's exit code otherwise.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::rmcp_peer::{RmcpMode, RmcpPeer};
use support::surface::{surface, tool};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scheduling")
}

fn example(name: &str) -> String {
    std::fs::read_to_string(examples().join(name)).unwrap()
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

#[test]
fn the_readme_shows_every_scheduling_file_verbatim() {
    let readme = readme();
    for name in [
        "watch.json",
        "watch-mcp",
        "mcp-ledger.cron",
        "mcp-ledger.service",
        "mcp-ledger.timer",
    ] {
        let text = example(name);
        assert!(
            readme.contains(&text),
            "README.md does not show examples/scheduling/{name} verbatim"
        );
        assert!(
            readme.contains(&format!("examples/scheduling/{name}")),
            "README.md does not name examples/scheduling/{name}"
        );
    }
}

#[test]
fn the_examples_run_the_binary_by_absolute_path_as_an_unprivileged_user_and_name_no_missing_unit() {
    // The wrapper runs the ledger only through "$BIN", set to an absolute path.
    let script = example("watch-mcp");
    for line in script.lines().filter(|l| !l.trim_start().starts_with('#')) {
        if line.contains("mcp-surface-ledger") {
            assert!(line.starts_with("BIN=/"), "bare or relative call: {line}");
        }
    }
    assert!(script.contains("\"$BIN\" --input"), "{script}");
    // cron.d: a user column that is not root, every program by absolute path.
    let cron = example("mcp-ledger.cron");
    let job = cron
        .lines()
        .find(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap();
    let fields: Vec<&str> = job.split_whitespace().collect();
    assert_eq!(fields[5], "mcp-ledger", "{job}");
    assert!(
        fields[6..]
            .iter()
            .all(|f| !f.contains('/') || f.starts_with('/')),
        "{job}"
    );
    assert!(fields[6].starts_with('/'), "{job}");
    // systemd: an unprivileged user, the binary by absolute path, no unit that is not shipped.
    let service = example("mcp-ledger.service");
    assert!(service.contains("\nUser=mcp-ledger\n"), "{service}");
    assert!(
        service.contains("\nExecStart=/usr/local/bin/mcp-surface-ledger "),
        "{service}"
    );
    for unit in [&service, &example("mcp-ledger.timer")] {
        for line in unit.lines() {
            for key in ["OnFailure=", "OnSuccess=", "Wants=", "Requires=", "After="] {
                assert!(!line.starts_with(key), "names another unit: {line}");
            }
        }
    }
    // The README says where the binary goes and where the user comes from.
    let readme = readme();
    for step in [
        "install -m 755 target/release/mcp-surface-ledger /usr/local/bin/mcp-surface-ledger",
        "useradd --system",
    ] {
        assert!(readme.contains(step), "README lacks {step:?}");
    }
    // The documented INPUT asks for every condition, and is a valid input.
    let watch: Value = serde_json::from_str(&example("watch.json")).unwrap();
    assert_eq!(
        watch["exit_nonzero_on"],
        json!([
            "nothing_read",
            "some_unreadable",
            "auth_rejected",
            "registry_failed",
            "chain_not_intact"
        ])
    );
    mcp_surface_ledger::input::Input::from_value(Some(&watch)).unwrap();
}

/// The wrapper installed the documented way: the three paths at its top set for this machine.
struct Installed {
    dir: tempfile::TempDir,
}

impl Installed {
    fn new() -> Installed {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        let mut set = 0;
        let script: Vec<String> = example("watch-mcp")
            .lines()
            .map(|line| {
                let value = match line.split_once('=') {
                    Some(("BIN", _)) => actor::BINARY.to_string(),
                    Some(("STATE", _)) => dir.path().join("state").display().to_string(),
                    Some(("INPUT", _)) => dir.path().join("watch.json").display().to_string(),
                    // This machine has no system log: a file outside the state folder.
                    Some(("HEADS", _)) => {
                        dir.path().join("heads/heads.jsonl").display().to_string()
                    }
                    _ => return line.to_string(),
                };
                set += 1;
                format!("{}={value}", line.split_once('=').unwrap().0)
            })
            .collect();
        assert_eq!(
            set, 4,
            "the wrapper no longer starts with BIN=, STATE=, INPUT=, HEADS="
        );
        std::fs::create_dir_all(dir.path().join("heads")).unwrap();
        std::fs::write(dir.path().join("watch-mcp"), script.join("\n") + "\n").unwrap();
        Installed { dir }
    }

    /// Writes the documented watch.json with these servers instead of the example ones.
    fn watch(&self, servers: &[&str]) {
        let mut input: Value = serde_json::from_str(&example("watch.json")).unwrap();
        input["servers"] = json!(servers);
        std::fs::write(self.dir.path().join("watch.json"), input.to_string()).unwrap();
    }

    /// Runs the wrapper as cron does: `env -i PATH=/usr/bin:/bin`, plus `extra` variables
    /// (lines of the cron.d file).
    fn run(&self, extra: &[&str]) -> Output {
        Command::new("/usr/bin/env")
            .arg("-i")
            .arg("PATH=/usr/bin:/bin")
            .args(extra)
            .arg("/bin/sh")
            .arg(self.dir.path().join("watch-mcp"))
            .output()
            .unwrap()
    }

    fn kept_runs(&self) -> usize {
        std::fs::read_dir(self.dir.path().join("state/runs"))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    fn ledger_path(&self) -> PathBuf {
        self.dir
            .path()
            .join("state/storage/key_value_stores/mcp-tool-surface-ledger/prod-agents.json")
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_cron_wrapper_under_crons_path_is_silent_when_clean_and_says_why_otherwise() {
    let peer = RmcpPeer::start(
        surface("watched", "1.0.0", vec![tool("search", "Search things")]),
        RmcpMode::default(),
    );
    let installed = Installed::new();
    // The server is on loopback: the cron.d file's LEDGER_ALLOW_PRIVATE_TARGETS line.
    let own_network = ["LEDGER_ALLOW_PRIVATE_TARGETS=1"];
    installed.watch(&[peer.url.as_str()]);
    let output = installed.run(&own_network);
    let log = std::fs::read_to_string(installed.dir.path().join("state/run.log")).unwrap();
    assert_eq!(output.status.code(), Some(0), "{}\n{log}", stdout(&output));
    assert_eq!(stdout(&output), "", "a clean run mails nothing");
    // The run's chain head went out of the state folder, and verify takes it as a witness.
    let heads = installed.dir.path().join("heads/heads.jsonl");
    let verified = std::process::Command::new(actor::BINARY)
        .args(["verify", "--storage-dir"])
        .arg(installed.dir.path().join("state/storage"))
        .args(["--ledger", "prod-agents", "--heads"])
        .arg(&heads)
        .output()
        .unwrap();
    let verdict: Value = serde_json::from_slice(&verified.stdout).unwrap();
    assert_eq!(verified.status.code(), Some(0), "{verdict}");
    assert_eq!(verdict["status"], "intact", "{verdict}");
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(installed.kept_runs(), 1);

    // Without the line, the loopback server is a blocked entry: incomplete, exit 4, one line.
    let output = installed.run(&[]);
    assert_eq!(output.status.code(), Some(4), "{}", stdout(&output));
    let said = stdout(&output);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("MCP watch incomplete (exit_nonzero_on): ")
            && said.contains("exit code 4 for exit_nonzero_on: ")
            && said.contains("some_unreadable (1 blocked)"),
        "{said}"
    );

    // A ledger whose chain head was edited: exit 5.
    let mut index: Value =
        serde_json::from_slice(&std::fs::read(installed.ledger_path()).unwrap()).unwrap();
    index["chain"]["head"] = json!("cd".repeat(32));
    std::fs::write(installed.ledger_path(), index.to_string()).unwrap();
    let output = installed.run(&own_network);
    assert_eq!(output.status.code(), Some(5), "{}", stdout(&output));
    let said = stdout(&output);
    assert!(
        said.starts_with("MCP ledger chain not intact, check it with verify: ")
            && said.contains("chain_not_intact (ledger chain broken)"),
        "{said}"
    );
    assert_eq!(
        installed.kept_runs(),
        3,
        "the rows of every finished run are kept"
    );

    // An INPUT the binary refuses: exit 2, the reason in the one line.
    std::fs::write(installed.dir.path().join("watch.json"), "{\"servers\": 7}").unwrap();
    let output = installed.run(&own_network);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(
        stdout(&output).starts_with("watch.json refused, nothing checked: ")
            && stdout(&output).contains("`servers`"),
        "{}",
        stdout(&output)
    );
}
