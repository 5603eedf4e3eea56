//! Dataset rows written while the run goes on, in input order.
//!
//! Servers finish in any order, but their rows go out in the order of the input. A server's
//! rows used to wait for the end of the run and were all serialized then, with the per-tool
//! summaries of every server: on a first run of 1,000 servers that was a third of a second of
//! one CPU after the last answer, while the CPUs had idled between answers. Now each outcome
//! is handed over as it is recorded and the rows of every server whose predecessors are all in
//! are serialized and pushed at once, a batch at a time; only the outcomes that arrived ahead
//! of an earlier server wait (a handful: the feeder starts servers in input order).
//!
//! What the summary row and REPORT need is kept as light copies (the server rows without their
//! per-tool summaries, and the change rows).

use std::collections::BTreeMap;

use chrono::Utc;

use super::RunError;
use super::outcome::ServerResult;
use crate::gate::FailOn;
use crate::platform::{Item, Storage};
use crate::report::{ChangeRow, ServerRow};

/// How many dataset items are serialized before they are pushed.
const ITEMS_PER_PUSH: usize = 100;

/// The rows of a run, written in input order as the outcomes arrive.
pub(super) struct RowWriter {
    /// Every index a result will arrive for, ascending.
    expected: Vec<usize>,
    /// How many of `expected` have been written.
    written: usize,
    /// Results that arrived before an earlier one, by index.
    waiting: BTreeMap<usize, ServerResult>,
    /// The registry name of each fleet entry, by index, put into its row.
    registry_names: Vec<Option<String>>,
    /// The gate the changes are checked against.
    fail_on: FailOn,
    /// Serialized items not pushed yet.
    items: Vec<Item>,
    /// What the run's end needs from the written rows.
    done: WrittenRows,
}

/// What the end of a run needs from the rows written: light copies for the summary row and
/// REPORT, and what the outcomes said.
#[derive(Default)]
pub(super) struct WrittenRows {
    /// The server rows, in input order, without their per-tool summaries.
    pub(super) server_rows: Vec<ServerRow>,
    /// The change rows, in input order.
    pub(super) change_rows: Vec<ChangeRow>,
    /// Serialized items not pushed yet (the summary row goes after them).
    pub(super) items: Vec<Item>,
    /// How many servers took the unchanged-bytes fast path.
    pub(super) surfaces_reused: usize,
    /// Whether any change trips the `fail_on` gate.
    pub(super) gate_tripped: bool,
}

impl RowWriter {
    /// A writer for results at `expected` (in any order; each once), which puts the
    /// registry name `registry_names[index]` into the row of fleet entry `index` and checks
    /// the changes against `fail_on`.
    pub(super) fn new(
        mut expected: Vec<usize>,
        registry_names: Vec<Option<String>>,
        fail_on: FailOn,
    ) -> Self {
        expected.sort_unstable();
        expected.dedup();
        RowWriter {
            expected,
            written: 0,
            waiting: BTreeMap::new(),
            registry_names,
            fail_on,
            items: Vec::new(),
            done: WrittenRows::default(),
        }
    }

    /// Takes the result of `index` and pushes the rows now due, a batch at a time.
    pub(super) async fn add(
        &mut self,
        storage: &impl Storage,
        index: usize,
        result: ServerResult,
    ) -> Result<(), RunError> {
        self.waiting.insert(index, result);
        while let Some(&next) = self.expected.get(self.written) {
            let Some(result) = self.waiting.remove(&next) else {
                break;
            };
            self.written += 1;
            self.write(next, result)?;
            if self.items.len() >= ITEMS_PER_PUSH {
                storage.push_items(&self.items).await?;
                self.items.clear();
            }
        }
        Ok(())
    }

    /// Writes what is left (results whose predecessors never came, in index order) and
    /// returns what the end of the run needs; the items not pushed yet are in it.
    pub(super) fn finish(mut self) -> Result<WrittenRows, RunError> {
        let left = std::mem::take(&mut self.waiting);
        for (index, result) in left {
            self.write(index, result)?;
        }
        self.done.items = self.items;
        Ok(self.done)
    }

    /// Serializes the rows of one server and keeps their light copies.
    fn write(&mut self, index: usize, result: ServerResult) -> Result<(), RunError> {
        let done = &mut self.done;
        done.surfaces_reused += usize::from(result.bytes_unchanged);
        done.gate_tripped |= self.fail_on.is_tripped_by_any(&result.changes);
        let mut row = result.row;
        if let Some(name) = self.registry_names.get(index).cloned().flatten() {
            row.registry_name = Some(name);
        }
        let observed_at = row.observed_at.unwrap_or_else(Utc::now);
        let changes: Vec<ChangeRow> = result
            .changes
            .iter()
            .map(|c| ChangeRow::of(&row.server_url, c, observed_at))
            .collect();
        // The per-tool summaries, capabilities and declared findings exist only while the row
        // is serialized: the summary row and REPORT do not use them.
        if let Some(tools) = &result.tools {
            row.tools = tools.summaries();
            row.capabilities = tools.capabilities();
            row.declared_findings = tools.declared_findings();
        }
        self.items.push(Item::of(&row)?);
        row.tools = Vec::new();
        row.capabilities = BTreeMap::new();
        row.declared_findings = Vec::new();
        for change in &changes {
            self.items.push(Item::of(change)?);
        }
        done.server_rows.push(row);
        done.change_rows.extend(changes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::LocalStorage;
    use crate::run::outcome::base_row;

    fn result(index: usize) -> ServerResult {
        let mut row = base_row(Utc::now());
        row.server_url = format!("http://s{index}.example/mcp");
        ServerResult {
            row,
            changes: Vec::new(),
            surface_write: None,
            insight: None,
            tools: None,
            bytes_unchanged: index.is_multiple_of(2),
        }
    }

    /// The `server_url` of every row, in order.
    fn urls<'a>(rows: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
        rows.into_iter()
            .map(|bytes| {
                let row: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                row["server_url"].as_str().unwrap().to_string()
            })
            .collect()
    }

    /// The `server_url` of every row pushed to the local dataset, in order.
    fn pushed(dir: &std::path::Path) -> Vec<String> {
        let mut files: Vec<_> = std::fs::read_dir(dir.join("datasets/default"))
            .unwrap()
            .map(|f| f.unwrap().path())
            .collect();
        files.sort();
        let rows: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        urls(rows.iter().map(Vec::as_slice))
    }

    #[tokio::test]
    async fn rows_go_out_in_input_order_whatever_order_servers_finish_in() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let count = 250;
        let names = (0..count).map(|i| (i == 7).then(|| "io.example/seven".to_string()));
        let mut writer = RowWriter::new((0..count).collect(), names.collect(), FailOn::Never);
        // The last servers finish first: nothing can be written until server 0 is in.
        for index in (1..count).rev() {
            writer.add(&storage, index, result(index)).await.unwrap();
            assert_eq!(writer.written, 0);
        }
        assert!(pushed(dir.path()).is_empty());
        writer.add(&storage, 0, result(0)).await.unwrap();
        assert_eq!(writer.written, count);
        // Two batches of 100 are pushed; the rest waits for the summary row.
        let expected: Vec<String> = (0..count)
            .map(|i| format!("http://s{i}.example/mcp"))
            .collect();
        assert_eq!(pushed(dir.path()), expected[..200]);
        let done = writer.finish().unwrap();
        assert_eq!(urls(done.items.iter().map(Item::as_bytes)), expected[200..]);
        let rows: Vec<&str> = done
            .server_rows
            .iter()
            .map(|r| r.server_url.as_str())
            .collect();
        assert_eq!(rows, expected);
        assert_eq!(
            done.server_rows[7].registry_name.as_deref(),
            Some("io.example/seven")
        );
        assert_eq!(done.server_rows[8].registry_name, None);
        assert_eq!(done.surfaces_reused, count / 2);
        assert!(!done.gate_tripped);
    }

    #[tokio::test]
    async fn results_after_a_missing_one_are_written_at_the_end_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let mut writer = RowWriter::new(vec![4, 0, 2, 9], Vec::new(), FailOn::Never);
        for index in [9, 0, 4] {
            writer.add(&storage, index, result(index)).await.unwrap();
        }
        // Server 2 never reports: 4 and 9 wait behind it until the end.
        assert_eq!(writer.written, 1);
        let done = writer.finish().unwrap();
        let rows: Vec<&str> = done
            .server_rows
            .iter()
            .map(|r| r.server_url.as_str())
            .collect();
        assert_eq!(
            rows,
            [
                "http://s0.example/mcp",
                "http://s4.example/mcp",
                "http://s9.example/mcp"
            ]
        );
    }
}
