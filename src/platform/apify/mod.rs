//! The Apify REST API v2: a retrying client and the platform storage backend built on it.
//!
//! The API base URL is operator configuration (on the platform an internal address), so this
//! module uses its own plain HTTP client and never the target client of [`crate::net`], whose
//! address policy exists for MCP targets only.
//!
//! Calls are retried like the official clients do: on 429, on any 5xx and on transport errors,
//! with exponential backoff from a base delay (500 ms by default) and a random factor between
//! 1 and 2, at most [`MAX_TRIES`] times. A `Retry-After` on the failed answer (seconds or an
//! HTTP-date, at most [`MAX_RETRY_AFTER`]) replaces the backoff of that retry. Any other 4xx
//! fails at once with the API's error type and message.

mod client;

pub(crate) use client::random_u64;
pub use client::{ApiClient, ApiError, RetryPolicy};

use reqwest::Method;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::platform::env::PlatformEnv;
use crate::platform::{
    Item, LEDGER_STORE_NAME, MAX_READ_BYTES, Record, Storage, StorageError, Store,
};

/// One page of `GET /v2/key-value-stores/{id}/keys`.
#[derive(Debug, serde::Deserialize)]
struct KeysPage {
    #[serde(default)]
    items: Vec<KeyItem>,
    #[serde(default, rename = "isTruncated")]
    is_truncated: bool,
    #[serde(default, rename = "nextExclusiveStartKey")]
    next_exclusive_start_key: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct KeyItem {
    key: String,
}

/// Splits serialized items into JSON array bodies of at most `limit` bytes each, in order.
///
/// Fails with the item's position when a single item does not fit into `limit` on its own.
pub fn chunk_items(items: &[Item], limit: usize) -> Result<Vec<Vec<u8>>, (usize, usize)> {
    let mut chunks = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    for (position, item) in items.iter().enumerate() {
        let bytes = item.as_bytes();
        if bytes.len() + 2 > limit {
            return Err((position, bytes.len()));
        }
        // A chunk is `[` + items joined by `,` + `]`; adding this item costs a comma, the item
        // and (eventually) the closing bracket.
        if !current.is_empty() && current.len() + 1 + bytes.len() + 1 > limit {
            current.push(b']');
            chunks.push(std::mem::take(&mut current));
        }
        current.push(if current.is_empty() { b'[' } else { b',' });
        current.extend_from_slice(bytes);
    }
    if !current.is_empty() {
        current.push(b']');
        chunks.push(current);
    }
    Ok(chunks)
}

/// Storage on the Apify platform: the run's default store and dataset and the named ledger store.
#[derive(Debug)]
pub struct ApifyStorage {
    api: ApiClient,
    run_id: String,
    default_store_id: String,
    dataset_id: String,
    ledger_store_id: OnceCell<String>,
    max_push_bytes: usize,
}

impl ApifyStorage {
    /// Prepares the backend for the run described by `env` (no request is made yet).
    pub async fn connect(env: &PlatformEnv) -> Result<Self, StorageError> {
        let api = ApiClient::new(env)?;
        Self::with_client(env, api)
    }

    /// The same as [`ApifyStorage::connect`] with a given client (e.g. another retry schedule).
    pub fn with_client(env: &PlatformEnv, api: ApiClient) -> Result<Self, StorageError> {
        let required = |value: &Option<String>, name: &str| {
            value.clone().ok_or_else(|| StorageError::Api {
                method: String::new(),
                path: String::new(),
                message: format!("{name} is not set"),
            })
        };
        Ok(ApifyStorage {
            run_id: required(&env.actor_run_id, "ACTOR_RUN_ID")?,
            default_store_id: required(
                &env.default_kv_store_id,
                "ACTOR_DEFAULT_KEY_VALUE_STORE_ID",
            )?,
            dataset_id: required(&env.default_dataset_id, "ACTOR_DEFAULT_DATASET_ID")?,
            api,
            ledger_store_id: OnceCell::new(),
            max_push_bytes: env.max_push_bytes,
        })
    }

    /// The API client, to share with the charging manager.
    pub fn api(&self) -> &ApiClient {
        &self.api
    }

    /// Id of the store, creating the named ledger store on first use.
    async fn store_id(&self, store: Store) -> Result<&str, ApiError> {
        match store {
            Store::Default => Ok(&self.default_store_id),
            Store::Ledger => self
                .ledger_store_id
                .get_or_try_init(|| self.get_or_create_store(LEDGER_STORE_NAME))
                .await
                .map(String::as_str),
        }
    }

    async fn get_or_create_store(&self, name: &str) -> Result<String, ApiError> {
        let request = self
            .api
            .request(Method::POST, &["key-value-stores"])
            .query("name", name);
        let path = request.url.path().to_string();
        let response = self.api.send(request).await?;
        let id = response
            .data()
            .and_then(|data| data.get("id").and_then(Value::as_str).map(str::to_string));
        id.ok_or_else(|| ApiError::Response {
            method: Method::POST,
            path,
            message: "no data.id in the store object".to_string(),
        })
    }
}

impl Storage for ApifyStorage {
    async fn get_record(&self, store: Store, key: &str) -> Result<Option<Record>, StorageError> {
        let store_id = self.store_id(store).await?;
        let request = self
            .api
            .request(Method::GET, &["key-value-stores", store_id, "records", key])
            .query("attachment", "true")
            .max_body(MAX_READ_BYTES);
        match self.api.send(request).await {
            Ok(response) => Ok(Some(Record {
                bytes: response.body.to_vec(),
                content_type: response.content_type,
            })),
            Err(error) if error.is_record_not_found() => Ok(None),
            Err(ApiError::TooLarge { limit, .. }) => Err(StorageError::TooLarge {
                key: key.to_string(),
                limit,
            }),
            Err(error) => Err(error.into()),
        }
    }

    async fn put_record(
        &self,
        store: Store,
        key: &str,
        record: Record,
    ) -> Result<(), StorageError> {
        let store_id = self.store_id(store).await?;
        let request = self
            .api
            .request(Method::PUT, &["key-value-stores", store_id, "records", key])
            .body(record.bytes, &record.content_type)?;
        self.api.send(request).await?;
        Ok(())
    }

    async fn list_keys(&self, store: Store) -> Result<Vec<String>, StorageError> {
        let store_id = self.store_id(store).await?.to_string();
        let mut keys = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let mut request = self
                .api
                .request(Method::GET, &["key-value-stores", &store_id, "keys"])
                .query("limit", "1000");
            if let Some(start) = &start {
                request = request.query("exclusiveStartKey", start);
            }
            let response = self.api.send(request).await?;
            let page: KeysPage = response
                .data()
                .and_then(|data| serde_json::from_value(data).ok())
                .ok_or_else(|| StorageError::Api {
                    method: "GET".to_string(),
                    path: format!("key-value-stores/{store_id}/keys"),
                    message: "the answer is not a list of keys".to_string(),
                })?;
            let last = page.items.last().map(|item| item.key.clone());
            keys.extend(page.items.into_iter().map(|item| item.key));
            match (page.is_truncated, page.next_exclusive_start_key.or(last)) {
                (true, Some(next)) if start.as_deref() != Some(next.as_str()) => start = Some(next),
                _ => break,
            }
        }
        keys.sort();
        Ok(keys)
    }

    async fn delete_record(&self, store: Store, key: &str) -> Result<(), StorageError> {
        let store_id = self.store_id(store).await?;
        let request = self.api.request(
            Method::DELETE,
            &["key-value-stores", store_id, "records", key],
        );
        match self.api.send(request).await {
            Ok(_) => Ok(()),
            Err(error) if error.is_record_not_found() => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    async fn push_items(&self, items: &[Item]) -> Result<(), StorageError> {
        let segments = ["datasets", self.dataset_id.as_str(), "items"];
        let limit = self.max_push_bytes;
        let chunks = chunk_items(items, limit).map_err(|(position, size)| StorageError::Api {
            method: "POST".to_string(),
            path: segments.join("/"),
            message: format!(
                "dataset item {position} is {size} bytes, more than the {limit} a request may carry"
            ),
        })?;
        for chunk in chunks {
            let request = self
                .api
                .request(Method::POST, &segments)
                .body(chunk, "application/json; charset=utf-8")?;
            self.api.send(request).await?;
        }
        Ok(())
    }

    async fn set_status_message(&self, message: &str, terminal: bool) -> Result<(), StorageError> {
        tracing::info!(status = message, terminal, "status message");
        let body = serde_json::json!({
            "statusMessage": message,
            "isStatusMessageTerminal": terminal,
        });
        let request = self
            .api
            .request(Method::PUT, &["actor-runs", &self.run_id])
            .json(&body)?;
        self.api.send(request).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::client::{MAX_RETRY_AFTER, parse_error_body, parse_retry_after, random_unit};
    use super::*;
    use chrono::{DateTime, Utc};
    use reqwest::StatusCode;
    use std::time::Duration;

    fn parse(chunk: &[u8]) -> Vec<Value> {
        serde_json::from_slice(chunk).unwrap()
    }

    fn items(values: &[Value]) -> Vec<Item> {
        values.iter().map(|v| Item::of(v).unwrap()).collect()
    }

    #[test]
    fn chunks_keep_order_and_stay_under_the_limit() {
        let values: Vec<Value> = (0..50)
            .map(|n| serde_json::json!({"n": n, "pad": "x".repeat(n * 3)}))
            .collect();
        let items = items(&values);
        for limit in [200, 500, 1_000, 100_000] {
            let chunks = chunk_items(&items, limit).unwrap();
            assert!(chunks.iter().all(|c| c.len() <= limit), "limit {limit}");
            let joined: Vec<Value> = chunks.iter().flat_map(|c| parse(c)).collect();
            assert_eq!(joined, values, "limit {limit}");
        }
        assert_eq!(chunk_items(&items, 100_000).unwrap().len(), 1);
        assert!(chunk_items(&items, 1_000).unwrap().len() > 1);
    }

    #[test]
    fn chunk_exactly_at_the_limit() {
        let items = items(&[serde_json::json!(1), serde_json::json!(2)]);
        // "[1,2]" is 5 bytes.
        assert_eq!(chunk_items(&items, 5).unwrap(), vec![b"[1,2]".to_vec()]);
        assert_eq!(
            chunk_items(&items, 4).unwrap(),
            vec![b"[1]".to_vec(), b"[2]".to_vec()]
        );
        assert!(chunk_items(&[], 5).unwrap().is_empty());
    }

    #[test]
    fn an_item_larger_than_the_limit_is_refused() {
        let items = items(&[
            serde_json::json!("small"),
            serde_json::json!("x".repeat(100)),
        ]);
        assert_eq!(chunk_items(&items, 50), Err((1, 102)));
    }

    #[test]
    fn retry_delays_double() {
        let policy = RetryPolicy::default();
        let delays: Vec<u64> = (1..=4)
            .map(|n| policy.delay_before(n).as_millis() as u64)
            .collect();
        assert_eq!(delays, vec![500, 1_000, 2_000, 4_000]);
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date_and_is_capped() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let cases = [
            ("2", Some(2)),
            (" 0 ", Some(0)),
            ("3600", Some(MAX_RETRY_AFTER.as_secs())),
            ("Tue, 01 Dec 2026 12:00:05 GMT", Some(5)),
            ("Tue, 01 Dec 2026 11:59:00 GMT", Some(0)),
            (
                "Wed, 02 Dec 2026 12:00:00 GMT",
                Some(MAX_RETRY_AFTER.as_secs()),
            ),
            ("-1", None),
            ("soon", None),
        ];
        for (value, seconds) in cases {
            assert_eq!(
                parse_retry_after(value, now),
                seconds.map(Duration::from_secs),
                "{value}"
            );
        }
    }

    #[test]
    fn error_bodies() {
        let body = br#"{"error":{"type":"record-not-found","message":"Record was not found"}}"#;
        assert_eq!(
            parse_error_body(StatusCode::NOT_FOUND, body),
            (
                "record-not-found".to_string(),
                "Record was not found".to_string()
            )
        );
        assert_eq!(
            parse_error_body(StatusCode::BAD_GATEWAY, b"upstream down"),
            ("bad gateway".to_string(), "upstream down".to_string())
        );
    }

    #[test]
    fn randomness_varies() {
        let values: std::collections::HashSet<u64> = (0..100).map(|_| random_u64()).collect();
        assert!(values.len() > 95);
        assert!(
            (0..100)
                .map(|_| random_unit())
                .all(|x| (0.0..1.0).contains(&x))
        );
    }
}
