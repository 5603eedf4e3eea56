//! `diff BEFORE AFTER`: loads both sides (files, standard input or URLs probed now), prints
//! their [`Comparison`] in the chosen format, and reports whether the `--fail-on` gate tripped.

use std::io::Write;

use chrono::Utc;

use super::comparison::compare;
use super::format::{self, Format};
use super::source::{self, Source};
use super::{CliError, ProbeSettings};
use crate::gate::FailOn;

/// What the operator asked `diff` for.
#[derive(Debug, Clone)]
pub struct DiffArgs {
    /// The older side.
    pub before: Source,
    /// The newer side.
    pub after: Source,
    /// How to print the result.
    pub format: Format,
    /// The lowest change level that makes the command exit with code 1.
    pub fail_on: FailOn,
    /// How URL sides may be reached.
    pub settings: ProbeSettings,
}

/// `diff BEFORE AFTER`: loads both sides, prints the comparison to `out` and returns whether
/// the gate tripped. Output is written before the gate decides the exit code.
pub async fn run(args: &DiffArgs, out: &mut dyn Write) -> Result<bool, CliError> {
    if args.settings.header.is_some() {
        one_header_origin(&args.before, &args.after)?;
    }
    let before = source::load(&args.before, &args.settings).await?;
    let after = source::load(&args.after, &args.settings).await?;
    let comparison = compare(&before, &after, args.fail_on, Utc::now());
    let text = format::render(args.format, &comparison)?;
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Runtime(format!("cannot write the output: {e}")))?;
    Ok(comparison.gate_tripped)
}

/// A `--header` belongs to one origin: when both sides are URLs, they must share it, or the
/// secret would go to two servers.
fn one_header_origin(before: &Source, after: &Source) -> Result<(), CliError> {
    let origin = |source: &Source| match source {
        Source::Url(text) => url::Url::parse(text.trim())
            .ok()
            .map(|url| url.origin().ascii_serialization()),
        _ => None,
    };
    match (origin(before), origin(after)) {
        (Some(a), Some(b)) if a != b => Err(CliError::BadInput(format!(
            "--header is sent to one origin only, but the two URLs have different origins \
             ({a} and {b}); snapshot each server on its own"
        ))),
        _ => Ok(()),
    }
}
