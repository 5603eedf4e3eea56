//! How many servers one ledger index holds within the platform's 9 MiB record: the measurement
//! behind `input::MAX_SERVERS` (one shard of a sharded watch). Realistic entries: a server name
//! and title, a version, 1 KiB of instructions, an auth state with two scopes, a surface key,
//! and a full history of 50 changes with tool names, sealed with its hash chain; with or
//! without the changes' kept before/after values (at their worst: both sides at the 512-byte
//! cap). Prints the figures (run with `--nocapture`); asserts only what the limit promises.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{TimeZone, Utc};
use mcp_surface_ledger::chain::Link;
use mcp_surface_ledger::diff::{AuthState, ChangeClass, Severity};
use mcp_surface_ledger::input::MAX_SERVERS;
use mcp_surface_ledger::ledger::{
    Archived, ChangeValues, Entry, HistoryItem, KeptValue, Ledger, MAX_KEPT_VALUE_BYTES, ValueRef,
};
use mcp_surface_ledger::platform::MAX_RECORD_BYTES;
use mcp_surface_ledger::surface::{ItemDigests, ServerIdentity};

/// How much of the history carries kept values, and how large they are.
#[derive(Clone, Copy)]
struct Values {
    /// How many of the newest items carry them.
    newest: usize,
    /// Bytes of each side's JSON string in the index.
    bytes: usize,
}

const NO_VALUES: Values = Values {
    newest: 0,
    bytes: 0,
};

/// Both sides of a change at `bytes` each, as the index stores them.
fn kept_values(bytes: usize) -> ChangeValues {
    // A JSON string of n characters without escapes is stored as n + 2 bytes.
    let side = KeptValue::Whole {
        json: format!("\"{}\"", "d".repeat(bytes - 4)),
    };
    ChangeValues {
        old: Some(side.clone()),
        new: Some(side),
    }
}

/// The short digests of 20 prompts and 5 resource templates (`Entry::declared_digests`), names
/// as long as real ones.
fn declared_digests() -> ItemDigests {
    let named = |prefix: &str, count: usize| {
        (0..count)
            .map(|p| (format!("{prefix}_{p}"), "0123456789abcdef".to_string()))
            .collect()
    };
    ItemDigests {
        prompts: named("summarize_pull_request_review", 20),
        resource_templates: named("repository_file_contents", 5),
        not_itemized: Vec::new(),
    }
}

/// An entry with `history` items and the per-tool digests of `tools` tools (names as long as
/// real ones, e.g. `create_pull_request_review_17`).
fn entry(i: usize, view: &str, history: usize, tools: usize, values: Values) -> Entry {
    let at = Utc.timestamp_opt(1_790_000_000 + i as i64, 0).unwrap();
    let url = format!("https://mcp-server-number-{i}.example-company.com/mcp{view}");
    Entry {
        server_url: url,
        first_seen: at,
        last_seen: at,
        last_changed: Some(at),
        era: None,
        transport: Some("streamable-http".into()),
        identity: ServerIdentity {
            name: Some(format!("io.example/server-{i}")),
            title: Some(format!("Example server number {i}")),
            version: Some("2.14.3".into()),
            protocol_version: Some("2025-11-25".into()),
            instructions: Some("Use the search tools before the write tools. ".repeat(23)),
        },
        auth: AuthState {
            auth_required: view.is_empty(),
            anonymous_listing_allowed: !view.is_empty(),
            authorization_servers: vec!["https://auth.example-company.com".into()],
            scopes: vec!["repo".into(), "read:org".into()],
        },
        tool_digest: Some(format!("sha256:{}", "ab".repeat(32))),
        surface_key: Some(format!("surface-{}", "cd".repeat(20))),
        tools_total: 50,
        tool_digests: (tools > 0).then(|| {
            (0..tools)
                .map(|t| {
                    (
                        format!("create_pull_request_review_{t}"),
                        "0123456789abcdef".into(),
                    )
                })
                .collect()
        }),
        declared_digests: None,
        repeated_keys: None,
        raw_digest: None,
        archived: Vec::new(),
        history: (0..history)
            .map(|h| HistoryItem {
                observed_at: at,
                change_class: ChangeClass::InputSchemaChanged,
                tool_name: Some(format!("create_pull_request_review_comment_{h}")),
                field: "inputSchema".into(),
                severity: Severity::Medium,
                seq: None,
                link: None,
                values: (h + values.newest >= history).then(|| kept_values(values.bytes)),
            })
            .collect(),
        history_base: None,
        steps: Vec::new(),
        moves: Vec::new(),
    }
}

fn index_bytes(servers: usize, views: &[&str], history: usize) -> usize {
    index_bytes_with(servers, views, history, 0, NO_VALUES)
}

fn index_bytes_with_tools(servers: usize, views: &[&str], history: usize, tools: usize) -> usize {
    index_bytes_with(servers, views, history, tools, NO_VALUES)
}

fn index_bytes_with(
    servers: usize,
    views: &[&str],
    history: usize,
    tools: usize,
    values: Values,
) -> usize {
    sealed_bytes(servers, views, |i, view| {
        entry(i, view, history, tools, values)
    })
}

/// [`index_bytes_with_tools`] with the digests of 20 prompts and 5 templates in every entry.
fn index_bytes_with_declared(servers: usize, history: usize, tools: usize) -> usize {
    sealed_bytes(servers, &[""], |i, view| Entry {
        declared_digests: Some(declared_digests()),
        ..entry(i, view, history, tools, NO_VALUES)
    })
}

/// The size of the sealed index of `servers` entries (each view) made by `entry`.
fn sealed_bytes(servers: usize, views: &[&str], entry: impl Fn(usize, &str) -> Entry) -> usize {
    let mut ledger = Ledger::empty("capacity");
    for i in 0..servers {
        for view in views {
            let entry = entry(i, view);
            ledger.servers.insert(entry.server_url.clone(), entry);
        }
    }
    // Sealed as a run writes it: every item linked, the chain naming every entry.
    mcp_surface_ledger::chain::seal(&mut ledger);
    ledger.to_record().bytes.len()
}

#[test]
fn one_shard_of_servers_fits_one_ledger_record() {
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    let both = ["", "#authenticated"];
    for servers in [100, 500, MAX_SERVERS, 2 * MAX_SERVERS] {
        for history in [50, 25, 10, 0] {
            let one = index_bytes(servers, &[""], history);
            let two = index_bytes(servers, &both, history);
            println!(
                "{servers:>5} servers, history {history:>2}: {:>6.2} MiB (one view), {:>6.2} MiB (both views)",
                mib(one),
                mib(two)
            );
        }
    }
    // The index archives every entry's older history (beyond 50, 25, 10, 0) until it fits. A
    // full shard keeps 25 changes per server in the index with one view, and 10 with both
    // views of every server.
    assert!(index_bytes(MAX_SERVERS, &[""], 25) <= MAX_RECORD_BYTES);
    assert!(index_bytes(MAX_SERVERS, &both, 10) <= MAX_RECORD_BYTES);
    // Twice as many servers would not fit with both views even at 10: the limit is not loose.
    assert!(index_bytes(2 * MAX_SERVERS, &both, 10) > MAX_RECORD_BYTES);
}

/// The per-tool digests that let a run name what changed when a surface record is gone
/// (`Entry::tool_digests`, about 50 bytes a tool) come on top of the history; the index drops
/// them (after shortening the history to 10) when they would not fit. The digests of prompts
/// and templates (`Entry::declared_digests`, about 1.3 KB for 20 prompts and 5 templates) go
/// before the history is shortened.
#[test]
fn per_tool_digests_fit_a_typical_full_shard() {
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    for tools in [20, 100] {
        for history in [25, 10] {
            let one = index_bytes_with_tools(MAX_SERVERS, &[""], history, tools);
            println!(
                "{MAX_SERVERS} servers, {tools:>3} tools, history {history:>2}: {:>6.2} MiB (one view)",
                mib(one)
            );
        }
    }
    // A full shard of servers with 20 tools each keeps its per-tool digests next to 25 history
    // items per server; with 100 tools each, next to 10.
    assert!(index_bytes_with_tools(MAX_SERVERS, &[""], 25, 20) <= MAX_RECORD_BYTES);
    assert!(index_bytes_with_tools(MAX_SERVERS, &[""], 10, 100) <= MAX_RECORD_BYTES);
    // 500 tools each (the most a surface holds) do not fit: they are dropped then.
    assert!(index_bytes_with_tools(MAX_SERVERS, &[""], 0, 500) > MAX_RECORD_BYTES);
    // The digests of 20 prompts and 5 templates besides 20 tools: with 25 history items a full
    // shard does not fit, so they go before the history is cut to 10 (`FALLBACKS`); with 10
    // they fit.
    for history in [25, 10] {
        let declared = index_bytes_with_declared(MAX_SERVERS, history, 20);
        println!(
            "{MAX_SERVERS} servers, 20 tools, 20 prompts, 5 templates, history {history:>2}: \
             {:>6.2} MiB (one view)",
            mib(declared)
        );
    }
    assert!(index_bytes_with_declared(MAX_SERVERS, 25, 20) > MAX_RECORD_BYTES);
    assert!(index_bytes_with_declared(MAX_SERVERS, 10, 20) <= MAX_RECORD_BYTES);
}

/// The kept before/after values (`HistoryItem::values`) come on top of the history. At their
/// worst (both sides at the cap on every item) they cost about 1 KiB an item, so the index
/// drops them from the older items (25 items, values on the newest 5), then from all, before it
/// shortens the history further: what the history keeps without values stays as above.
#[test]
fn kept_values_fit_before_history_is_shortened() {
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    let worst = |newest| Values {
        newest,
        bytes: MAX_KEPT_VALUE_BYTES,
    };
    let typical = |newest| Values { newest, bytes: 120 };
    let both = ["", "#authenticated"];
    for servers in [100, 500, MAX_SERVERS] {
        for (history, newest) in [(50, 50), (25, 25), (25, 5), (25, 0), (10, 0)] {
            let one = index_bytes_with(servers, &[""], history, 0, worst(newest));
            let two = index_bytes_with(servers, &both, history, 0, worst(newest));
            let common = index_bytes_with(servers, &[""], history, 0, typical(newest));
            println!(
                "{servers:>5} servers, history {history:>2}, values on {newest:>2}: \
                 {:>6.2} MiB (worst, one view), {:>6.2} MiB (worst, both views), \
                 {:>6.2} MiB (120-byte values, one view)",
                mib(one),
                mib(two),
                mib(common)
            );
        }
    }
    // Worst case: 500 servers keep values on their newest 5 of 25 items; a full shard keeps
    // 25 items per server (one view) or 10 (both views), as without values.
    assert!(index_bytes_with(500, &[""], 25, 0, worst(5)) <= MAX_RECORD_BYTES);
    assert!(index_bytes_with(500, &[""], 25, 0, worst(25)) > MAX_RECORD_BYTES);
    assert!(index_bytes_with(MAX_SERVERS, &[""], 25, 0, worst(5)) > MAX_RECORD_BYTES);
    assert!(index_bytes_with(MAX_SERVERS, &[""], 25, 0, worst(0)) <= MAX_RECORD_BYTES);
    assert!(index_bytes_with(MAX_SERVERS, &both, 10, 0, worst(0)) <= MAX_RECORD_BYTES);
    // Common values (120 bytes a side) on the newest 5 of 25 items fit a full shard.
    assert!(index_bytes_with(MAX_SERVERS, &[""], 25, 0, typical(5)) <= MAX_RECORD_BYTES);
}

/// `count` archived page references as a run writes them (`docs/history.md`): links, times,
/// the page's digest and pack, and two packs its items name.
fn pages(count: usize) -> Vec<Archived> {
    let at = Utc.timestamp_opt(1_790_000_000, 0).unwrap();
    let link = |seq: u64| Link {
        seq,
        link: format!("{seq:032x}"),
    };
    let pack = |n: usize| format!("surface-values-{n:040x}");
    (0..count)
        .map(|p| Archived {
            base: link(p as u64 * 75),
            last: link((p as u64 + 1) * 75),
            from: at,
            to: at,
            count: 75,
            page: ValueRef {
                sha256: "ef".repeat(32),
                pack: Some(pack(p)),
            },
            packs: vec![pack(p), pack(p + 1)],
        })
        .collect()
}

/// The archived pages of a server's older changes (about 470 bytes a page reference of 50 to
/// 100 changes) come on top of the history the index keeps. A full shard with one view keeps
/// half a year of a busy server's pages (6 pages of the 480 changes a year of weekly releases
/// brings in `tests/ledger_cost.rs`) next to 10 items; beyond that the index keeps only each
/// server's newest item and merges its pages (`docs/history.md`), and a full shard with both
/// views of every server fits with one page and one item each.
#[test]
fn archived_pages_of_a_year_fit_a_full_shard() {
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    let size = |views: &[&str], history: usize, count: usize| {
        let mut ledger = Ledger::empty("capacity");
        for i in 0..MAX_SERVERS {
            for view in views {
                let mut entry = entry(i, view, history, 0, NO_VALUES);
                entry.archived = pages(count);
                ledger.servers.insert(entry.server_url.clone(), entry);
            }
        }
        mcp_surface_ledger::chain::seal(&mut ledger);
        ledger.to_record().bytes.len()
    };
    let both = ["", "#authenticated"];
    for count in [6, 12, 24] {
        println!(
            "{MAX_SERVERS} servers, history 10, {count:>2} pages: {:>6.2} MiB (one view), {:>6.2} MiB (both views)",
            mib(size(&[""], 10, count)),
            mib(size(&both, 10, count))
        );
    }
    for history in [10, 1] {
        println!(
            "{MAX_SERVERS} servers, history {history:>2},  1 page:  {:>6.2} MiB (both views)",
            mib(size(&both, history, 1))
        );
    }
    assert!(size(&[""], 10, 6) <= MAX_RECORD_BYTES);
    assert!(size(&both, 1, 1) <= MAX_RECORD_BYTES);
    assert!(
        size(&[""], 10, 12) > MAX_RECORD_BYTES,
        "the limit is not loose"
    );
}
