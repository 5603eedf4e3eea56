//! The HTML report renders in a real browser (headless Chromium): the summary numbers, the
//! servers table and every change row are in the rendered DOM, and a screenshot is saved under
//! `target/`. Skips with a note when `/usr/bin/chromium` is absent (`tests/browser/install.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

mod support;

use support::browser;

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::Utc;
use mcp_surface_ledger::diff::{Change, ChangeClass, Severity};
use mcp_surface_ledger::reason::ReasonCode;
use mcp_surface_ledger::report::html::{self, Page};
use mcp_surface_ledger::report::{ChangeRow, LedgerStatus, ServerRow, SummaryRow};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-surface-ledger");

/// The rendered DOM (or another output, by `extra`) of a local page at desktop size.
fn chromium(page: &Path, extra: &str) -> String {
    browser::chromium(&browser::file_url(page), browser::DESKTOP, extra)
}

fn target_dir() -> PathBuf {
    browser::target_dir()
}

fn stat(dom: &str, key: &str, value: usize) -> bool {
    dom.contains(&format!(
        "<li data-stat=\"{key}\"><span class=\"num\">{value}</span>"
    ))
}

#[test]
fn diff_report_renders_summary_and_every_change() {
    if !browser::available() {
        support::skip(
            "diff_report_renders_summary_and_every_change",
            "chromium absent",
        );
        return;
    }
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/github-mcp-server");
    if !fixtures.is_dir() {
        support::skip(
            "diff_report_renders_summary_and_every_change",
            "../shared/fixtures absent",
        );
        return;
    }
    let (before, after) = (fixtures.join("v0.30.3.json"), fixtures.join("v0.31.0.json"));
    let run = |format: &str| {
        let output = Command::new(BIN)
            .args([
                "diff",
                before.to_str().unwrap(),
                after.to_str().unwrap(),
                "--format",
                format,
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        output.stdout
    };
    let document: Value = serde_json::from_slice(&run("json")).unwrap();
    let changes = document["changes"].as_array().unwrap();
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("report.html");
    std::fs::write(&page, run("html")).unwrap();

    let dom = chromium(&page, "--dump-dom");
    assert!(
        dom.contains("<h1>MCP surface diff</h1>"),
        "page did not render"
    );
    assert!(stat(&dom, "changes_total", changes.len()));
    for severity in ["high", "medium", "low"] {
        let count = document["changes_by_severity"][severity]
            .as_u64()
            .unwrap_or(0) as usize;
        assert!(
            stat(&dom, &format!("severity_{severity}"), count),
            "{severity}"
        );
    }
    assert_eq!(
        dom.matches("<details class=\"change sev-").count(),
        changes.len()
    );
    for change in changes {
        let marker = format!(
            "data-class=\"{}\"",
            change["change_class"].as_str().unwrap()
        );
        assert!(dom.contains(&marker));
        if let Some(tool) = change["tool_name"].as_str() {
            assert!(dom.contains(&format!("<code>{tool}</code>")), "{tool}");
        }
    }
    assert!(dom.contains("<tr id=\"server-0\">"));

    let screenshot = target_dir().join("report.png");
    let _ = std::fs::remove_file(&screenshot);
    chromium(&page, &format!("--screenshot={}", screenshot.display()));
    assert!(
        std::fs::metadata(&screenshot)
            .map(|m| m.len() > 1000)
            .unwrap_or(false)
    );
}

fn server(index: usize, changes: usize) -> ServerRow {
    let ok = index % 10 != 3;
    ServerRow {
        record_type: "server",
        server_url: format!("https://mcp{index:03}.example.com/mcp"),
        ok,
        reason_code: Some(if ok {
            ReasonCode::Ok
        } else {
            ReasonCode::Timeout
        }),
        transport: ok.then(|| "streamable-http".to_string()),
        protocol_version: ok.then(|| "2025-11-25".to_string()),
        protocol_era: ok.then(|| "classic".to_string()),
        tools_total: ok.then_some(index % 40),
        ledger_status: Some(if ok {
            LedgerStatus::Compared
        } else {
            LedgerStatus::Unavailable
        }),
        change_count: changes,
        ..ServerRow::default()
    }
}

#[test]
fn a_run_of_200_servers_renders() {
    if !browser::available() {
        support::skip("a_run_of_200_servers_renders", "chromium absent");
        return;
    }
    let mut servers = Vec::new();
    let mut changes = Vec::new();
    for index in 0..200 {
        let count = if index % 7 == 0 { 2 } else { 0 };
        let row = server(index, count);
        for n in 0..count {
            let change = Change::new(
                ChangeClass::ToolDescriptionChanged,
                Some(&format!("tool_{n}")),
                "description",
                Some(json!("Lists <open> issues")),
                Some(json!("Lists <open> issues </pre><script>alert(1)</script>")),
                if n == 0 {
                    Severity::High
                } else {
                    Severity::Low
                },
            );
            changes.push(ChangeRow::of(&row.server_url, &change, Utc::now()));
        }
        servers.push(row);
    }
    let summary = SummaryRow::tally(&servers, &changes);
    let page_html = html::render(&Page::of_run(&summary, &servers, &changes));
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("report.html");
    std::fs::write(&page, page_html).unwrap();

    let dom = chromium(&page, "--dump-dom");
    assert_eq!(dom.matches("<tr id=\"server-").count(), 200);
    assert!(stat(&dom, "servers_requested", 200));
    assert!(stat(&dom, "servers_changed", summary.servers_changed));
    assert!(stat(&dom, "changes_total", changes.len()));
    assert_eq!(
        dom.matches("<details class=\"change sev-").count(),
        changes.len()
    );
    assert!(!dom.contains("<script>"), "hostile text became markup");

    let screenshot = target_dir().join("report-200.png");
    let _ = std::fs::remove_file(&screenshot);
    chromium(&page, &format!("--screenshot={}", screenshot.display()));
    assert!(
        std::fs::metadata(&screenshot)
            .map(|m| m.len() > 1000)
            .unwrap_or(false)
    );
}
