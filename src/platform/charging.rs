//! Pay-per-event charging within the user's maximum total charge.
//!
//! Follows the Python SDK's charging manager, which never goes over the budget: a charge of
//! `count` events books only as many as the remaining budget pays for and says how many that
//! was. Money is exact: amounts are whole nano-dollars, so sums never drift.
//!
//! On the platform each booked event (except the platform's own `apify-*` events and events
//! without a configured price) is sent to `POST /v2/actor-runs/{runId}/charge` with an
//! idempotency key that is made once per charge and reused by every retry. Locally nothing is
//! sent: the manager is a dry run that only records what would have been charged.
//!
//! An outage of the charge endpoint costs seconds, not minutes per server: a charge call is
//! tried [`CHARGE_TRIES`] times, and after [`BREAKER_THRESHOLD`] calls in a row have failed the
//! endpoint is not called again in this run (a circuit breaker). The run goes on: events are
//! still booked against the budget, never sent twice, and the summary says how many were not
//! sent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use reqwest::Method;
use serde_json::{Value, json};

use super::apify::{ApiClient, ApiError, random_u64};
use super::env::PlatformEnv;
use super::usd::nanos_to_json;
pub use super::usd::{Rounding, Usd};

/// Attempts of one charge call (other API calls get [`super::apify::MAX_TRIES`]): with the
/// default 500 ms base that is at most about 7 s per failing call.
pub const CHARGE_TRIES: u32 = 4;

/// Failed charge calls in a row after which the endpoint is not called again in this run.
pub const BREAKER_THRESHOLD: u32 = 3;

/// The pricing model that makes events chargeable.
const PAY_PER_EVENT: &str = "PAY_PER_EVENT";

/// Price of an event without a configured price in a local pay-per-event test run (as the SDKs
/// do, so that a local budget can run out).
const LOCAL_UNKNOWN_EVENT_PRICE: Usd = Usd::ONE;

/// Why charging could not be set up or an event could not be charged.
#[derive(Debug, thiserror::Error)]
pub enum ChargingError {
    /// The pricing information (environment or run object) cannot be understood.
    #[error("invalid pricing information in {origin}: {message}")]
    InvalidPricing {
        /// Where it came from, e.g. `APIFY_ACTOR_PRICING_INFO`.
        origin: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// Charging on the platform needs the run id.
    #[error("running on the Apify platform but ACTOR_RUN_ID is not set")]
    MissingRunId,
    /// The platform API refused or failed a call.
    #[error("Apify API: {0}")]
    Api(#[from] ApiError),
}

/// The budget book: prices, counts and the maximum. Pure logic, no I/O.
#[derive(Debug, Clone, Default)]
struct ChargeBook {
    /// Whether events cost money at all (pay-per-event pricing).
    pay_per_event: bool,
    /// Configured price per event.
    prices: BTreeMap<String, Usd>,
    /// Event titles from the pricing information, for the summary.
    titles: BTreeMap<String, String>,
    /// Price of an event that has no configured price.
    unknown_price: Usd,
    /// Maximum total charge; `None` is unlimited.
    max_total: Option<Usd>,
    /// Events booked so far in this run (including those charged before a migration).
    counts: BTreeMap<String, u64>,
}

impl ChargeBook {
    fn price(&self, event: &str) -> Usd {
        if !self.pay_per_event {
            return Usd::ZERO;
        }
        self.prices
            .get(event)
            .copied()
            .unwrap_or(self.unknown_price)
    }

    fn total_nanos(&self) -> u128 {
        self.counts
            .iter()
            .map(|(event, count)| u128::from(*count) * u128::from(self.price(event).nanos()))
            .sum()
    }

    /// How many more of `event` the remaining budget pays for.
    fn affordable(&self, event: &str) -> u64 {
        self.affordable_with_reserve(event, &[])
    }

    /// How many more of `event` the budget pays for after setting aside the cost of `reserve`
    /// (events that are promised but not booked yet).
    fn affordable_with_reserve(&self, event: &str, reserve: &[(&str, u64)]) -> u64 {
        let price = self.price(event);
        let Some(max_total) = self.max_total else {
            return u64::MAX;
        };
        if price.is_zero() {
            return u64::MAX;
        }
        let reserved: u128 = reserve
            .iter()
            .map(|(name, count)| u128::from(*count) * u128::from(self.price(name).nanos()))
            .sum();
        let remaining = u128::from(max_total.nanos())
            .saturating_sub(self.total_nanos())
            .saturating_sub(reserved);
        u64::try_from(remaining / u128::from(price.nanos())).unwrap_or(u64::MAX)
    }

    /// Books as many of `count` events as the budget allows and returns that number.
    fn book(&mut self, event: &str, count: u64) -> u64 {
        let booked = count.min(self.affordable(event));
        if booked > 0 {
            let entry = self.counts.entry(event.to_string()).or_default();
            *entry = entry.saturating_add(booked);
        }
        booked
    }

    fn summary(&self) -> Value {
        let names: std::collections::BTreeSet<&String> =
            self.prices.keys().chain(self.counts.keys()).collect();
        let events: serde_json::Map<String, Value> = names
            .into_iter()
            .map(|name| {
                let count = self.counts.get(name).copied().unwrap_or(0);
                let price = self.price(name);
                let total = u128::from(count) * u128::from(price.nanos());
                let mut entry = json!({
                    "count": count,
                    "price_usd": price.to_json(),
                    "total_usd": nanos_to_json(total),
                });
                if let Some(title) = self.titles.get(name) {
                    entry["title"] = json!(title);
                }
                (name.clone(), entry)
            })
            .collect();
        json!({
            "pay_per_event": self.pay_per_event,
            "max_total_charge_usd": self.max_total.map(Usd::to_json),
            "total_usd": nanos_to_json(self.total_nanos()),
            "events": events,
        })
    }
}

/// Where charges go.
#[derive(Debug)]
enum Sink {
    /// The platform's charge endpoint of this run.
    Platform { api: ApiClient, run_id: String },
    /// Nowhere: a local run only records what it would charge.
    DryRun,
}

/// The run's charging manager. Shared by reference; charges are booked under a lock.
#[derive(Debug)]
pub struct Charging {
    book: Mutex<ChargeBook>,
    sink: Sink,
    /// Charge calls that failed in a row (reset by a success); the breaker is open at
    /// [`BREAKER_THRESHOLD`].
    failures: AtomicU32,
    /// Booked events that were not sent because the charge endpoint failed, by event.
    unsent: Mutex<BTreeMap<String, u64>>,
}

impl Charging {
    /// Sets up charging for the run described by `env`.
    ///
    /// Prices and already-charged counts come from `APIFY_ACTOR_PRICING_INFO` and
    /// `APIFY_CHARGED_ACTOR_EVENT_COUNTS` when both are set, otherwise (on the platform) from
    /// `GET /v2/actor-runs/{runId}`. Locally the pricing variables are used when present, and
    /// `ACTOR_TEST_PAY_PER_EVENT` turns on pay-per-event pricing.
    pub async fn init(env: &PlatformEnv, api: &ApiClient) -> Result<Self, ChargingError> {
        let source =
            if let (Some(pricing), Some(counts)) = (&env.pricing_info, &env.charged_event_counts) {
                PricingSource::from_env(pricing, Some(counts), env.max_total_charge_usd)?
            } else if env.is_at_home {
                let run_id = env
                    .actor_run_id
                    .as_deref()
                    .ok_or(ChargingError::MissingRunId)?;
                PricingSource::from_run(api, run_id, env.max_total_charge_usd).await?
            } else if let Some(pricing) = &env.pricing_info {
                PricingSource::from_env(
                    pricing,
                    env.charged_event_counts.as_deref(),
                    env.max_total_charge_usd,
                )?
            } else {
                PricingSource {
                    max_total: env.max_total_charge_usd,
                    ..PricingSource::default()
                }
            };

        let sink = match (env.is_at_home, &env.actor_run_id) {
            (true, Some(run_id)) => Sink::Platform {
                api: api.clone().with_max_tries(CHARGE_TRIES),
                run_id: run_id.clone(),
            },
            (true, None) => return Err(ChargingError::MissingRunId),
            (false, _) => Sink::DryRun,
        };
        let pay_per_event =
            env.test_pay_per_event || source.model.as_deref() == Some(PAY_PER_EVENT);
        let unknown_price = if pay_per_event && !env.is_at_home {
            LOCAL_UNKNOWN_EVENT_PRICE
        } else {
            Usd::ZERO
        };
        let book = ChargeBook {
            pay_per_event,
            prices: source.prices,
            titles: source.titles,
            unknown_price,
            max_total: source.max_total,
            counts: source.counts,
        };
        // A local run's dry run charges nothing: said at debug level only, so the default
        // log of a local run carries no billing lines.
        let max_total_charge_usd = book.max_total.map(|usd| usd.to_string());
        if matches!(sink, Sink::DryRun) {
            tracing::debug!(
                pay_per_event,
                dry_run = true,
                ?max_total_charge_usd,
                "charging set up"
            );
        } else {
            tracing::info!(
                pay_per_event,
                dry_run = false,
                ?max_total_charge_usd,
                "charging set up"
            );
        }
        Ok(Charging::with(book, sink))
    }

    /// Charges up to `count` events named `event` and returns how many the budget allowed.
    ///
    /// Never books more than the remaining budget pays for; events that cost nothing are always
    /// allowed in full. Booked events stay booked even when the API call then fails, so the
    /// budget is never overrun by a charge the platform may have received.
    pub async fn charge(&self, event: &str, count: u64) -> Result<u64, ChargingError> {
        if count == 0 {
            return Ok(0);
        }
        let (booked, priced) = {
            let mut book = self.lock();
            let booked = book.book(event, count);
            (
                booked,
                book.pay_per_event && book.prices.contains_key(event),
            )
        };
        if booked < count {
            tracing::info!(
                event,
                requested = count,
                charged = booked,
                "the maximum total charge allows only part of this charge"
            );
        }
        if booked == 0 {
            return Ok(0);
        }
        let Sink::Platform { api, run_id } = &self.sink else {
            return Ok(booked);
        };
        if event.starts_with("apify-") {
            // The platform charges its own events; they are only tracked for the budget.
            return Ok(booked);
        }
        if !priced {
            if self.is_pay_per_event() {
                tracing::warn!(event, "event has no configured price, not charged");
            }
            return Ok(booked);
        }
        if self.breaker_open() {
            tracing::debug!(event, booked, "charge endpoint failing: not sent");
            self.note_unsent(event, booked);
            return Ok(booked);
        }
        let key = idempotency_key(run_id, event);
        let request = api
            .request(Method::POST, &["actor-runs", run_id, "charge"])
            .header("idempotency-key", &key)?
            .json(&json!({ "eventName": event, "count": booked }))?;
        match api.send(request).await {
            Ok(_) => {
                self.failures.store(0, Ordering::Relaxed);
                Ok(booked)
            }
            Err(error) => {
                self.note_unsent(event, booked);
                let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                if failures == BREAKER_THRESHOLD {
                    tracing::error!(
                        failures,
                        "the charge endpoint keeps failing: no more charges are sent in this \
                         run (events are still booked against the budget)"
                    );
                }
                Err(error.into())
            }
        }
    }

    fn with(book: ChargeBook, sink: Sink) -> Charging {
        Charging {
            book: Mutex::new(book),
            sink,
            failures: AtomicU32::new(0),
            unsent: Mutex::new(BTreeMap::new()),
        }
    }

    /// True once [`BREAKER_THRESHOLD`] charge calls in a row have failed.
    fn breaker_open(&self) -> bool {
        self.failures.load(Ordering::Relaxed) >= BREAKER_THRESHOLD
    }

    fn note_unsent(&self, event: &str, count: u64) {
        let mut unsent = self
            .unsent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *unsent.entry(event.to_string()).or_default() += count;
    }

    /// How many more of `event` the remaining budget allows; `u64::MAX` if unlimited or free.
    pub fn affordable(&self, event: &str) -> u64 {
        self.lock().affordable(event)
    }

    /// How many more of `event` the budget allows once the events in `reserve` (promised, not
    /// yet charged) are paid for; `u64::MAX` if unlimited or free.
    pub fn affordable_with_reserve(&self, event: &str, reserve: &[(&str, u64)]) -> u64 {
        self.lock().affordable_with_reserve(event, reserve)
    }

    /// What is left of the maximum total charge after the events booked so far; `None` when
    /// there is no maximum.
    pub fn remaining(&self) -> Option<Usd> {
        let book = self.lock();
        let max_total = book.max_total?;
        let spent = u64::try_from(book.total_nanos()).unwrap_or(u64::MAX);
        Some(Usd::from_nanos(max_total.nanos().saturating_sub(spent)))
    }

    /// A dry-run charging manager for one shard of a sharded watch run in this process: the
    /// same prices, nothing booked yet, and `max_total` as its maximum.
    pub fn for_shard(&self, max_total: Option<Usd>) -> Charging {
        let book = self.lock();
        let shard_book = ChargeBook {
            pay_per_event: book.pay_per_event,
            prices: book.prices.clone(),
            titles: book.titles.clone(),
            unknown_price: book.unknown_price,
            max_total,
            counts: BTreeMap::new(),
        };
        Charging::with(shard_book, Sink::DryRun)
    }

    /// The price of one `event` used for the budget (zero when events are not paid).
    pub fn price(&self, event: &str) -> Usd {
        self.lock().price(event)
    }

    /// How many `event`s have been booked in this run.
    pub fn count(&self, event: &str) -> u64 {
        self.lock().counts.get(event).copied().unwrap_or(0)
    }

    /// True when events cost money (pay-per-event pricing, real or `ACTOR_TEST_PAY_PER_EVENT`).
    pub fn is_pay_per_event(&self) -> bool {
        self.lock().pay_per_event
    }

    /// True when charges are only recorded, not sent (every local run).
    pub fn is_dry_run(&self) -> bool {
        matches!(self.sink, Sink::DryRun)
    }

    /// Per event: count, price and total, plus the maximum and the grand total, for the
    /// summary row's `charges`.
    pub fn summary(&self) -> Value {
        let mut summary = self.lock().summary();
        summary["dry_run"] = json!(self.is_dry_run());
        let unsent = self
            .unsent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !unsent.is_empty() {
            summary["not_sent"] = json!(*unsent);
        }
        summary
    }

    fn lock(&self) -> MutexGuard<'_, ChargeBook> {
        // A panic while holding the lock cannot leave the book half-updated (every update is a
        // single insert), so a poisoned lock is still usable.
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `<runId>-<event>-<millis>-<random>`, made once per logical charge.
fn idempotency_key(run_id: &str, event: &str) -> String {
    let millis = chrono::Utc::now().timestamp_millis();
    let mut random = random_u64();
    let suffix: String = (0..6)
        .map(|_| {
            let digit = (random % 36) as u32;
            random /= 36;
            char::from_digit(digit, 36).unwrap_or('0')
        })
        .collect();
    format!("{run_id}-{event}-{millis}-{suffix}")
}

/// Prices, counts and maximum as read from the environment or the run object.
#[derive(Debug, Default)]
struct PricingSource {
    model: Option<String>,
    prices: BTreeMap<String, Usd>,
    titles: BTreeMap<String, String>,
    counts: BTreeMap<String, u64>,
    max_total: Option<Usd>,
}

impl PricingSource {
    fn from_env(
        pricing: &str,
        counts: Option<&str>,
        max_total: Option<Usd>,
    ) -> Result<Self, ChargingError> {
        let pricing: Value =
            serde_json::from_str(pricing).map_err(|e| ChargingError::InvalidPricing {
                origin: "APIFY_ACTOR_PRICING_INFO",
                message: e.to_string(),
            })?;
        let counts: Value = match counts {
            Some(text) => {
                serde_json::from_str(text).map_err(|e| ChargingError::InvalidPricing {
                    origin: "APIFY_CHARGED_ACTOR_EVENT_COUNTS",
                    message: e.to_string(),
                })?
            }
            None => Value::Null,
        };
        let mut source = Self::parse(&pricing, "APIFY_ACTOR_PRICING_INFO")?;
        source.counts = parse_counts(&counts, "APIFY_CHARGED_ACTOR_EVENT_COUNTS")?;
        source.max_total = max_total;
        Ok(source)
    }

    async fn from_run(
        api: &ApiClient,
        run_id: &str,
        env_max_total: Option<Usd>,
    ) -> Result<Self, ChargingError> {
        const ORIGIN: &str = "the run object";
        let response = api
            .send(api.request(Method::GET, &["actor-runs", run_id]))
            .await?;
        let run = serde_json::from_slice::<Value>(&response.body)
            .ok()
            .and_then(|mut v| v.get_mut("data").map(Value::take))
            .ok_or_else(|| ChargingError::InvalidPricing {
                origin: ORIGIN,
                message: "no data member in the response".to_string(),
            })?;
        let mut source = Self::parse(&run["pricingInfo"], ORIGIN)?;
        source.counts = parse_counts(&run["chargedEventCounts"], ORIGIN)?;
        source.max_total = match &run["options"]["maxTotalChargeUsd"] {
            Value::Null => env_max_total,
            value => Some(Usd::from_json(value, Rounding::Down).map_err(|message| {
                ChargingError::InvalidPricing {
                    origin: ORIGIN,
                    message: format!("maxTotalChargeUsd: {message}"),
                }
            })?),
        };
        Ok(source)
    }

    /// Reads the model and the event prices of a pricing-info object (`{}` or null = none).
    fn parse(pricing: &Value, origin: &'static str) -> Result<Self, ChargingError> {
        let invalid = |message: String| ChargingError::InvalidPricing { origin, message };
        let mut source = PricingSource {
            model: pricing["pricingModel"].as_str().map(str::to_string),
            ..PricingSource::default()
        };
        let events = &pricing["pricingPerEvent"]["actorChargeEvents"];
        let Some(events) = events.as_object() else {
            return Ok(source);
        };
        for (name, event) in events {
            if let Some(title) = event["eventTitle"].as_str() {
                source.titles.insert(name.clone(), title.to_string());
            }
            match &event["eventPriceUsd"] {
                // Tier-priced events have no flat price and cannot be charged through the API.
                Value::Null => {
                    tracing::warn!(
                        event = name,
                        "event has no flat price, it will not be charged"
                    );
                }
                price => {
                    let price = Usd::from_json(price, Rounding::Up)
                        .map_err(|message| invalid(format!("price of {name}: {message}")))?;
                    source.prices.insert(name.clone(), price);
                }
            }
        }
        Ok(source)
    }
}

/// Reads `{"event": count}`; null means no counts.
fn parse_counts(
    value: &Value,
    origin: &'static str,
) -> Result<BTreeMap<String, u64>, ChargingError> {
    let Some(object) = value.as_object() else {
        return match value {
            Value::Null => Ok(BTreeMap::new()),
            _ => Err(ChargingError::InvalidPricing {
                origin,
                message: "charged event counts must be an object".to_string(),
            }),
        };
    };
    object
        .iter()
        .map(|(name, count)| {
            count
                .as_u64()
                .map(|count| (name.clone(), count))
                .ok_or_else(|| ChargingError::InvalidPricing {
                    origin,
                    message: format!("charged count of {name} is not a non-negative integer"),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd(text: &str) -> Usd {
        Usd::parse(text, Rounding::Down).unwrap()
    }

    fn book(max: Option<&str>, prices: &[(&str, &str)]) -> ChargeBook {
        ChargeBook {
            pay_per_event: true,
            prices: prices
                .iter()
                .map(|(name, price)| (name.to_string(), usd(price)))
                .collect(),
            max_total: max.map(usd),
            ..ChargeBook::default()
        }
    }

    const PRICES: &[(&str, &str)] = &[
        ("run_start", "0.01"),
        ("server_checked", "0.005"),
        ("surface_change_recorded", "0.002"),
    ];

    #[test]
    fn affordable_counts() {
        let cases = [
            (None, "server_checked", u64::MAX),
            (Some("0"), "server_checked", 0),
            (Some("0.025"), "server_checked", 5),
            (Some("0.0249"), "server_checked", 4),
            (Some("0.025"), "unknown_event", u64::MAX),
        ];
        for (max, event, expected) in cases {
            assert_eq!(
                book(max, PRICES).affordable(event),
                expected,
                "{max:?} {event}"
            );
        }
    }

    #[test]
    fn booking_never_exceeds_the_budget() {
        let mut book = book(Some("0.025"), PRICES);
        assert_eq!(book.book("run_start", 1), 1);
        assert_eq!(book.affordable("server_checked"), 3);
        assert_eq!(book.book("server_checked", 5), 3);
        assert_eq!(book.book("surface_change_recorded", 1), 0);
        assert_eq!(book.total_nanos(), 25_000_000);
        assert_eq!(book.affordable("run_start"), 0);
    }

    #[test]
    fn reserved_events_are_set_aside() {
        let mut book = book(Some("0.025"), PRICES);
        book.book("run_start", 1);
        let cases: [(&[(&str, u64)], u64); 5] = [
            (&[], 7),
            (&[("server_checked", 1)], 5),
            (&[("server_checked", 3)], 0),
            (&[("server_checked", 4)], 0),
            (&[("server_checked", 1), ("surface_change_recorded", 2)], 3),
        ];
        for (reserve, expected) in cases {
            assert_eq!(
                book.affordable_with_reserve("surface_change_recorded", reserve),
                expected,
                "{reserve:?}"
            );
        }
    }

    #[test]
    fn free_pricing_never_limits() {
        let mut book = book(Some("0"), PRICES);
        book.pay_per_event = false;
        assert_eq!(book.affordable("server_checked"), u64::MAX);
        assert_eq!(book.book("server_checked", 7), 7);
        assert_eq!(book.total_nanos(), 0);
    }

    #[test]
    fn earlier_counts_use_up_budget() {
        let mut book = book(Some("0.03"), PRICES);
        book.counts.insert("run_start".to_string(), 1);
        book.counts.insert("server_checked".to_string(), 2);
        assert_eq!(book.affordable("surface_change_recorded"), 5);
    }

    #[test]
    fn summary_lists_prices_counts_and_totals() {
        let mut book = book(Some("1"), PRICES);
        book.book("server_checked", 3);
        let summary = book.summary();
        assert_eq!(summary["events"]["server_checked"]["count"], json!(3));
        assert_eq!(
            summary["events"]["server_checked"]["total_usd"],
            json!(0.015)
        );
        assert_eq!(summary["events"]["run_start"]["count"], json!(0));
        assert_eq!(summary["total_usd"], json!(0.015));
        assert_eq!(summary["max_total_charge_usd"], json!(1.0));
    }

    #[test]
    fn pricing_info_parsing() {
        let info = json!({
            "pricingModel": "PAY_PER_EVENT",
            "pricingPerEvent": {"actorChargeEvents": {
                "run_start": {"eventTitle": "Run start", "eventPriceUsd": 0.01},
                "tiered": {"eventTitle": "Tiered", "eventTieredPricingUsd": {}}
            }}
        });
        let source = PricingSource::parse(&info, "test").unwrap();
        assert_eq!(source.model.as_deref(), Some(PAY_PER_EVENT));
        assert_eq!(source.prices.len(), 1);
        assert_eq!(source.prices["run_start"], usd("0.01"));
        assert_eq!(source.titles["tiered"], "Tiered");
        assert!(
            PricingSource::parse(&json!({}), "test")
                .unwrap()
                .model
                .is_none()
        );
        let bad =
            json!({"pricingPerEvent": {"actorChargeEvents": {"x": {"eventPriceUsd": "free"}}}});
        assert!(PricingSource::parse(&bad, "test").is_err());
        assert!(parse_counts(&json!({"run_start": -1}), "test").is_err());
        assert_eq!(
            parse_counts(&json!({"run_start": 2}), "test").unwrap()["run_start"],
            2
        );
    }

    #[test]
    fn idempotency_keys_have_the_documented_shape() {
        let a = idempotency_key("run1", "server_checked");
        let b = idempotency_key("run1", "server_checked");
        assert_ne!(a, b);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[0], "run1");
        assert_eq!(parts[1], "server_checked");
        assert!(parts[2].parse::<i64>().unwrap() > 1_600_000_000_000);
        assert_eq!(parts[3].len(), 6);
        assert!(parts[3].chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
