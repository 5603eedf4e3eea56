//! Money: an exact amount of US dollars, in whole nano-dollars, so sums of prices never drift.
//!
//! Its own module because both the environment (the maximum total charge) and the charging
//! manager (prices, totals) read amounts, and neither should reach into the other for them.

use std::fmt;

use serde_json::Value;

/// Nano-dollars in one dollar.
const NANOS_PER_USD: u64 = 1_000_000_000;

/// Digits after the decimal point that [`Usd`] keeps.
const FRACTION_DIGITS: usize = 9;

/// An amount of US dollars, exact to a billionth of a dollar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd {
    nanos: u64,
}

/// Which way to round a decimal that has more digits than [`Usd`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Toward zero; used for budgets, so a budget is never overstated.
    Down,
    /// Away from zero; used for prices, so a price is never understated.
    Up,
}

impl Usd {
    /// Zero dollars.
    pub const ZERO: Usd = Usd { nanos: 0 };

    /// One dollar.
    pub const ONE: Usd = Usd {
        nanos: NANOS_PER_USD,
    };

    /// An amount of nano-dollars (10⁻⁹ USD).
    pub const fn from_nanos(nanos: u64) -> Self {
        Usd { nanos }
    }

    /// The amount in nano-dollars.
    pub const fn nanos(self) -> u64 {
        self.nanos
    }

    /// True for zero dollars.
    pub const fn is_zero(self) -> bool {
        self.nanos == 0
    }

    /// Parses a plain non-negative decimal such as `5`, `0.25` or `.5`.
    pub fn parse(text: &str, rounding: Rounding) -> Result<Usd, String> {
        let text = text.trim();
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction)
        {
            return Err("expected a non-negative decimal number such as 0.25".to_string());
        }
        let too_large = || "the amount is too large".to_string();
        let whole: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| too_large())?
        };
        let kept = &fraction[..fraction.len().min(FRACTION_DIGITS)];
        let dropped = &fraction[kept.len()..];
        let mut fraction_nanos: u64 = format!("{kept:0<FRACTION_DIGITS$}")
            .parse()
            .map_err(|_| too_large())?;
        if rounding == Rounding::Up && dropped.bytes().any(|b| b != b'0') {
            fraction_nanos += 1;
        }
        whole
            .checked_mul(NANOS_PER_USD)
            .and_then(|n| n.checked_add(fraction_nanos))
            .map(Usd::from_nanos)
            .ok_or_else(too_large)
    }

    /// Reads an amount from JSON, given as a number or as a decimal string.
    pub fn from_json(value: &Value, rounding: Rounding) -> Result<Usd, String> {
        match value {
            Value::String(text) => Usd::parse(text, rounding),
            Value::Number(number) => match (number.as_u64(), number.as_f64()) {
                (Some(whole), _) => whole
                    .checked_mul(NANOS_PER_USD)
                    .map(Usd::from_nanos)
                    .ok_or_else(|| "the amount is too large".to_string()),
                // Rust prints the shortest decimal that reads back as the same f64, without an
                // exponent, so `0.005` stays `0.005` here.
                (None, Some(float)) if float >= 0.0 => Usd::parse(&float.to_string(), rounding),
                _ => Err(format!("{number} is not a non-negative amount")),
            },
            other => Err(format!("{other} is not an amount")),
        }
    }

    /// The amount as a JSON number (for reports; the arithmetic never uses floats).
    pub fn to_json(self) -> Value {
        nanos_to_json(u128::from(self.nanos))
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_nanos(u128::from(self.nanos)))
    }
}

/// A nano-dollar amount as a decimal string without trailing zeros, e.g. `0.005`.
fn format_nanos(nanos: u128) -> String {
    let per_usd = u128::from(NANOS_PER_USD);
    let whole = nanos / per_usd;
    let fraction = nanos % per_usd;
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = format!("{fraction:0FRACTION_DIGITS$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// A nano-dollar amount as a JSON number (for reports; the arithmetic never uses floats).
pub(super) fn nanos_to_json(nanos: u128) -> Value {
    format_nanos(nanos)
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn usd(text: &str) -> Usd {
        Usd::parse(text, Rounding::Down).unwrap()
    }

    #[test]
    fn parsing_is_exact() {
        let cases = [
            ("0", 0),
            ("5", 5_000_000_000),
            ("0.25", 250_000_000),
            (".5", 500_000_000),
            ("1.", 1_000_000_000),
            (" 0.00005 ", 50_000),
            ("0.1234567891", 123_456_789),
        ];
        for (text, nanos) in cases {
            assert_eq!(
                Usd::parse(text, Rounding::Down).unwrap().nanos(),
                nanos,
                "{text}"
            );
        }
        assert_eq!(
            Usd::parse("0.1234567891", Rounding::Up).unwrap().nanos(),
            123_456_790
        );
        assert_eq!(
            Usd::parse("0.1234567890", Rounding::Up).unwrap().nanos(),
            123_456_789
        );
        for bad in ["", ".", "-1", "1e3", "abc", "1.2.3", "99999999999999999999"] {
            assert!(Usd::parse(bad, Rounding::Down).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn display_and_json() {
        let cases = [
            ("0", "0"),
            ("0.010", "0.01"),
            ("12.5", "12.5"),
            ("0.000000001", "0.000000001"),
        ];
        for (text, shown) in cases {
            assert_eq!(usd(text).to_string(), shown);
        }
        assert_eq!(usd("0.005").to_json(), json!(0.005));
        let from_number = |v: Value| Usd::from_json(&v, Rounding::Up).unwrap().nanos();
        assert_eq!(from_number(json!(0.005)), 5_000_000);
        assert_eq!(from_number(json!(0.1)), 100_000_000);
        assert_eq!(from_number(json!(3)), 3_000_000_000);
        assert_eq!(from_number(json!("0.002")), 2_000_000);
        assert!(Usd::from_json(&json!(-0.5), Rounding::Up).is_err());
        assert!(Usd::from_json(&json!(true), Rounding::Up).is_err());
    }
}
