//! `notify`: after a run's ledger is written, each destination gets one message about the
//! changes its filters select. Receivers on 127.0.0.1 record what arrives and answer as each
//! test scripts them; webhook deliveries are checked with the Standard Webhooks reference
//! library (Python `standardwebhooks`, installed by `tests/peers/install.sh`; skipped with a
//! note when absent), including a tampered body and an old timestamp being rejected.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/actor.rs"]
mod actor;
#[path = "support/receiver.rs"]
mod receiver;
#[path = "support/sample_rows.rs"]
mod sample_rows;
mod support;
#[path = "support/switchable.rs"]
mod switchable;

use std::process::Command;
use std::time::Duration;

use base64::Engine;
use mcp_surface_ledger::run::{self, RunOutcome};
use mcp_surface_ledger::shard::placement::{place, server_id};
use serde_json::{Value, json};

use actor::{Rows, RunDir};
use receiver::{Receiver, python_signature, readme_verify, secret_of, verify_with_reference};
use support::surface::{surface, tool};
use switchable::Switchable;

/// A server whose second run adds a tool: run 1 makes the baseline (no change row), run 2
/// records a `tool_added` and more.
struct Fleet {
    server: Switchable,
    dir: RunDir,
}

impl Fleet {
    fn new() -> Fleet {
        Fleet {
            server: Switchable::start(surface("watched", "1", vec![tool("search", "Search")])),
            dir: RunDir::new(),
        }
    }

    fn input(&self, notify: Value) -> Value {
        json!({
            "servers": [self.server.url.as_str()],
            "ledger_name": "fleet",
            "notify": notify,
        })
    }

    /// Adds a destructive tool to the served surface.
    fn change(&self) {
        self.server.set_surface(surface(
            "watched",
            "1",
            vec![
                tool("search", "Search"),
                tool("delete_repo", "Deletes a repository permanently"),
            ],
        ));
    }

    /// The two runs, with the change between them; returns the second run's outcome.
    async fn two_runs(&self, notify: Value) -> RunOutcome {
        let first = self.dir.run_ok(&self.input(notify.clone()), None).await;
        for outcome in first.summary.notifications.as_ref().unwrap() {
            assert_eq!(outcome.status, "nothing_matched", "{outcome:?}");
            assert_eq!(outcome.attempts, 0);
        }
        self.change();
        self.dir.run_ok(&self.input(notify), None).await
    }
}

#[tokio::test]
async fn webhook_deliveries_verify_with_the_reference_library_and_forgeries_do_not() {
    let receiver = Receiver::start();
    let fleet = Fleet::new();
    let secret = secret_of(7);
    let notify = json!([
        {"url": receiver.url("hooks/soc", &[]), "secret": secret, "label": "soc"},
        // A filter nothing in run 2 passes: that destination is never contacted.
        {"url": receiver.url("hooks/auth", &[]), "secret": secret_of(8),
         "classes": ["auth_requirement_changed"]},
    ]);
    receiver.watch("hooks/soc", fleet.dir.ledger_path("fleet"));
    let outcome = fleet.two_runs(notify).await;
    assert_eq!(outcome.exit_code(), 0);
    assert!(receiver.received("hooks/auth").is_empty());
    let got = receiver.received("hooks/soc");
    assert_eq!(got.len(), 1, "one delivery per destination per run");
    let delivery = &got[0];
    assert_eq!(delivery.path, "hooks/soc");
    assert_eq!(delivery.header("content-type"), "application/json");

    // The payload: versioned, the run's change rows as in the dataset, ledger and chain head.
    let rows = Rows::of(&fleet.dir);
    let payload = delivery.json();
    assert_eq!(payload["type"], "mcp_surface.changes_recorded");
    assert_eq!(payload["payload_version"], 1);
    let data = &payload["data"];
    assert_eq!(data["destination"], json!({"index": 0, "label": "soc"}));
    assert_eq!(data["ledger_name"], "fleet");
    assert_eq!(data["ledger_store"], "mcp-tool-surface-ledger");
    let output = fleet.dir.output();
    assert_eq!(data["ledger_chain_head"], output["ledger_chain_head"]);
    assert_eq!(
        data["ledger_chain_head"],
        fleet.dir.ledger("fleet")["chain"]["head"]
    );
    // The ledger already held this head when the message arrived.
    let at_receipt: Value = serde_json::from_slice(delivery.watched.as_ref().unwrap()).unwrap();
    assert_eq!(data["ledger_chain_head"], at_receipt["chain"]["head"]);
    assert_eq!(data["changes_matched"], rows.changes.len());
    assert_eq!(data["changes_omitted"], 0);
    let mut sent = data["changes"].as_array().unwrap().clone();
    let mut expected = rows.changes.clone();
    let key = |r: &Value| r.to_string();
    sent.sort_by_key(key);
    expected.sort_by_key(key);
    assert_eq!(sent, expected);
    assert!(
        sent.iter()
            .any(|r| r["change_class"] == "tool_added" && r["tool_name"] == "delete_repo")
    );
    assert_eq!(data["summary"]["changes_total"], rows.changes.len());

    // OUTPUT and the outcome say delivered; the dataset's summary row, pushed before the
    // ledger write, said pending.
    let outcomes = outcome.summary.notifications.clone().unwrap();
    assert_eq!(outcomes[0].status, "delivered");
    assert_eq!(outcomes[0].attempts, 1);
    assert_eq!(outcomes[0].http_status, Some(200));
    assert_eq!(
        outcomes[0].webhook_id.as_deref(),
        Some(delivery.header("webhook-id").as_str())
    );
    assert_eq!(outcomes[1].status, "nothing_matched");
    assert_eq!(outcomes[1].attempts, 0);
    assert_eq!(output["notifications"][0]["status"], "delivered");
    assert_eq!(output["notifications"][1]["status"], "nothing_matched");
    assert_eq!(rows.summary["notifications"][0]["status"], "pending");
    // For tests/apify_schemas/validate.sh: the rows, and OUTPUT with the final statuses.
    let mut kept = fleet.dir.rows();
    kept.push(output.clone());
    sample_rows::keep("notify-delivered", &kept);
    let status = run::final_status(&outcome.summary);
    assert!(
        status.ends_with("notify: #1 (soc) delivered, #2 nothing matched"),
        "{status}"
    );

    // A third run with nothing new tells no one.
    let third = fleet
        .dir
        .run_ok(
            &fleet.input(json!([{"url": receiver.url("hooks/soc", &[]), "secret": secret}])),
            None,
        )
        .await;
    assert_eq!(
        third.summary.notifications.unwrap()[0].status,
        "nothing_matched"
    );
    assert_eq!(receiver.received("hooks/soc").len(), 1);

    let headers = [
        delivery.header("webhook-id"),
        delivery.header("webhook-timestamp"),
        delivery.header("webhook-signature"),
    ];
    let as_str = |h: &[String; 3]| [h[0].clone(), h[1].clone(), h[2].clone()];
    let h = as_str(&headers);
    let Some(verdict) = verify_with_reference(&secret, [&h[0], &h[1], &h[2]], &delivery.body)
    else {
        return support::skip(
            "standardwebhooks verification",
            "the Python standardwebhooks package is not installed (tests/peers/install.sh)",
        );
    };
    assert_eq!(verdict, "ok");
    // The README's standard-library receiver agrees.
    assert_eq!(
        readme_verify(&secret, &h, &delivery.body).as_deref(),
        Some("True")
    );
    // A body changed by one byte.
    let mut tampered = delivery.body.to_vec();
    let at = tampered.iter().position(|b| *b == b'1').unwrap();
    tampered[at] = b'2';
    let verdict = verify_with_reference(&secret, [&h[0], &h[1], &h[2]], &tampered).unwrap();
    assert!(verdict.starts_with("WebhookVerificationError"), "{verdict}");
    // Another secret.
    let verdict =
        verify_with_reference(&secret_of(9), [&h[0], &h[1], &h[2]], &delivery.body).unwrap();
    assert!(verdict.starts_with("WebhookVerificationError"), "{verdict}");
    // A correctly signed message an hour old: a replay.
    let old = chrono::Utc::now().timestamp() - 3600;
    let signature = python_signature(&secret, &h[0], old, &delivery.body).unwrap();
    let old = old.to_string();
    let verdict =
        verify_with_reference(&secret, [&h[0], &old, &signature], &delivery.body).unwrap();
    assert!(verdict.contains("too old"), "{verdict}");
    let replayed = [h[0].clone(), old.clone(), signature.clone()];
    let verdict = readme_verify(&secret, &replayed, &delivery.body);
    assert_eq!(verdict.as_deref(), Some("False"));
    let verdict = readme_verify(&secret, &h, &tampered);
    assert_eq!(verdict.as_deref(), Some("False"));
    // The same signature at its own time passes: the rejection above is the timestamp's.
    let now = chrono::Utc::now().timestamp();
    let fresh = python_signature(&secret, &h[0], now, &delivery.body).unwrap();
    let verdict =
        verify_with_reference(&secret, [&h[0], &now.to_string(), &fresh], &delivery.body).unwrap();
    assert_eq!(verdict, "ok");
}

#[tokio::test]
async fn slack_and_discord_receivers_get_well_formed_messages() {
    let receiver = Receiver::start();
    let fleet = Fleet::new();
    let notify = json!([
        {"url": receiver.url("services/T0/B0/slacktoken", &[]), "format": "slack", "label": "team"},
        {"url": receiver.url("api/webhooks/1/discordtoken", &[]), "format": "discord"},
    ]);
    let outcome = fleet.two_runs(notify).await;
    let server = fleet.server.url.as_str();
    let outcomes = outcome.summary.notifications.unwrap();
    assert!(
        outcomes.iter().all(|o| o.status == "delivered"),
        "{outcomes:?}"
    );
    assert!(outcomes.iter().all(|o| o.webhook_id.is_none()));

    let slack = receiver.received("services/T0/B0/slacktoken");
    assert_eq!(slack.len(), 1);
    assert!(slack[0].headers.get("webhook-signature").is_none());
    let message = slack[0].json();
    let text = message["text"].as_str().unwrap();
    assert!(text.starts_with("*"), "{text}");
    assert!(text.contains("recorded in ledger fleet"), "{text}");
    assert!(text.contains("[team]"), "{text}");
    assert!(
        text.contains(&format!("tool_added on `{server}`, tool `delete_repo`")),
        "{text}"
    );
    assert_eq!(message["unfurl_links"], false);

    let discord = receiver.received("api/webhooks/1/discordtoken");
    assert_eq!(discord.len(), 1);
    let message = discord[0].json();
    let content = message["content"].as_str().unwrap();
    assert!(content.chars().count() <= 2000);
    assert!(
        content.contains(&format!("tool_added on `{server}`, tool `delete_repo`")),
        "{content}"
    );
    assert_eq!(message["allowed_mentions"], json!({"parse": []}));
}

#[tokio::test]
async fn a_503_then_200_is_delivered_once_and_a_429_waits_for_its_retry_after() {
    let receiver = Receiver::start();
    let fleet = Fleet::new();
    let notify = json!([
        {"url": receiver.url("flaky", &[(503, None)]), "secret": secret_of(1)},
        {"url": receiver.url("busy", &[(429, Some("2"))]), "secret": secret_of(2)},
    ]);
    let outcome = fleet.two_runs(notify).await;
    let outcomes = outcome.summary.notifications.unwrap();
    for (path, outcome) in ["flaky", "busy"].iter().zip(&outcomes) {
        assert_eq!(outcome.status, "delivered", "{outcome:?}");
        assert_eq!(outcome.attempts, 2);
        let got = receiver.received(path);
        assert_eq!(got.len(), 2, "{path}");
        // Both attempts are the same message: a receiver drops the repeat by its id.
        assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
        assert_eq!(got[0].body, got[1].body);
        assert_eq!(
            outcome.webhook_id.as_deref(),
            Some(got[1].header("webhook-id").as_str())
        );
    }
    assert_ne!(outcomes[0].webhook_id, outcomes[1].webhook_id);
    let busy = receiver.received("busy");
    let waited = busy[1].at - busy[0].at;
    assert!(waited >= Duration::from_millis(1900), "{waited:?}");
    let flaky = receiver.received("flaky");
    let waited = flaky[1].at - flaky[0].at;
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
}

#[tokio::test]
async fn a_permanent_failure_is_reported_and_neither_fails_the_run_nor_touches_the_ledger() {
    let receiver = Receiver::start();
    let fleet = Fleet::new();
    let notify = json!([
        {"url": receiver.url("gone", &[(404, None), (200, None)]), "format": "slack", "label": "old-channel"},
        // Cloud metadata stays refused even with the private-target override these runs have.
        {"url": "http://169.254.169.254/latest/hook", "format": "discord"},
    ]);
    let outcome = fleet.two_runs(notify.clone()).await;
    assert_eq!(outcome.exit_code(), 0);
    let outcomes = outcome.summary.notifications.clone().unwrap();
    assert_eq!(outcomes[0].status, "failed");
    assert_eq!(outcomes[0].attempts, 1, "a 404 is not retried");
    assert_eq!(outcomes[0].http_status, Some(404));
    assert_eq!(outcomes[0].error.as_deref(), Some("HTTP 404"));
    assert_eq!(receiver.received("gone").len(), 1);
    assert_eq!(outcomes[1].status, "failed");
    assert_eq!(outcomes[1].attempts, 1);
    assert!(
        outcomes[1]
            .error
            .as_deref()
            .unwrap()
            .contains("address policy"),
        "{:?}",
        outcomes[1]
    );
    let status = run::final_status(&outcome.summary);
    assert!(
        status.contains(
            "notify: #1 (old-channel) failed (HTTP 404), #2 failed (refused by the address policy"
        ),
        "{status}"
    );
    assert!(
        !status.contains("127.0.0.1") && !status.contains("169.254"),
        "{status}"
    );
    let mut kept = fleet.dir.rows();
    kept.push(fleet.dir.output());
    sample_rows::keep("notify-failed", &kept);

    // The ledger holds the change and its chain head is the one the run reported; the next
    // run finds it intact and records nothing again (a failed delivery is not re-sent).
    let ledger = fleet.dir.ledger("fleet");
    assert_eq!(
        ledger["chain"]["head"].as_str(),
        outcome.summary.chain.ledger_chain_head.as_deref()
    );
    let before = fleet.dir.ledger_bytes("fleet").unwrap();
    let next = fleet.dir.run_ok(&fleet.input(notify), None).await;
    assert_eq!(next.summary.changes_total, 0);
    assert_eq!(
        next.summary.chain.ledger_chain_status.as_deref(),
        Some("intact")
    );
    assert!(
        next.summary
            .notifications
            .unwrap()
            .iter()
            .all(|o| o.status == "nothing_matched")
    );
    assert_ne!(
        fleet.dir.ledger_bytes("fleet").unwrap(),
        before,
        "the next run wrote"
    );
}

#[test]
fn canaries_of_urls_and_secrets_appear_in_nothing_the_run_wrote_or_printed() {
    let receiver = Receiver::start();
    let fleet = Fleet::new();
    let url_canary = "urlcanary-5f1c2a9e77";
    let key = *b"secretcanary-0123456789abcdefXYZ";
    let secret = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(key)
    );
    let notify = json!([
        {"url": receiver.url(&format!("services/T1/B1/{url_canary}"), &[]), "format": "slack"},
        {"url": receiver.url(&format!("hooks/{url_canary}"), &[(500, None), (500, None)]), "secret": secret},
        {"url": format!("http://127.0.0.1:9/{url_canary}"), "format": "discord"},
        {"url": format!("http://169.254.169.254/{url_canary}"), "format": "discord"},
    ]);
    let input = fleet.input(notify);
    let first = fleet.dir.run_binary(&input, &[]);
    assert_eq!(first.status.code(), Some(0));
    fleet.change();
    let output = fleet
        .dir
        .command(&input, &["--allow-private-targets"])
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = fleet.dir.output();
    let statuses: Vec<&str> = summary["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["delivered", "delivered", "failed", "failed"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("notify"),
        "trace logging printed nothing about notify"
    );
    let encoded = secret.trim_start_matches("whsec_");
    let canaries = [url_canary, encoded, "secretcanary"];
    for stream in [&output.stdout, &output.stderr, &first.stderr, &first.stdout] {
        let text = String::from_utf8_lossy(stream);
        for canary in canaries {
            assert!(!text.contains(canary), "{canary} was printed:\n{text}");
        }
    }
    let input_file = fleet.dir.input_file(&input);
    let mut files = Vec::new();
    collect_files(fleet.dir.root(), &mut files);
    files.retain(|f| *f != input_file);
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    for expected in ["OUTPUT.json", "REPORT.html", "fleet.json"] {
        assert!(names.iter().any(|n| n.ends_with(expected)), "{names:?}");
    }
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).to_string();
        for canary in canaries {
            assert!(!text.contains(canary), "{canary} is in {}", file.display());
        }
    }
}

fn collect_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn the_notify_flag_replaces_the_input_field_for_local_runs() {
    let receiver = Receiver::start();
    let fleet = Fleet::new();
    let file = fleet.dir.root().join("notify.json");
    let destinations = json!([
        {"url": receiver.url("services/T2/B2/flagtoken", &[]), "format": "slack", "label": "cli"},
    ]);
    std::fs::write(&file, destinations.to_string()).unwrap();
    let flag = [
        "--allow-private-targets",
        "--notify",
        file.to_str().unwrap(),
    ];
    // INPUT's own destination is replaced: it is never contacted.
    let input = fleet.input(json!([{"url": receiver.url("replaced", &[]), "format": "slack"}]));
    let first = fleet.dir.command(&input, &flag).output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    fleet.change();
    let second = fleet.dir.command(&input, &flag).output().unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(receiver.received("services/T2/B2/flagtoken").len(), 1);
    assert!(receiver.received("replaced").is_empty());
    assert_eq!(fleet.dir.output()["notifications"][0]["label"], "cli");

    // A bad file is refused before anything runs, naming the key, never the value.
    std::fs::write(
        &file,
        json!([{"url": "ftp://hooks.example/flagcanary", "format": "slack"}]).to_string(),
    )
    .unwrap();
    let refused = fleet.dir.command(&input, &flag).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("`notify[0].url`"), "{stderr}");
    assert!(!stderr.contains("flagcanary"), "{stderr}");
    // Subcommands do not take it.
    let snapshot = Command::new(actor::BINARY)
        .args([
            "--notify",
            file.to_str().unwrap(),
            "snapshot",
            "http://127.0.0.1:9/mcp",
        ])
        .output()
        .unwrap();
    assert_eq!(snapshot.status.code(), Some(2));
}

#[tokio::test]
async fn a_sharded_watch_announces_once_from_the_coordinator() {
    let receiver = Receiver::start();
    // Ports are drawn at random, and so the placement: start servers until both shards hold
    // some, so the delivery must gather the changes of each.
    let servers: Vec<Switchable> = loop {
        let servers: Vec<Switchable> = (0..4)
            .map(|i| {
                Switchable::start(surface(
                    &format!("s{i}"),
                    "1",
                    vec![tool("search", "Search")],
                ))
            })
            .collect();
        let entries: Vec<Value> = servers.iter().map(|s| json!(s.url.as_str())).collect();
        let placement = place(&entries, 2);
        let used: std::collections::BTreeSet<usize> = entries
            .iter()
            .map(|entry| placement.shards[&server_id(entry)])
            .collect();
        if used.len() == 2 {
            break servers;
        }
    };
    let dir = RunDir::new();
    let input = json!({
        "servers": servers.iter().map(|s| s.url.as_str()).collect::<Vec<_>>(),
        "ledger_name": "fleet",
        "shards": 2,
        "notify": [{"url": receiver.url("sharded", &[]), "secret": secret_of(5)}],
    });
    let first = dir.run_ok(&input, None).await;
    assert_eq!(
        first.summary.notifications.unwrap()[0].status,
        "nothing_matched"
    );
    for server in &servers {
        server.set_surface(surface(
            "s",
            "1",
            vec![
                tool("search", "Search"),
                tool("delete_repo", "Deletes a repository"),
            ],
        ));
    }
    let second = dir.run_ok(&input, None).await;
    let shards = second.summary.shards.clone().unwrap();
    assert!(
        shards.iter().filter(|s| s.status == "succeeded").count() == 2,
        "{shards:?}"
    );
    let got = receiver.received("sharded");
    assert_eq!(got.len(), 1, "one delivery for the whole watch");
    let data = &got[0].json()["data"];
    let added: Vec<&Value> = data["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change_class"] == "tool_added")
        .collect();
    assert_eq!(added.len(), 4, "the changes of every shard: {data}");
    let outcome = &second.summary.notifications.unwrap()[0];
    assert_eq!(outcome.status, "delivered");
    assert_eq!(outcome.changes_matched, second.summary.changes_total);
}
