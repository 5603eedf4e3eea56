use serde_json::{Value, json};

use super::payload::{headline, most_severe_first, short_value, webhook_body};
use super::*;
use crate::diff::Compatibility;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

fn row(class: ChangeClass, tool: &str, severity: Severity) -> ChangeRow {
    ChangeRow {
        record_type: "change",
        server_url: "https://mcp.example.com/mcp".into(),
        change_class: class,
        tool_name: Some(tool.into()),
        field: "tool".into(),
        old_value_hash: None,
        new_value_hash: None,
        old_value: None,
        new_value: Some(json!({"name": tool})),
        severity,
        compatibility: None,
        details: Vec::new(),
        same_version: false,
        renamed_to: None,
        renamed_from: None,
        observed_at: chrono::Utc::now(),
    }
}

fn facts<'a>(summary: &'a SummaryRow, rows: &'a [ChangeRow]) -> RunFacts<'a> {
    RunFacts {
        summary,
        rows,
        run_url: Some("https://console.apify.com/view/runs/abc"),
    }
}

fn problems(value: Value) -> Vec<(String, String)> {
    parse_destinations(Some(&value)).unwrap_err()
}

#[test]
fn destinations_are_read_with_their_defaults() {
    let parsed = parse_destinations(Some(&json!([
        {"url": "https://hooks.example.com/in", "secret": SECRET},
        {"url": "https://hooks.slack.com/services/T/B/X", "format": "slack",
         "min_severity": "high", "classes": ["tool_added"], "label": "team"},
    ])))
    .unwrap();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].format, Format::Webhook);
    assert_eq!(parsed[0].min_severity, Severity::Low);
    assert!(parsed[0].classes.is_empty() && parsed[0].secret.is_some());
    assert_eq!(parsed[1].format, Format::Slack);
    assert_eq!(parsed[1].min_severity, Severity::High);
    assert_eq!(parsed[1].classes, vec![ChangeClass::ToolAdded]);
    assert_eq!(parsed[1].label.as_deref(), Some("team"));
    assert_eq!(parse_destinations(None).unwrap(), Vec::new());
}

#[test]
fn every_bad_key_is_named_and_no_problem_quotes_a_url_or_secret() {
    let canary_url = "https://hooks.example.com/services/CANARYPATH";
    let cases = [
        (json!("x"), "notify", "must be an array"),
        (json!([1]), "notify[0]", "must be an object"),
        (
            json!([{"url": canary_url}]),
            "notify[0].secret",
            "is required",
        ),
        (
            json!([{"url": "ftp://CANARYPATH/x", "format": "slack"}]),
            "notify[0].url",
            "http(s)",
        ),
        (
            json!([{"url": "https://user:CANARYPATH@h.example/", "format": "slack"}]),
            "notify[0].url",
            "user name",
        ),
        (
            json!([{"url": "not a url CANARYPATH", "format": "slack"}]),
            "notify[0].url",
            "not a valid URL",
        ),
        (json!([{"format": "slack"}]), "notify[0].url", "is required"),
        (
            json!([{"url": canary_url, "secret": "whsec_CANARYPATHXY"}]),
            "notify[0].secret",
            "bytes",
        ),
        (
            json!([{"url": canary_url, "secret": "CANARYPATH"}]),
            "notify[0].secret",
            "whsec_",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "secret": SECRET}]),
            "notify[0].secret",
            "only for webhook",
        ),
        (
            json!([{"url": canary_url, "format": "teams"}]),
            "notify[0].format",
            "(got \"teams\")",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "min_severity": "urgent"}]),
            "notify[0].min_severity",
            "one of low, medium, high (got \"urgent\")",
        ),
        (
            json!([{"url": canary_url, "format": "slak"}]),
            "notify[0].format",
            "did you mean `slack`?",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "classes": ["tool_added", "nope"]}]),
            "notify[0].classes",
            "unknown change class \"nope\"",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "classes": ["tool_add"]}]),
            "notify[0].classes",
            "did you mean `tool_added`?",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "classes": [3]}]),
            "notify[0].classes",
            "change classes",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "label": ""}]),
            "notify[0].label",
            "printable",
        ),
        (
            json!([{"url": canary_url, "format": "slack", "token": "x"}]),
            "notify[0].token",
            "not a known key",
        ),
        (
            Value::Array(vec![json!({"url": canary_url, "format": "slack"}); 11]),
            "notify",
            "at most 10",
        ),
    ];
    for (value, field, problem) in cases {
        let found = problems(value.clone());
        assert!(
            found.iter().any(|(f, p)| f == field && p.contains(problem)),
            "{value}: {found:?}"
        );
        for (_, p) in &found {
            assert!(!p.contains("CANARYPATH") && !p.contains("MfKQ9r8"), "{p}");
        }
    }
}

#[test]
fn debug_never_shows_the_url_or_the_secret() {
    let parsed = parse_destinations(Some(&json!([
        {"url": "https://hooks.example.com/CANARYPATH", "secret": SECRET}
    ])))
    .unwrap();
    let text = format!("{parsed:?}");
    assert!(
        !text.contains("CANARYPATH") && !text.contains("MfKQ9r8"),
        "{text}"
    );
}

#[test]
fn filters_select_by_severity_and_class() {
    let rows = [
        row(ChangeClass::ToolAdded, "a", Severity::High),
        row(ChangeClass::ToolRemoved, "b", Severity::Medium),
        row(ChangeClass::ToolDescriptionChanged, "c", Severity::Low),
    ];
    let with = |filters: Value| {
        let mut entry = json!({"url": "https://h.example/x", "format": "slack"});
        entry
            .as_object_mut()
            .unwrap()
            .extend(filters.as_object().unwrap().clone());
        let destination = parse_destinations(Some(&json!([entry]))).unwrap().remove(0);
        let names: Vec<String> = rows
            .iter()
            .filter(|r| destination.selects(r))
            .map(|r| r.tool_name.clone().unwrap())
            .collect();
        (names, destination.planned(0, &rows).status)
    };
    let cases = [
        (json!({}), vec!["a", "b", "c"], "pending"),
        (json!({"min_severity": "medium"}), vec!["a", "b"], "pending"),
        (json!({"min_severity": "high"}), vec!["a"], "pending"),
        (
            json!({"classes": ["tool_removed", "tool_description_changed"]}),
            vec!["b", "c"],
            "pending",
        ),
        (
            json!({"classes": ["tool_removed"], "min_severity": "high"}),
            vec![],
            "nothing_matched",
        ),
    ];
    for (filters, expected, status) in cases {
        let (names, planned) = with(filters.clone());
        assert_eq!(names, expected, "{filters}");
        assert_eq!(planned, status, "{filters}");
    }
}

#[test]
fn the_webhook_payload_is_versioned_and_cut_to_its_limit_with_a_count() {
    let mut summary = SummaryRow::tally(&[], &[]);
    summary.ledger_name = "fleet".into();
    summary.chain.ledger_chain_head = Some("ab".repeat(32));
    summary.notifications = Some(Vec::new());
    let mut rows: Vec<ChangeRow> = (0..50)
        .map(|i| row(ChangeClass::ToolAdded, &format!("t{i}"), Severity::Low))
        .collect();
    rows.push(row(ChangeClass::ToolRemoved, "gone", Severity::High));
    let selected = most_severe_first(rows.iter());
    let facts = facts(&summary, &rows);
    let (body, sent) = webhook_body(2, Some("soc"), &selected, &facts, MAX_PAYLOAD_BYTES);
    let payload: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(sent, 51);
    assert_eq!(payload["payload_version"], PAYLOAD_VERSION);
    assert_eq!(payload["type"], "mcp_surface.changes_recorded");
    let data = &payload["data"];
    assert_eq!(data["destination"], json!({"index": 2, "label": "soc"}));
    assert_eq!(data["ledger_name"], "fleet");
    assert_eq!(data["ledger_chain_head"], "ab".repeat(32));
    assert_eq!(data["run_url"], "https://console.apify.com/view/runs/abc");
    assert_eq!(data["changes"][0]["tool_name"], "gone", "most severe first");
    assert_eq!(data["changes"][0]["record_type"], "change");
    assert!(data["summary"].get("notifications").is_none());
    assert_eq!(data["summary"]["record_type"], "summary");
    // A limit that holds only some rows: the rest are counted, and the body stays within it.
    for limit in [body.len() / 2, body.len() / 5, 2_000] {
        let (cut, sent) = webhook_body(2, Some("soc"), &selected, &facts, limit);
        assert!(cut.len() <= limit, "{} > {limit}", cut.len());
        let payload: Value = serde_json::from_slice(&cut).unwrap();
        let data = &payload["data"];
        assert!(sent < 51, "{limit}");
        assert_eq!(data["changes"].as_array().unwrap().len(), sent);
        assert_eq!(data["changes_sent"], sent);
        assert_eq!(data["changes_omitted"], 51 - sent);
        assert_eq!(data["changes_matched"], 51);
        if sent > 0 {
            assert_eq!(data["changes"][0]["tool_name"], "gone");
        }
    }
}

#[test]
fn chat_messages_name_each_change_and_cannot_mention_or_link() {
    let summary = SummaryRow::tally(&[], &[]);
    let mut hostile = row(
        ChangeClass::InputSchemaChanged,
        "<!channel> @everyone `x`",
        Severity::High,
    );
    hostile.compatibility = Some(Compatibility::Breaking);
    hostile.old_value = Some(json!({"type": "string"}));
    let mut rows = vec![hostile];
    rows.extend((0..30).map(|i| row(ChangeClass::ToolAdded, &format!("t{i}"), Severity::Low)));
    let selected = most_severe_first(rows.iter());
    let facts = facts(&summary, &rows);

    let (body, shown) = slack::message(&selected, &facts, Some("team"));
    let text = serde_json::from_slice::<Value>(&body).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(shown, payload::CHAT_CHANGES);
    assert!(
        text.contains("*HIGH* input_schema_changed on `https://mcp.example.com/mcp`"),
        "{text}"
    );
    assert!(text.contains("grade breaking"), "{text}");
    assert!(
        text.contains("&lt;!channel&gt;") && !text.contains("<!channel>"),
        "{text}"
    );
    assert!(text.contains("…and 21 more"), "{text}");
    assert!(
        text.contains("<https://console.apify.com/view/runs/abc|Open the run>"),
        "{text}"
    );
    assert!(text.contains("[team]"));

    let (body, shown) = discord::message(&selected, &facts, Some("team"));
    let value: Value = serde_json::from_slice(&body).unwrap();
    let content = value["content"].as_str().unwrap();
    assert_eq!(value["allowed_mentions"], json!({"parse": []}));
    assert!(content.chars().count() <= discord::MAX_CONTENT_CHARS);
    assert!(
        shown >= 1 && content.contains("**HIGH** input_schema_changed"),
        "{content}"
    );
    assert!(content.contains("`<!channel> @everyone 'x'`"), "{content}");
    assert!(
        content.contains(&format!("…and {} more", 31 - shown)),
        "{content}"
    );
}

#[test]
fn discord_content_stays_within_its_limit_for_long_values() {
    let summary = SummaryRow::tally(&[], &[]);
    let rows: Vec<ChangeRow> = (0..10)
        .map(|i| {
            row(
                ChangeClass::ToolAdded,
                &format!("{i}{}", "n".repeat(300)),
                Severity::High,
            )
        })
        .collect();
    let selected = most_severe_first(rows.iter());
    let (body, shown) = discord::message(&selected, &facts(&summary, &rows), None);
    let content = serde_json::from_slice::<Value>(&body).unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        content.chars().count() <= discord::MAX_CONTENT_CHARS,
        "{}",
        content.len()
    );
    assert!(shown < 10 && content.contains(&format!("…and {} more", 10 - shown)));
}

#[test]
fn values_are_shortened_and_flattened() {
    assert_eq!(short_value(None), "-");
    assert_eq!(short_value(Some(&json!("a\nb"))), "a b");
    let long = short_value(Some(&json!("x".repeat(200))));
    assert_eq!(long.chars().count(), payload::CHAT_VALUE_CHARS);
    assert!(long.ends_with('…'));
    let summary = SummaryRow::tally(&[], &[]);
    let rows = [
        row(ChangeClass::ToolAdded, "a", Severity::High),
        row(ChangeClass::ToolAdded, "b", Severity::Low),
    ];
    let selected: Vec<&ChangeRow> = rows.iter().collect();
    assert_eq!(
        headline(&selected, &facts(&summary, &rows)),
        "2 MCP surface changes recorded in ledger  (1 high, 1 low)"
    );
}

#[test]
fn the_status_text_names_destinations_by_index_and_label() {
    let mut a = NotificationOutcome {
        destination: 0,
        label: Some("team".into()),
        format: "slack".into(),
        status: "delivered".into(),
        changes_matched: 1,
        changes_sent: 1,
        attempts: 1,
        http_status: Some(200),
        webhook_id: None,
        error: None,
    };
    let mut b = a.clone();
    b.destination = 1;
    b.label = None;
    b.status = "failed".into();
    b.error = Some("HTTP 404".into());
    a.status = "nothing_matched".into();
    assert_eq!(status_text(&[]), None);
    assert_eq!(
        status_text(&[a, b]).unwrap(),
        "notify: #1 (team) nothing matched, #2 failed (HTTP 404)"
    );
}
