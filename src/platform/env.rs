//! Where the Actor runs and what the platform told it, read once from the environment.
//!
//! `APIFY_IS_AT_HOME` decides between the Apify platform and a local run. Every value is read
//! from its `ACTOR_*` name first and from the legacy `APIFY_*` name second, as the SDKs do. An
//! empty variable counts as unset. Reading is a pure function of a lookup closure, so tests never
//! touch the process environment.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::MAX_PUSH_BYTES;
use super::secrets::{InputSecrets, KEY_FILE_VAR, PASSPHRASE_VAR};
use super::usd::{Rounding, Usd};

/// The public API, used when `APIFY_API_BASE_URL` is not set.
pub const DEFAULT_API_BASE_URL: &str = "https://api.apify.com";

/// The default first delay between retries of a platform API call (the official clients' value).
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);

/// What the platform (or `apify run`) told this process through its environment.
#[derive(Clone)]
pub struct PlatformEnv {
    /// True on Apify servers (`APIFY_IS_AT_HOME`); selects the REST storage and real charging.
    pub is_at_home: bool,
    /// API token of the user who started the run. Never printed.
    pub token: Option<String>,
    /// API root including `/v2`, from `APIFY_API_BASE_URL` (operator configuration, may be internal).
    pub api_base_url: Url,
    /// The run's id, needed for charges and status messages.
    pub actor_run_id: Option<String>,
    /// The Actor's id: a sharded watch starts its shards as runs of this Actor.
    pub actor_id: Option<String>,
    /// The build this run uses; shard runs are started on the same build.
    pub actor_build_number: Option<String>,
    /// Id of the run's default key-value store (INPUT, OUTPUT).
    pub default_kv_store_id: Option<String>,
    /// Id of the run's default dataset (the result rows).
    pub default_dataset_id: Option<String>,
    /// Key of the input record in the default store, `INPUT` unless told otherwise.
    pub input_key: String,
    /// Root of the local storage layout, used when not at home.
    pub local_storage_dir: PathBuf,
    /// The user's maximum total charge for this run; `None` means unlimited.
    pub max_total_charge_usd: Option<Usd>,
    /// `ACTOR_TEST_PAY_PER_EVENT`: act as a pay-per-event Actor in a local run.
    pub test_pay_per_event: bool,
    /// Raw JSON of `APIFY_ACTOR_PRICING_INFO`, parsed by the charging manager.
    pub pricing_info: Option<String>,
    /// Raw JSON of `APIFY_CHARGED_ACTOR_EVENT_COUNTS`, parsed by the charging manager.
    pub charged_event_counts: Option<String>,
    /// When the platform will stop the run (`ACTOR_TIMEOUT_AT`), if it has a timeout.
    pub timeout_at: Option<chrono::DateTime<chrono::Utc>>,
    /// First delay between retries of a platform API call (`LEDGER_API_RETRY_BASE_MS`).
    pub api_retry_base_delay: Duration,
    /// Largest body of one dataset push (`LEDGER_API_MAX_PUSH_BYTES`); only ever lowers the
    /// platform's limit, so that tests can see chunking without 9 MiB of rows.
    pub max_push_bytes: usize,
    /// The private key (and its passphrase) that decrypts secret input fields, from
    /// `APIFY_INPUT_SECRETS_PRIVATE_KEY_FILE` and `..._PASSPHRASE`. Never printed.
    pub input_secrets: InputSecrets,
}

impl fmt::Debug for PlatformEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlatformEnv")
            .field("is_at_home", &self.is_at_home)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("api_base_url", &self.api_base_url.as_str())
            .field("actor_run_id", &self.actor_run_id)
            .field("default_kv_store_id", &self.default_kv_store_id)
            .field("default_dataset_id", &self.default_dataset_id)
            .field("input_key", &self.input_key)
            .field("local_storage_dir", &self.local_storage_dir)
            .field("max_total_charge_usd", &self.max_total_charge_usd)
            .field("test_pay_per_event", &self.test_pay_per_event)
            .field("pricing_info", &self.pricing_info.is_some())
            .field("charged_event_counts", &self.charged_event_counts.is_some())
            .field("timeout_at", &self.timeout_at)
            .field("api_retry_base_delay", &self.api_retry_base_delay)
            .field("max_push_bytes", &self.max_push_bytes)
            .field("input_secrets", &self.input_secrets)
            .finish()
    }
}

/// An environment the Actor cannot run with. The message names the variable.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// A variable is set to something that cannot be understood.
    #[error("environment variable {name} has an invalid value {value:?}: {reason}")]
    Invalid {
        /// The variable's name.
        name: &'static str,
        /// The value as found.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A variable the platform always sets is missing although `APIFY_IS_AT_HOME` is set.
    #[error("running on the Apify platform but {0} is not set")]
    MissingOnPlatform(&'static str),
    /// `ACTOR_TEST_PAY_PER_EVENT` is a local testing switch and is refused on the platform.
    #[error("ACTOR_TEST_PAY_PER_EVENT is only allowed in local runs")]
    TestPayPerEventOnPlatform,
}

impl PlatformEnv {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads the environment through `lookup`, which returns a variable's value if it is set.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let var = |names: &[&str]| first_set(&lookup, names);

        let is_at_home = var(&["APIFY_IS_AT_HOME"]).is_some_and(|v| is_truthy(&v));
        let test_pay_per_event = var(&["ACTOR_TEST_PAY_PER_EVENT"]).is_some_and(|v| is_truthy(&v));
        let env = PlatformEnv {
            is_at_home,
            token: var(&["APIFY_TOKEN"]),
            api_base_url: api_base_url(var(&["APIFY_API_BASE_URL"]))?,
            actor_run_id: var(&["ACTOR_RUN_ID", "APIFY_ACTOR_RUN_ID", "APIFY_ACT_RUN_ID"]),
            actor_id: var(&["ACTOR_ID", "APIFY_ACTOR_ID", "APIFY_ACT_ID"]),
            actor_build_number: var(&["ACTOR_BUILD_NUMBER", "APIFY_ACTOR_BUILD_NUMBER"]),
            default_kv_store_id: var(&[
                "ACTOR_DEFAULT_KEY_VALUE_STORE_ID",
                "APIFY_DEFAULT_KEY_VALUE_STORE_ID",
            ]),
            default_dataset_id: var(&["ACTOR_DEFAULT_DATASET_ID", "APIFY_DEFAULT_DATASET_ID"]),
            input_key: var(&["ACTOR_INPUT_KEY", "APIFY_INPUT_KEY", "CRAWLEE_INPUT_KEY"])
                .unwrap_or_else(|| "INPUT".to_string()),
            local_storage_dir: var(&["CRAWLEE_STORAGE_DIR", "APIFY_LOCAL_STORAGE_DIR"])
                .map_or_else(|| PathBuf::from("./storage"), PathBuf::from),
            max_total_charge_usd: max_total_charge(var(&["ACTOR_MAX_TOTAL_CHARGE_USD"]))?,
            test_pay_per_event,
            pricing_info: var(&["APIFY_ACTOR_PRICING_INFO"]),
            charged_event_counts: var(&["APIFY_CHARGED_ACTOR_EVENT_COUNTS"]),
            timeout_at: timeout_at(var(&["ACTOR_TIMEOUT_AT", "APIFY_TIMEOUT_AT"]))?,
            api_retry_base_delay: retry_base_delay(var(&["LEDGER_API_RETRY_BASE_MS"]))?,
            max_push_bytes: max_push_bytes(var(&["LEDGER_API_MAX_PUSH_BYTES"]))?,
            input_secrets: InputSecrets::new(
                var(&[KEY_FILE_VAR]),
                // The passphrase is taken as it is: spaces may belong to it.
                lookup(PASSPHRASE_VAR).filter(|value| !value.is_empty()),
            ),
        };
        env.check_platform()?;
        Ok(env)
    }

    /// On the platform, the variables every run gets must be present.
    fn check_platform(&self) -> Result<(), EnvError> {
        if !self.is_at_home {
            return Ok(());
        }
        if self.test_pay_per_event {
            return Err(EnvError::TestPayPerEventOnPlatform);
        }
        let required = [
            ("APIFY_TOKEN", &self.token),
            ("ACTOR_RUN_ID", &self.actor_run_id),
            (
                "ACTOR_DEFAULT_KEY_VALUE_STORE_ID",
                &self.default_kv_store_id,
            ),
            ("ACTOR_DEFAULT_DATASET_ID", &self.default_dataset_id),
        ];
        match required.into_iter().find(|(_, value)| value.is_none()) {
            Some((name, _)) => Err(EnvError::MissingOnPlatform(name)),
            None => Ok(()),
        }
    }
}

/// The first of `names` that is set to a non-blank value.
fn first_set(lookup: &impl Fn(&str) -> Option<String>, names: &[&str]) -> Option<String> {
    names
        .iter()
        .filter_map(|name| lookup(name))
        .map(|value| value.trim().to_string())
        .find(|value| !value.is_empty())
}

/// Boolean variables: anything but `0`, `false` and empty is true (the SDKs' rule).
fn is_truthy(value: &str) -> bool {
    !matches!(value.to_ascii_lowercase().as_str(), "" | "0" | "false")
}

fn api_base_url(value: Option<String>) -> Result<Url, EnvError> {
    let raw = value.unwrap_or_else(|| DEFAULT_API_BASE_URL.to_string());
    let invalid = |reason: String| EnvError::Invalid {
        name: "APIFY_API_BASE_URL",
        value: raw.clone(),
        reason,
    };
    let mut url = Url::parse(&raw).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https".to_string()));
    }
    url.path_segments_mut()
        .map_err(|()| invalid("not a base URL".to_string()))?
        .pop_if_empty()
        .push("v2");
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

fn max_total_charge(value: Option<String>) -> Result<Option<Usd>, EnvError> {
    value
        .map(|raw| {
            Usd::parse(&raw, Rounding::Down).map_err(|reason| EnvError::Invalid {
                name: "ACTOR_MAX_TOTAL_CHARGE_USD",
                value: raw.clone(),
                reason,
            })
        })
        .transpose()
}

fn timeout_at(value: Option<String>) -> Result<Option<chrono::DateTime<chrono::Utc>>, EnvError> {
    value
        .map(|raw| {
            chrono::DateTime::parse_from_rfc3339(&raw)
                .map(|at| at.with_timezone(&chrono::Utc))
                .map_err(|e| EnvError::Invalid {
                    name: "ACTOR_TIMEOUT_AT",
                    value: raw.clone(),
                    reason: e.to_string(),
                })
        })
        .transpose()
}

fn retry_base_delay(value: Option<String>) -> Result<Duration, EnvError> {
    match value {
        None => Ok(DEFAULT_RETRY_BASE_DELAY),
        Some(raw) => raw
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|e| EnvError::Invalid {
                name: "LEDGER_API_RETRY_BASE_MS",
                value: raw.clone(),
                reason: e.to_string(),
            }),
    }
}

/// The push limit: at most the platform's, at least enough for a small row.
fn max_push_bytes(value: Option<String>) -> Result<usize, EnvError> {
    const SMALLEST: usize = 1_024;
    let Some(raw) = value else {
        return Ok(MAX_PUSH_BYTES);
    };
    let invalid = |reason: String| EnvError::Invalid {
        name: "LEDGER_API_MAX_PUSH_BYTES",
        value: raw.clone(),
        reason,
    };
    let bytes = raw.parse::<usize>().map_err(|e| invalid(e.to_string()))?;
    if !(SMALLEST..=MAX_PUSH_BYTES).contains(&bytes) {
        return Err(invalid(format!(
            "must be between {SMALLEST} and {MAX_PUSH_BYTES}"
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<PlatformEnv, EnvError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        PlatformEnv::from_vars(|name| map.get(name).cloned())
    }

    const PLATFORM: &[(&str, &str)] = &[
        ("APIFY_IS_AT_HOME", "1"),
        ("APIFY_TOKEN", "secret-token"),
        ("ACTOR_RUN_ID", "run1"),
        ("ACTOR_DEFAULT_KEY_VALUE_STORE_ID", "kv1"),
        ("ACTOR_DEFAULT_DATASET_ID", "ds1"),
    ];

    #[test]
    fn local_defaults() {
        let env = read(&[]).unwrap();
        assert!(!env.is_at_home);
        assert_eq!(env.api_base_url.as_str(), "https://api.apify.com/v2");
        assert_eq!(env.input_key, "INPUT");
        assert_eq!(env.local_storage_dir, PathBuf::from("./storage"));
        assert_eq!(env.max_total_charge_usd, None);
        assert_eq!(env.api_retry_base_delay, DEFAULT_RETRY_BASE_DELAY);
        assert!(env.token.is_none() && env.actor_run_id.is_none());
    }

    #[test]
    fn at_home_values() {
        let cases = [
            ("1", true),
            ("true", true),
            ("yes", true),
            ("0", false),
            ("false", false),
            ("FALSE", false),
            ("", false),
        ];
        for (value, expected) in cases {
            let mut vars = PLATFORM.to_vec();
            vars[0] = ("APIFY_IS_AT_HOME", value);
            assert_eq!(read(&vars).unwrap().is_at_home, expected, "{value:?}");
        }
    }

    #[test]
    fn actor_names_win_over_legacy_names() {
        let env = read(&[
            ("ACTOR_RUN_ID", "new"),
            ("APIFY_ACTOR_RUN_ID", "old"),
            ("APIFY_DEFAULT_DATASET_ID", "legacy-ds"),
            ("ACTOR_DEFAULT_KEY_VALUE_STORE_ID", ""),
            ("APIFY_DEFAULT_KEY_VALUE_STORE_ID", "legacy-kv"),
            ("APIFY_INPUT_KEY", "MY_INPUT"),
            ("APIFY_LOCAL_STORAGE_DIR", "/tmp/a"),
            ("CRAWLEE_STORAGE_DIR", "/tmp/b"),
        ])
        .unwrap();
        assert_eq!(env.actor_run_id.as_deref(), Some("new"));
        assert_eq!(env.default_dataset_id.as_deref(), Some("legacy-ds"));
        assert_eq!(env.default_kv_store_id.as_deref(), Some("legacy-kv"));
        assert_eq!(env.input_key, "MY_INPUT");
        assert_eq!(env.local_storage_dir, PathBuf::from("/tmp/b"));
    }

    #[test]
    fn api_base_url_gets_v2() {
        let cases = [
            ("http://10.0.0.5:8010", "http://10.0.0.5:8010/v2"),
            ("https://api.apify.com/", "https://api.apify.com/v2"),
            ("http://host/prefix/", "http://host/prefix/v2"),
        ];
        for (raw, expected) in cases {
            let env = read(&[("APIFY_API_BASE_URL", raw)]).unwrap();
            assert_eq!(env.api_base_url.as_str(), expected);
        }
        assert!(read(&[("APIFY_API_BASE_URL", "ftp://x")]).is_err());
        assert!(read(&[("APIFY_API_BASE_URL", "not a url")]).is_err());
    }

    #[test]
    fn max_total_charge_parsing() {
        let cases = [
            ("", None),
            ("0", Some("0")),
            ("5", Some("5")),
            ("0.25", Some("0.25")),
        ];
        for (raw, expected) in cases {
            let env = read(&[("ACTOR_MAX_TOTAL_CHARGE_USD", raw)]).unwrap();
            assert_eq!(
                env.max_total_charge_usd
                    .map(|usd| usd.to_string())
                    .as_deref(),
                expected,
                "{raw:?}"
            );
        }
        let err = read(&[("ACTOR_MAX_TOTAL_CHARGE_USD", "-1")]).unwrap_err();
        assert!(err.to_string().contains("ACTOR_MAX_TOTAL_CHARGE_USD"));
    }

    #[test]
    fn platform_requires_its_variables() {
        assert!(read(PLATFORM).is_ok());
        for (missing, _) in &PLATFORM[1..] {
            let vars: Vec<_> = PLATFORM
                .iter()
                .filter(|(name, _)| name != missing)
                .copied()
                .collect();
            let err = read(&vars).unwrap_err();
            assert!(
                err.to_string().contains(missing),
                "{err} should name {missing}"
            );
        }
        let mut vars = PLATFORM.to_vec();
        vars.push(("ACTOR_TEST_PAY_PER_EVENT", "1"));
        assert!(matches!(
            read(&vars),
            Err(EnvError::TestPayPerEventOnPlatform)
        ));
    }

    #[test]
    fn debug_never_shows_the_token() {
        let mut vars = PLATFORM.to_vec();
        vars.push(("APIFY_INPUT_SECRETS_PRIVATE_KEY_FILE", "a2V5LW1hdGVyaWFs"));
        vars.push((
            "APIFY_INPUT_SECRETS_PRIVATE_KEY_PASSPHRASE",
            "pass-phrase-42",
        ));
        let env = read(&vars).unwrap();
        let printed = format!("{env:?}");
        assert!(!printed.contains("secret-token"));
        assert!(!printed.contains("a2V5LW1hdGVyaWFs") && !printed.contains("pass-phrase-42"));
        assert!(printed.contains("<redacted>"));
    }

    #[test]
    fn timeout_and_retry_delay() {
        let env = read(&[
            ("ACTOR_TIMEOUT_AT", "2022-07-13T14:23:37.281Z"),
            ("LEDGER_API_RETRY_BASE_MS", "5"),
        ])
        .unwrap();
        assert_eq!(
            env.timeout_at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2022-07-13T14:23:37.281+00:00")
        );
        assert_eq!(env.api_retry_base_delay, Duration::from_millis(5));
        assert!(read(&[("ACTOR_TIMEOUT_AT", "soon")]).is_err());
    }

    #[test]
    fn push_limit_only_goes_down() {
        assert_eq!(read(&[]).unwrap().max_push_bytes, MAX_PUSH_BYTES);
        let env = read(&[("LEDGER_API_MAX_PUSH_BYTES", "65536")]).unwrap();
        assert_eq!(env.max_push_bytes, 65_536);
        for bad in ["10", "99999999999", "lots"] {
            let err = read(&[("LEDGER_API_MAX_PUSH_BYTES", bad)]).unwrap_err();
            assert!(
                err.to_string().contains("LEDGER_API_MAX_PUSH_BYTES"),
                "{bad}"
            );
        }
    }
}
