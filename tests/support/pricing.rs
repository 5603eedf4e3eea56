//! The `APIFY_ACTOR_PRICING_INFO` value the tests hand to a pay-per-event run: one builder for
//! the SDK's shape, and the prices of seed 000.
//!
//! Use with `#[path = "support/pricing.rs"] mod pricing;` from an integration test.
#![allow(dead_code)]

use std::sync::LazyLock;

/// The prices of seed 000 (decimal strings, as the platform writes them).
pub const SEED_PRICES: &[(&str, &str)] = &[
    ("run_start", "0.01"),
    ("server_checked", "0.005"),
    ("surface_change_recorded", "0.002"),
];

/// `APIFY_ACTOR_PRICING_INFO` with the prices of seed 000.
pub static SEED_PRICING_INFO: LazyLock<String> = LazyLock::new(|| pricing_info(SEED_PRICES));

/// `APIFY_ACTOR_PRICING_INFO` for a pay-per-event Actor with these prices (decimal strings).
pub fn pricing_info(prices: &[(&str, &str)]) -> String {
    let events: Vec<String> = prices
        .iter()
        .map(|(name, price)| {
            format!(r#""{name}": {{"eventTitle": "{name}", "eventPriceUsd": {price}}}"#)
        })
        .collect();
    format!(
        r#"{{"pricingModel": "PAY_PER_EVENT", "pricingPerEvent": {{"actorChargeEvents": {{{}}}}}}}"#,
        events.join(", ")
    )
}
