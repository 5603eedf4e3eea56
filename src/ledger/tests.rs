//! Unit tests of the ledger index: apply, eviction, size fallbacks, format checks.

use super::*;
use crate::diff::{ChangeClass, Severity};
use chrono::TimeZone;
use serde_json::{Value, json};

/// A surface of `tools` from the server `demo` 1.0.0 (shared with the surface record tests).
pub(super) fn surface(tools: Value) -> Surface {
    Surface::from_tools(
        ServerIdentity {
            name: Some("demo".into()),
            version: Some("1.0.0".into()),
            ..ServerIdentity::default()
        },
        tools.as_array().unwrap().clone(),
    )
    .unwrap()
}

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + seconds, 0).unwrap()
}

#[test]
fn unreadable_and_future_records_are_refused() {
    for bytes in [&b"{oops"[..], br#"{"format": 2}"#, br#"{"format": 1}"#] {
        let err = Ledger::from_bytes("DEFAULT", bytes).unwrap_err();
        assert!(matches!(err, LedgerError::Unreadable { .. }), "{err}");
        assert!(err.to_string().contains("left untouched"));
    }
    let good = Ledger::empty("DEFAULT").to_record();
    assert!(Ledger::from_bytes("DEFAULT", &good.bytes).is_ok());
}

#[test]
fn apply_keeps_first_seen_and_history_and_auth_only_keeps_surface() {
    let mut ledger = Ledger::empty("DEFAULT");
    let s = surface(json!([{"name": "a", "inputSchema": {"type": "object"}}]));
    fn update(s: &Surface) -> Update<'_> {
        Update::Readable {
            previous: None,
            surface_key: StoredSurface::key_for(&s.identity, &s.tool_digest()),
            tool_digest: s.tool_digest(),
            surface: s,
            era: Era::Modern,
            transport: "streamable-http".into(),
            auth: AuthState::default(),
            repeated_keys: Vec::new(),
            tool_digests: None,
        }
    }
    ledger.apply("https://x.example/mcp", at(0), update(&s), &[]);
    let change = Change {
        change_class: ChangeClass::ToolAdded,
        tool_name: Some("a".into()),
        field: "tool".into(),
        old_value: None,
        new_value: None,
        old_value_hash: None,
        new_value_hash: None,
        severity: Severity::Medium,
        compatibility: None,
        details: Vec::new(),
        same_version: false,
        renamed_to: None,
        renamed_from: None,
    };
    let many = vec![change; 60];
    ledger.apply("https://x.example/mcp", at(10), update(&s), &many);
    let auth = AuthState {
        auth_required: true,
        ..AuthState::default()
    };
    ledger.apply(
        "https://x.example/mcp",
        at(20),
        Update::AuthOnly { auth },
        &[],
    );
    let entry = ledger.entry("https://x.example/mcp").unwrap();
    assert_eq!(entry.first_seen, at(0));
    assert_eq!(entry.last_seen, at(20));
    assert_eq!(entry.last_changed, Some(at(10)));
    assert_eq!(
        entry.history.len(),
        60,
        "every change within the retention period"
    );
    assert!(entry.auth.auth_required);
    assert_eq!(entry.tool_digest, Some(s.tool_digest()));
}

#[test]
fn eviction_drops_the_least_recently_seen() {
    let mut ledger = Ledger::empty("DEFAULT");
    let s = surface(json!([]));
    for i in 0..(MAX_SERVERS + 3) {
        let url = format!("https://s{i}.example/mcp");
        ledger.apply(
            &url,
            at(i as i64),
            Update::AuthOnly {
                auth: AuthState::default(),
            },
            &[],
        );
    }
    ledger.apply(
        "https://s0.example/mcp",
        at(10_000),
        Update::Readable {
            previous: None,
            surface: &s,
            tool_digest: s.tool_digest(),
            surface_key: StoredSurface::key_for(&s.identity, &s.tool_digest()),
            era: Era::Classic,
            transport: "streamable-http".into(),
            auth: AuthState::default(),
            repeated_keys: Vec::new(),
            tool_digests: None,
        },
        &[],
    );
    ledger.evict();
    assert_eq!(ledger.servers.len(), MAX_SERVERS);
    assert!(ledger.entry("https://s0.example/mcp").is_some());
    for gone in 1..=3 {
        assert!(
            ledger
                .entry(&format!("https://s{gone}.example/mcp"))
                .is_none()
        );
    }
}

#[test]
fn an_index_too_large_loses_old_history_first_then_refuses() {
    let mut ledger = Ledger::empty("DEFAULT");
    let change = Change::new(
        ChangeClass::ToolAdded,
        Some("a_tool_with_a_long_name_for_the_history"),
        "tool",
        None,
        None,
        Severity::Medium,
    );
    for i in 0..4 {
        let url = format!("https://s{i}.example/mcp");
        for day in 0..MAX_HISTORY as i64 {
            let auth = AuthState::default();
            ledger.apply(
                &url,
                at(day),
                Update::AuthOnly { auth },
                std::slice::from_ref(&change),
            );
        }
    }
    crate::chain::seal(&mut ledger);
    let full = ledger
        .clone()
        .record_within(usize::MAX)
        .unwrap()
        .bytes
        .len();
    let mut ten = ledger.clone();
    for entry in ten.servers.values_mut() {
        entry.drop_oldest(MAX_HISTORY - 10);
    }
    let ten_size = ten.record_within(usize::MAX).unwrap().bytes.len();
    assert!(ten_size < full);

    let mut fitted = ledger.clone();
    let record = fitted.record_within(ten_size).unwrap();
    assert_eq!(record.bytes.len(), ten_size);
    assert!(fitted.servers.values().all(|e| e.history.len() == 10));
    let newest = &fitted.servers["https://s0.example/mcp"].history;
    assert_eq!(
        newest.last().unwrap().observed_at,
        at(MAX_HISTORY as i64 - 1)
    );

    let mut untouched = ledger.clone();
    untouched.record_within(full).unwrap();
    assert_eq!(untouched, ledger, "a record that fits keeps every item");

    let error = ledger.clone().record_within(100).unwrap_err();
    assert!(
        matches!(error, LedgerError::TooLarge { limit: 100, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("ledger_name"), "{error}");
}

#[test]
fn per_tool_digests_follow_the_surface_and_go_before_the_last_history() {
    let mut ledger = Ledger::empty("DEFAULT");
    crate::chain::open(&mut ledger, None, &[]);
    let tools = json!([
        {"name": "a", "inputSchema": {"type": "object"}},
        {"name": "b", "description": "B", "inputSchema": {"type": "object"}},
    ]);
    let s = surface(tools);
    let update = Update::Readable {
        previous: None,
        surface: &s,
        tool_digest: s.tool_digest(),
        surface_key: StoredSurface::key_for(&s.identity, &s.tool_digest()),
        era: Era::Modern,
        transport: "streamable-http".into(),
        auth: AuthState::default(),
        repeated_keys: Vec::new(),
        tool_digests: None,
    };
    ledger.apply("https://x.example/mcp", at(0), update, &[]);
    let kept = ledger.entry("https://x.example/mcp").unwrap();
    let digests = kept.tool_digests.clone().unwrap();
    assert_eq!(digests.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert!(digests.values().all(|d| d.len() == TOOL_DIGEST_HEX));
    assert_ne!(digests["a"], digests["b"]);
    assert_eq!(digests, tool_digests(&s));

    // Too large with them: history is shortened to 10 first, then they go.
    let mut with_history = ledger.clone();
    let change = Change::new(
        ChangeClass::ToolAdded,
        Some("a"),
        "tool",
        None,
        None,
        Severity::Medium,
    );
    for day in 1..=30 {
        with_history.apply(
            "https://x.example/mcp",
            at(day),
            Update::AuthOnly {
                auth: AuthState::default(),
            },
            std::slice::from_ref(&change),
        );
    }
    let mut ten = with_history.clone();
    ten.servers.values_mut().for_each(|e| e.drop_oldest(20));
    let mut bare = ten.clone();
    bare.servers.values_mut().for_each(|e| {
        e.tool_digests = None;
        e.declared_digests = None;
    });
    // Sizes as written: the chain is sealed into every record.
    crate::chain::seal(&mut ten);
    crate::chain::seal(&mut bare);
    let limit = bare.to_record().bytes.len();
    assert!(limit < ten.to_record().bytes.len());
    let mut fitted = with_history.clone();
    fitted.record_within(limit).unwrap();
    assert_eq!(fitted, bare);
}

#[test]
fn values_go_before_history_and_leave_the_chain_intact() {
    let mut ledger = Ledger::empty("DEFAULT");
    crate::chain::open(&mut ledger, None, &[]);
    let text = "Reads a file of the repository. ".repeat(12);
    let change = Change::new(
        ChangeClass::ToolDescriptionChanged,
        Some("read_file"),
        "description",
        Some(json!(text)),
        Some(json!(format!("{text} Now also writes."))),
        Severity::Low,
    );
    for day in 0..30 {
        ledger.apply(
            "https://x.example/mcp",
            at(day),
            Update::AuthOnly {
                auth: AuthState::default(),
            },
            std::slice::from_ref(&change),
        );
    }
    let history = &ledger.servers["https://x.example/mcp"].history;
    assert!(history.iter().all(|item| item.values.is_some()));
    // Room for 25 items, 5 of them with values (the third fallback).
    let mut expected = ledger.clone();
    let entry = expected.servers.get_mut("https://x.example/mcp").unwrap();
    entry.drop_oldest(5);
    entry.keep_values(5);
    crate::chain::seal(&mut expected);
    let limit = expected.to_record().bytes.len();
    let mut fitted = ledger.clone();
    let record = fitted.record_within(limit).unwrap();
    assert_eq!(fitted, expected);
    let kept: Vec<bool> = fitted.servers["https://x.example/mcp"]
        .history
        .iter()
        .map(|item| item.values.is_some())
        .collect();
    assert_eq!(kept.len(), 25);
    assert_eq!(kept.iter().filter(|&&k| k).count(), 5);
    assert!(kept[20..].iter().all(|&k| k), "the newest keep theirs");
    let stored: Value = serde_json::from_slice(&record.bytes).unwrap();
    assert_eq!(crate::chain::check_index(&stored), Ok(()));
}

#[test]
fn changes_and_steps_older_than_the_retention_period_go_and_leave_a_mark() {
    let day = |d: i64| at(d * 86_400);
    let url = "https://x.example/mcp";
    let mut ledger = Ledger::empty("DEFAULT");
    ledger.retention_days = Some(30);
    let versions: Vec<Surface> = (0..4)
        .map(|v| surface(json!([{"name": "a", "description": "x".repeat(600 + v)}])))
        .collect();
    fn update<'a>(s: &'a Surface, previous: Option<&'a Surface>) -> Update<'a> {
        Update::Readable {
            surface: s,
            previous,
            tool_digest: s.tool_digest(),
            surface_key: StoredSurface::key_for(&s.identity, &s.tool_digest()),
            era: Era::Modern,
            transport: "streamable-http".into(),
            auth: AuthState::default(),
            repeated_keys: Vec::new(),
            tool_digests: None,
        }
    }
    ledger.apply(url, day(0), update(&versions[0], None), &[]);
    for (v, d) in [(1, 10), (2, 20), (3, 45)] {
        let changes = crate::changes::between(&versions[v - 1], &versions[v]).changes;
        assert!(!changes.is_empty());
        ledger.apply(
            url,
            day(d),
            update(&versions[v], Some(&versions[v - 1])),
            &changes,
        );
    }
    let entry = ledger.entry(url).unwrap().clone();
    // Day 45 keeps what is younger than 30 days: the changes of day 20 and 45.
    assert!(entry.history.iter().all(|i| i.observed_at >= day(15)));
    assert!(entry.history.iter().any(|i| i.observed_at == day(20)));
    // The step of day 10 is cut: a mark says nothing before it can be rebuilt.
    let steps: Vec<(DateTime<Utc>, bool)> = entry
        .steps
        .iter()
        .map(|s| (s.at, s.undo.is_some()))
        .collect();
    assert_eq!(
        steps,
        vec![(day(10), false), (day(20), true), (day(45), true)]
    );
    // Large values wait for the run's value pack, each once.
    let packs = ledger.pending.take_packs();
    assert_eq!(packs.len(), 1);
    let large = entry
        .history
        .iter()
        .flat_map(|i| i.values.iter().flat_map(|v| [&v.old, &v.new]))
        .flatten()
        .filter(|v| matches!(v, KeptValue::Digest { pack: None, .. }))
        .count();
    assert!(large >= 2, "{large}");
}
