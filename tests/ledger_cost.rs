//! What a year of history costs in the ledger store (issue 36, `docs/history.md`): a generated
//! fleet of 50 servers of 40 tools each, with a release every week for a year (3 descriptions
//! reworded, 1 schema grown, and every fourth week a tool added and one removed), recorded as
//! runs record them (surface records, value packs, the index, the sweep). Every record stays
//! within the platform's 9 MiB and the first surface of a server is still rebuilt at the end.
//! Every change of the year is still kept at the end (the older ones in archived pages), and
//! the run writes that archive them pay no extra record write. Prints the measurement. Minutes
//! of CPU in a debug build, so it is ignored by default:
//! `cargo test --release --test ledger_cost -- --ignored --nocapture`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use mcp_surface_ledger::changes;
use mcp_surface_ledger::diff::AuthState;
use mcp_surface_ledger::ledger::{self, Ledger, PackReader, StoredSurface, Update, past};
use mcp_surface_ledger::mcp::Era;
use mcp_surface_ledger::platform::{LocalStorage, MAX_RECORD_BYTES, Storage, Store};
use mcp_surface_ledger::surface::{ServerIdentity, Surface, canon};
use mcp_surface_ledger::sweep;
use serde_json::{Value, json};

const SERVERS: usize = 50;
const TOOLS: usize = 40;
const WEEKS: i64 = 52;

/// Tool `i` of server `s` as of week `week`.
fn tool(s: usize, i: usize, week: i64) -> Value {
    // Three tools are reworded each week, one schema grows by a property.
    let reworded = (0..3)
        .filter(|k| (week as usize * 3 + k) % TOOLS == i)
        .count()
        > 0;
    let wording = if reworded { week } else { (week / 13) * 13 };
    let grown = (0..=week)
        .filter(|w| (*w as usize * 7) % TOOLS == i)
        .count();
    let mut properties = serde_json::Map::new();
    for p in 0..(4 + grown) {
        properties.insert(
            format!("parameter_{p}"),
            json!({"type": "string", "description": format!("The {p}th parameter of tool {i}: an identifier, a path or a query string as the server expects it.")}),
        );
    }
    json!({
        "name": format!("server_{s}_tool_{i:02}"),
        "title": format!("Tool {i} of server {s}"),
        "description": format!("Revision {wording}. Lists, reads or updates the resources of the server {s} that match the given parameters; results are paginated and sorted by their last change. Use the search tools first when the identifier is not known."),
        "inputSchema": {"type": "object", "properties": properties, "required": ["parameter_0"]},
        "annotations": {"readOnlyHint": !i.is_multiple_of(3)},
    })
}

/// The surface of server `s` in week `week`: a tool is replaced every fourth week.
fn surface(s: usize, week: i64) -> Surface {
    let replaced = (week / 4) as usize;
    let tools = (0..TOOLS)
        .map(|i| {
            let index = if i < replaced.min(TOOLS) { i + 100 } else { i };
            tool(s, index, week)
        })
        .collect();
    let identity = ServerIdentity {
        name: Some(format!("server-{s}")),
        version: Some(format!("1.{week}.0")),
        ..ServerIdentity::default()
    };
    Surface::from_tools(identity, tools).unwrap()
}

fn week_start(week: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 5, 6, 0, 0).unwrap() + Duration::weeks(week)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes of CPU: the measurement behind docs/history.md"]
async fn a_year_of_weekly_releases_of_50_servers_fits_and_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let storage = LocalStorage::open(dir.path()).unwrap();
    let mut surfaces: BTreeMap<usize, Surface> = BTreeMap::new();
    let mut changes_total = 0;
    for week in 0..WEEKS {
        let now = week_start(week);
        let mut ledger = Ledger::load(&storage, "fleet").await.unwrap();
        for s in 0..SERVERS {
            let url = format!("https://mcp-{s}.example.com/mcp");
            let new = surface(s, week);
            let digest = new.tool_digest();
            let key = StoredSurface::key_for(&new.identity, &digest);
            storage
                .put_record(Store::Ledger, &key, StoredSurface::record_of(&new))
                .await
                .unwrap();
            let previous = surfaces.get(&s);
            let found = previous
                .map(|p| changes::between(p, &new).changes)
                .unwrap_or_default();
            changes_total += found.len();
            let update = Update::Readable {
                surface: &new,
                previous,
                tool_digest: digest,
                surface_key: key,
                era: Era::Modern,
                transport: "streamable-http".into(),
                auth: AuthState {
                    anonymous_listing_allowed: true,
                    ..AuthState::default()
                },
                repeated_keys: Vec::new(),
                tool_digests: None,
            };
            ledger.apply(&url, now, update, &found);
            surfaces.insert(s, new);
        }
        ledger.save(&storage).await.unwrap();
        sweep::sweep(&storage, now).await.unwrap();
    }

    // What the store holds after the year.
    let mut total = 0;
    let mut largest = 0;
    let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for key in storage.list_keys(Store::Ledger).await.unwrap() {
        let record = storage
            .get_record(Store::Ledger, &key)
            .await
            .unwrap()
            .unwrap();
        let size = record.bytes.len();
        assert!(size <= MAX_RECORD_BYTES, "{key}: {size} bytes");
        total += size;
        largest = largest.max(size);
        let kind = if key.starts_with("surface-values-") {
            "value packs"
        } else if key.starts_with("surface-") {
            "surface records and sweep journal"
        } else {
            "index"
        };
        let slot = by_kind.entry(kind).or_default();
        slot.0 += 1;
        slot.1 += size;
    }
    let ledger = Ledger::load(&storage, "fleet").await.unwrap();
    let in_index: usize = ledger.servers.values().map(|e| e.history.len()).sum();
    let pages: usize = ledger.servers.values().map(|e| e.archived.len()).sum();
    let mut kept = 0;
    let mut packs = PackReader::default();
    for entry in ledger.servers.values() {
        kept += ledger::full_history(&storage, entry, &mut packs)
            .await
            .unwrap()
            .len();
    }
    assert_eq!(kept, changes_total, "every change of the year is kept");
    println!(
        "{SERVERS} servers x {TOOLS} tools, {WEEKS} weekly releases: {changes_total} changes, \
         all kept ({in_index} in the index, the rest in {pages} archived pages); ledger store \
         {total} bytes in all, largest record {largest} bytes"
    );
    for (kind, (count, size)) in &by_kind {
        println!("  {kind}: {count} records, {size} bytes");
    }
    // One pack per weekly run that changed anything, archiving included: no extra write.
    assert!(by_kind["value packs"].0 < WEEKS as usize, "{by_kind:?}");

    // The first week's surface of a server is rebuilt from the last one and the kept values.
    let entry = ledger.entry("https://mcp-7.example.com/mcp").unwrap();
    let mut packs = PackReader::default();
    let first = past::surface_at(&storage, entry, week_start(0), &mut packs)
        .await
        .unwrap();
    let canonical = |s: &Surface| canon::canonical_string(&StoredSurface::value_of(s)).unwrap();
    assert_eq!(canonical(&first), canonical(&surface(7, 0)));
}
