//! Command-line entry point: parses arguments, sets up logging, picks the storage backend and
//! maps the run's result to an exit code (0 ok, 1 gate tripped, 2 bad input, 3 runtime failure).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mcp_surface_ledger::actor::{ActorArgs, run_actor};
use mcp_surface_ledger::mcp::Era;
use mcp_surface_ledger::run::{EXIT_BAD_INPUT, EXIT_RUNTIME};

/// Watches remote MCP servers and records every change of their declared surface.
///
/// With no arguments it runs as an Apify Actor: it reads INPUT from the key-value store
/// (`./storage/key_value_stores/default/INPUT.json` locally), probes every server, writes
/// one dataset row per server and per change, and updates the ledger record
/// `key_value_stores/mcp-tool-surface-ledger/<ledger_name>.json`.
///
/// Exit codes: 0 ok, 1 the `fail_on` gate tripped, 2 bad input, 3 runtime failure.
#[derive(Debug, Parser)]
#[command(version, about, long_about)]
struct Cli {
    /// Read INPUT from this JSON file instead of the key-value store (`-` = standard input).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,

    /// Root of the local Apify storage layout [default: $CRAWLEE_STORAGE_DIR,
    /// $APIFY_LOCAL_STORAGE_DIR or ./storage].
    #[arg(long, value_name = "DIR")]
    storage_dir: Option<PathBuf>,

    /// Allow loopback and private-network targets (for self-hosted fleets and tests).
    /// Cloud metadata and reserved addresses stay blocked. Refused on the Apify platform.
    #[arg(long, env = "LEDGER_ALLOW_PRIVATE_TARGETS", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    allow_private_targets: bool,

    /// Speak only this protocol era (`modern` = 2026-07-28 stateless, `classic` = initialize
    /// handshake). For diagnosis and tests; normally the era is detected.
    #[arg(long, value_name = "ERA", hide = true, value_parser = parse_era)]
    force_era: Option<Era>,
}

fn parse_era(text: &str) -> Result<Era, String> {
    match text {
        "modern" => Ok(Era::Modern),
        "classic" => Ok(Era::Classic),
        other => Err(format!("unknown era {other:?}: use modern or classic")),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

fn read_input_override(path: &PathBuf) -> Result<Vec<u8>, String> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read INPUT from standard input: {e}"))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| format!("cannot read INPUT file {}: {e}", path.display()))
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let input_override = match cli.input.as_ref().map(read_input_override).transpose() {
        Ok(bytes) => bytes,
        Err(message) => {
            tracing::error!("{message}");
            return exit(EXIT_BAD_INPUT);
        }
    };
    let args = ActorArgs {
        input_override,
        storage_dir: cli.storage_dir,
        allow_private_targets: cli.allow_private_targets,
        force_era: cli.force_era,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!("cannot start the async runtime: {error}");
            return exit(EXIT_RUNTIME);
        }
    };
    exit(runtime.block_on(run_actor(args)))
}
