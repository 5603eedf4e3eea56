//! Query values shared by the HTTP API, the pages and the MCP tools.

use chrono::{DateTime, Utc};

use super::error::ServeError;

/// Parses `since` as RFC 3339. A `+` offset decoded from the query as a space is accepted.
pub fn parse_since(text: &str) -> Result<DateTime<Utc>, ServeError> {
    DateTime::parse_from_rfc3339(text)
        .or_else(|e| DateTime::parse_from_rfc3339(&text.replace(' ', "+")).map_err(|_| e))
        .map(|time| time.with_timezone(&Utc))
        .map_err(|e| {
            ServeError::BadRequest(format!(
                "since {text:?} is not an RFC 3339 time such as 2026-01-31T12:00:00Z: {e}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_rfc3339_and_refuses_the_rest() {
        let utc = parse_since("2026-01-31T12:00:00Z").unwrap();
        assert_eq!(parse_since("2026-01-31T13:00:00+01:00").unwrap(), utc);
        assert_eq!(parse_since("2026-01-31T13:00:00 01:00").unwrap(), utc);
        for bad in ["yesterday", "2026-01-31", ""] {
            assert_eq!(parse_since(bad).unwrap_err().code(), "bad_request", "{bad}");
        }
    }
}
