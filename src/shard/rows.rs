//! The rows a shard's run wrote, as the coordinator keeps them: light typed copies of the
//! server and change rows (for the merged summary and REPORT), the shard's summary row, and the
//! dataset items still to be written to the coordinator's dataset.

use std::collections::HashMap;

use serde::Deserialize;

use crate::platform::Item;
use crate::report::{ChangeRow, ServerRow, SummaryRow};

/// One shard's rows.
#[derive(Debug, Clone, Default)]
pub struct ShardRows {
    /// Its server rows, without their per-tool summaries (which only the dataset item needs).
    pub servers: Vec<ServerRow>,
    /// Its change rows.
    pub changes: Vec<ChangeRow>,
    /// Its summary row, once seen.
    pub summary: Option<SummaryRow>,
    /// Items for the coordinator's dataset that have not been written yet (a shard run in this
    /// process writes its items there itself, as it goes).
    pub pending: Vec<Item>,
}

/// Only the fields that tell the rows apart.
#[derive(Deserialize)]
struct Kind {
    record_type: String,
}

impl ShardRows {
    /// Takes in one dataset item of the shard; returns the item the coordinator's dataset gets
    /// for it (`None` for the shard's summary row, which the merged summary replaces). A server
    /// row of a registry server gets its `registry_name` back (the shard's input had only
    /// URLs); an item of an unknown type is passed on as it is.
    pub fn take(
        &mut self,
        item: Item,
        registry_names: &HashMap<String, String>,
    ) -> Result<Option<Item>, serde_json::Error> {
        let bytes = item.as_bytes();
        match serde_json::from_slice::<Kind>(bytes)?.record_type.as_str() {
            "server" => {
                let mut row: ServerRow = serde_json::from_slice(bytes)?;
                let item = match registry_names.get(&row.server_url) {
                    Some(name) => {
                        row.registry_name = Some(name.clone());
                        Item::of(&row).map_err(|e| serde::ser::Error::custom(e.to_string()))?
                    }
                    None => item,
                };
                row.tools = Vec::new();
                row.declared_findings = Vec::new();
                self.servers.push(row);
                Ok(Some(item))
            }
            "change" => {
                self.changes.push(serde_json::from_slice(bytes)?);
                Ok(Some(item))
            }
            "summary" => {
                self.summary = Some(serde_json::from_slice(bytes)?);
                Ok(None)
            }
            _ => Ok(Some(item)),
        }
    }

    /// Takes in every item of a shard's dataset, keeping the items to write as pending.
    pub fn of_items(
        items: Vec<Item>,
        registry_names: &HashMap<String, String>,
    ) -> Result<ShardRows, serde_json::Error> {
        let mut rows = ShardRows::default();
        for item in items {
            if let Some(item) = rows.take(item, registry_names)? {
                rows.pending.push(item);
            }
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn item(value: Value) -> Item {
        Item::of(&value).unwrap()
    }

    #[test]
    fn rows_are_sorted_and_registry_names_put_back() {
        let server = |url: &str| {
            let row = ServerRow {
                record_type: "server",
                server_url: url.to_string(),
                tools: vec![],
                ..ServerRow::default()
            };
            serde_json::to_value(&row).unwrap()
        };
        let summary = serde_json::to_value(SummaryRow::tally(&[], &[])).unwrap();
        let names = HashMap::from([("https://r.example/mcp".to_string(), "io.r/x".to_string())]);
        let rows = ShardRows::of_items(
            vec![
                item(server("https://a.example/mcp")),
                item(server("https://r.example/mcp")),
                item(json!({"record_type": "note", "text": "kept as it is"})),
                item(summary),
            ],
            &names,
        )
        .unwrap();
        assert_eq!(rows.servers.len(), 2);
        assert!(rows.summary.is_some());
        assert_eq!(rows.pending.len(), 3, "every row but the summary");
        let second: Value = serde_json::from_slice(rows.pending[1].as_bytes()).unwrap();
        assert_eq!(second["registry_name"], "io.r/x");
        assert_eq!(rows.servers[1].registry_name.as_deref(), Some("io.r/x"));
        assert!(ShardRows::of_items(vec![item(json!({"no": "type"}))], &names).is_err());
    }
}
