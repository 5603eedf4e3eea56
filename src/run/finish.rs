//! Stage 4, finishing: the rows not pushed yet (`run::rows` wrote the others as the run went),
//! the summary row, OUTPUT, REPORT, the insight cache,
//! the ledger index (last, once), the servers' status record and the sweep; the terminal
//! status message.

use chrono::Utc;

use super::RunContext;
use super::rows::{RowWriter, WrittenRows};
use super::{RunError, RunOutcome};
use crate::platform::{Item, Record, Storage, Store};
use crate::registry::Fleet;
use crate::report::{ChangeRow, SummaryRow, count_of};

/// Writes the last rows, OUTPUT, the report, the insight cache and, last, the ledger index
/// (surface records and most rows were written while outcomes were recorded).
pub(super) async fn finish<S: Storage>(
    ctx: &mut RunContext<'_, S>,
    fleet: &Fleet,
    rows: RowWriter,
) -> Result<RunOutcome, RunError> {
    let RunContext {
        storage,
        charging,
        ledger,
        insight,
        input,
        options,
        now,
        ..
    } = ctx;
    let (storage, charging) = (*storage, *charging);
    let WrittenRows {
        server_rows,
        change_rows,
        mut items,
        surfaces_reused,
        gate_tripped,
    } = rows.finish()?;
    let mut summary = SummaryRow::tally(&server_rows, &change_rows);
    summary.alert_on = input.alert_on_names();
    summary.ledger_name = input.ledger_name.clone();
    summary.registry_skipped_stdio = fleet.skipped_stdio;
    summary.registry_error = fleet.registry_error.clone();
    summary.registry_truncated = fleet.registry_truncated.map(|t| t.to_string());
    summary.risk_rules_revised_from = insight.revised_from().map(str::to_string);
    summary.charges = charging.summary();
    // The index is sealed now (after eviction, so the sealed record is the one written) so the
    // summary row can carry its chain head; it is written last.
    ledger.evict();
    // The values the run's changes refer to go first, in as few records as fit (with the
    // pages of history the index archives): the index names the packs that hold them.
    let index = ledger.seal_for_write(storage).await?;
    summary.chain = crate::chain::anchor(ledger);
    summary.notifications = planned_notifications(input, &change_rows);
    items.push(Item::of(&summary)?);
    storage.push_items(&items).await?;
    let summary_bytes = serde_json::to_vec_pretty(&summary).unwrap_or_default();
    storage
        .put_record(Store::Default, "OUTPUT", Record::json(summary_bytes))
        .await?;
    let report = crate::report::html::render(&crate::report::html::Page::of_run(
        &summary,
        &server_rows,
        &change_rows,
    ));
    let report = Record {
        bytes: report.into_bytes(),
        content_type: "text/html; charset=utf-8".to_string(),
    };
    storage.put_record(Store::Default, "REPORT", report).await?;
    if input.report_sarif {
        let log = crate::report::sarif::Gate {
            fail_on: input.fail_on,
            tripped: gate_tripped,
            changes: &change_rows,
        };
        let scope = crate::report::sarif::Scope::of_summary(&summary);
        let bytes = crate::report::sarif::render_scoped_within(
            &log,
            &scope,
            crate::platform::MAX_RECORD_BYTES,
        );
        let record = Record::json(bytes);
        storage
            .put_record(Store::Default, crate::report::sarif::RECORD_KEY, record)
            .await?;
    }
    // The cache keeps what the index names, the most recently seen servers first.
    let mut entries: Vec<_> = ledger.servers.values().collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
    insight.retain(entries.iter().filter_map(|e| e.surface_key.as_deref()));
    insight.save(storage, &input.ledger_name).await;
    ledger.write(storage, index).await?;
    let last_seen = |key: &str| ledger.entry(key).map(|entry| entry.last_seen);
    crate::server_status::record_run(storage, &input.ledger_name, *now, &server_rows, last_seen)
        .await;
    match crate::sweep::sweep(storage, Utc::now()).await {
        Ok(0) => {}
        Ok(deleted) => tracing::info!(deleted, "unreferenced surface records swept"),
        Err(error) => tracing::warn!(%error, "surface records not swept"),
    }
    // Only now that the ledger holds them are the changes announced.
    announce(storage, input, options, &mut summary, &change_rows).await;
    storage
        .set_status_message(&final_status(&summary), true)
        .await?;
    Ok(RunOutcome {
        summary,
        gate_tripped,
        failed_shards: 0,
        surfaces_reused,
    })
}

/// The `notifications` of the summary row pushed before the ledger is written: `pending` or
/// `nothing_matched` per destination; `None` when `notify` is empty.
pub(crate) fn planned_notifications(
    input: &crate::input::Input,
    rows: &[ChangeRow],
) -> Option<Vec<crate::report::NotificationOutcome>> {
    (!input.notify.is_empty()).then(|| {
        input
            .notify
            .iter()
            .enumerate()
            .map(|(index, destination)| destination.planned(index, rows))
            .collect()
    })
}

/// Tells each `notify` destination of the changes (after the ledger write), puts the outcomes
/// in the summary and rewrites OUTPUT with them. Never fails: a destination that was not told
/// is a `failed` outcome, and OUTPUT that cannot be rewritten is a warning.
pub(crate) async fn announce(
    storage: &impl Storage,
    input: &crate::input::Input,
    options: &super::RunOptions,
    summary: &mut SummaryRow,
    rows: &[ChangeRow],
) {
    if input.notify.is_empty() {
        return;
    }
    let config = crate::notify::client_config(
        input.request_timeout,
        input.max_response_bytes,
        options.allow_private_targets,
    );
    let client = match &options.lookup {
        Some(lookup) => crate::net::Client::with_lookup(config, lookup.clone()),
        None => crate::net::Client::new(config),
    };
    let outcomes = match client {
        Ok(client) => {
            let facts = crate::notify::RunFacts {
                summary,
                rows,
                run_url: options.run_url.as_deref(),
            };
            let policy = options.notify_policy.clone().unwrap_or_default();
            crate::notify::announce(&client, &input.notify, &facts, &policy).await
        }
        Err(error) => {
            tracing::warn!(%error, "notify: cannot set up the HTTP client");
            crate::notify::not_sent(&input.notify, rows, "the HTTP client could not be set up")
        }
    };
    summary.notifications = Some(outcomes);
    let bytes = serde_json::to_vec_pretty(&summary).unwrap_or_default();
    if let Err(error) = storage
        .put_record(Store::Default, "OUTPUT", Record::json(bytes))
        .await
    {
        tracing::warn!(%error, "cannot rewrite OUTPUT with the notification outcomes");
    }
}

/// The terminal status message: the run's verdict in one line. It names everything that keeps
/// a run from being clean (a fleet source that failed, servers not read for the budget,
/// deferred changes), so a scheduled run never looks all-clear when it is not.
pub fn final_status(summary: &SummaryRow) -> String {
    let high = summary
        .changes_by_severity
        .get("high")
        .copied()
        .unwrap_or(0);
    let mut parts = vec![
        count_of(summary.servers_requested, "server"),
        format!("{} changed", count_of(summary.servers_changed, "server")),
        count_of(high, "high-severity change"),
        format!("{} unreachable", summary.servers_unreachable),
    ];
    if summary.servers_auth_rejected > 0 {
        parts.push(format!(
            "{} rejected",
            count_of(summary.servers_auth_rejected, "credential")
        ));
    }
    let extras = [
        (summary.servers_requiring_auth, "require auth"),
        (summary.servers_blocked, "blocked"),
        (
            summary.servers_baseline_unreadable,
            "with an unreadable stored baseline (entry kept)",
        ),
        (
            summary.servers_budget_exhausted,
            "not read (maximum total charge reached)",
        ),
        (
            summary.servers_deferred,
            "deferred (changes kept for the next run)",
        ),
    ];
    for (count, what) in extras {
        if count > 0 {
            parts.push(format!("{count} {what}"));
        }
    }
    let mut text = parts.join(", ");
    if let Some(error) = &summary.registry_error {
        text.push_str(&format!("; MCP Registry not read: {error}"));
    }
    if let Some(truncated) = &summary.registry_truncated {
        text.push_str(&format!("; registry walk cut short ({truncated})"));
    }
    if let Some(revised) = &summary.risk_rules_revised_from {
        text.push_str(&format!(
            "; risk rules revised since the last run ({revised} → {}/{}): findings recomputed, \
             markers new only because of the rules are not change rows",
            env!("CARGO_PKG_VERSION"),
            crate::report::INSIGHT_REVISION
        ));
    }
    if let Some(alert) = summary.chain.alert() {
        text.push_str(&format!("; {alert}"));
    }
    if let Some(notified) = summary
        .notifications
        .as_deref()
        .and_then(crate::notify::status_text)
    {
        text.push_str(&format!("; {notified}"));
    }
    text
}
