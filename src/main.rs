//! Command-line entry point: parses arguments, sets up logging, dispatches to Actor mode (no
//! subcommand) or to the `snapshot` and `diff` commands, and maps the result to an exit code
//! (0 ok, 1 gate tripped, 2 bad input, 3 runtime failure, 4 and 5 for the scheduler's
//! `exit_nonzero_on` conditions).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use mcp_surface_ledger::actor::{ActorArgs, run_actor};
use mcp_surface_ledger::cli::diff::{self, DiffArgs};
use mcp_surface_ledger::cli::history::{self, HistoryArgs};
use mcp_surface_ledger::cli::source::Source;
use mcp_surface_ledger::cli::verify::{self, VerifyArgs};
use mcp_surface_ledger::cli::{Format, ProbeSettings, SecretHeader, snapshot};
use mcp_surface_ledger::gate::{ExitCondition, FailOn};
use mcp_surface_ledger::mcp::Era;
use mcp_surface_ledger::run::{EXIT_BAD_INPUT, EXIT_GATE, EXIT_RUNTIME};
use mcp_surface_ledger::serve::{self, ServeArgs};

/// The process's heap: jemalloc, set up (`.cargo/config.toml`) to give freed pages back to the
/// system at once. With glibc's allocator a run's peak RSS held about a fifth more than its heap
/// (memory freed by one thread kept for it); the platform bills and limits the peak.
#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[global_allocator]
static HEAP: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Watches remote MCP servers and records every change of their declared surface.
///
/// With no subcommand it runs as an Apify Actor: it reads INPUT from the key-value store
/// (`./storage/key_value_stores/default/INPUT.json` locally), probes every server, writes
/// one dataset row per server and per change, the `REPORT` page, and updates the ledger record
/// `key_value_stores/mcp-tool-surface-ledger/<ledger_name>.json`.
///
/// `snapshot URL` prints one server's normalized surface as JSON; `diff BEFORE AFTER` prints
/// the change rows between two snapshots, tools/list files, standard input (`-`) or URLs.
/// `serve` answers questions about the ledger over HTTP (JSON API and an MCP endpoint at
/// `/mcp`), read-only; an Actor started in Standby mode on the platform does the same.
/// `demo-server` runs the small MCP server the README's quick start watches.
///
/// Exit codes: 0 ok, 1 the gate (`fail_on`, `--fail-on`) tripped, 2 bad input, 3 runtime failure,
/// 4 an `exit_nonzero_on` condition on the run's evidence was met, 5 the ledger chain was not
/// intact (`exit_nonzero_on: chain_not_intact`). When several apply: 5, then 3, 4, 1.
#[derive(Debug, Parser)]
#[command(version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Read INPUT from this JSON file instead of the key-value store (`-` = standard input).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,

    /// Root of the local Apify storage layout [default: $CRAWLEE_STORAGE_DIR,
    /// $APIFY_LOCAL_STORAGE_DIR or ./storage].
    #[arg(long, value_name = "DIR")]
    storage_dir: Option<PathBuf>,

    /// Allow loopback and private-network targets (for self-hosted fleets and tests).
    /// Cloud metadata and reserved addresses stay blocked. Refused on the Apify platform.
    /// Accepted before `snapshot` and `diff` too (`--allow-private-targets snapshot URL`);
    /// refused with `serve`, `verify` and `demo-server`, which never probe a server.
    #[arg(long, env = "LEDGER_ALLOW_PRIVATE_TARGETS", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    allow_private_targets: bool,

    /// Exit non-zero when a finished run meets one of these conditions (comma-separated; added
    /// to INPUT's `exit_nonzero_on`): nothing_read, some_unreadable, auth_rejected,
    /// registry_failed (exit code 4) or chain_not_intact (exit code 5, which wins).
    #[arg(long, value_name = "CONDITIONS", value_delimiter = ',')]
    exit_nonzero_on: Vec<ExitCondition>,

    /// Tell these destinations of the changes the run records: a JSON file holding an array
    /// shaped like INPUT's `notify` field, which it replaces. A file keeps webhook URLs and
    /// secrets out of the process list and the shell history.
    #[arg(long, value_name = "FILE")]
    notify: Option<PathBuf>,

    /// Speak only this protocol era (`modern` = 2026-07-28 stateless, `classic` = initialize
    /// handshake). For diagnosis and tests; normally the era is detected.
    #[arg(long, value_name = "ERA", global = true, hide = true, value_parser = parse_era)]
    force_era: Option<Era>,

    /// Build, canonicalize and assess every surface, even when a server's answers are
    /// byte-identical to what the ledger recorded (the unchanged-bytes fast path off). For
    /// benchmarks and diagnosis.
    #[arg(long, hide = true)]
    always_build_surfaces: bool,
}

/// The one-shot commands; without one, the program runs as the Actor.
#[derive(Debug, Subcommand)]
enum Command {
    /// Probe one MCP server and print its normalized snapshot as JSON (server identity,
    /// protocol, transport, tools with hashes, capabilities, risk, findings).
    Snapshot {
        /// The server's MCP endpoint (http or https).
        url: String,
        #[command(flatten)]
        probe: ProbeFlags,
    },
    /// Print the changes between two sides: each a snapshot file, a tools/list result file,
    /// `-` for standard input, or a URL to probe now.
    Diff {
        /// The older side.
        before: String,
        /// The newer side.
        after: String,
        /// Output format: json, table, markdown, html or sarif (SARIF 2.1.0, for
        /// code-scanning tools).
        #[arg(long, value_name = "FORMAT", default_value = "json")]
        format: Format,
        /// Exit with code 1 when a change at or above this level is found: breaking, high,
        /// medium, any or never. The output is printed first.
        #[arg(long, value_name = "LEVEL", default_value = "never")]
        fail_on: FailOn,
        #[command(flatten)]
        probe: ProbeFlags,
    },
    /// Recompute a ledger's hash chain, check its surface records, compare it with the heads
    /// past runs' summary rows witnessed and with the key that signed them; print the verdict
    /// as JSON. Exit 0 intact (or no witness given: the verdict says so), 1 broken (the first
    /// break is named: server, item, what differs), 2 bad input, 3 storage failure, 4 writes
    /// after the newest witnessed one.
    Verify {
        /// Root of the local Apify storage layout [default: $CRAWLEE_STORAGE_DIR,
        /// $APIFY_LOCAL_STORAGE_DIR or ./storage]; on the Apify platform the API is read.
        #[arg(long, value_name = "DIR")]
        storage_dir: Option<PathBuf>,
        /// The ledger (`ledger_name`) to verify [default: DEFAULT, or the store's only ledger
        /// when it has no DEFAULT; with several, they are listed].
        #[arg(long, value_name = "NAME")]
        ledger: Option<String>,
        /// Heads witnessed by past runs: their summary rows exported from the dataset (JSON
        /// array or JSON lines), or `{"seq", "head"}` objects.
        #[arg(long, value_name = "FILE")]
        heads: Option<PathBuf>,
        /// The Ed25519 public key (hex) that must have signed the head [default: the key the
        /// witness rows name].
        #[arg(long, value_name = "KEY")]
        public_key: Option<String>,
        /// Exit 4 when no witness outside the ledger was consulted (no heads file, not on
        /// the platform), instead of 0 with a note.
        #[arg(long)]
        require_witness: bool,
        /// Refused with an explanation: this command never probes a server.
        #[arg(long, hide = true)]
        allow_private_targets: bool,
    },
    /// List a server's remembered changes with their whole before and after values (JSON);
    /// with `--at TIME`, print the surface it served at that time as JSON; with two `--at`,
    /// print the changes between those two surfaces in a `diff` format. Reads only the
    /// ledger store. Exit 0, 2 bad input (no such ledger or server, a time not kept), 3 a
    /// store failure or a kept value that is not the one the ledger names.
    History {
        /// Root of the local Apify storage layout [default: $CRAWLEE_STORAGE_DIR,
        /// $APIFY_LOCAL_STORAGE_DIR or ./storage]; on the Apify platform the API is read.
        #[arg(long, value_name = "DIR")]
        storage_dir: Option<PathBuf>,
        /// The ledger (`ledger_name`) [default: DEFAULT, or the store's only ledger].
        #[arg(long, value_name = "NAME")]
        ledger: Option<String>,
        /// The server's URL, as the ledger lists it.
        #[arg(long, value_name = "URL")]
        server: String,
        /// An RFC 3339 time (e.g. 2026-01-31T12:00:00Z); at most twice.
        #[arg(long, value_name = "TIME", value_parser = parse_time)]
        at: Vec<chrono::DateTime<chrono::Utc>>,
        /// Output format of a comparison of two times: json, table, markdown, html or sarif.
        #[arg(long, value_name = "FORMAT", default_value = "json")]
        format: Format,
        /// Refused with an explanation: this command never probes a server.
        #[arg(long, hide = true)]
        allow_private_targets: bool,
    },
    /// Serve the ledger read-only over HTTP: pages for a browser (`GET /`), an Atom feed of
    /// changes (`/changes.atom`), a JSON API (`GET /ledgers`, `GET /ledgers/{name}/servers`,
    /// ..., `POST /diff`) and an MCP endpoint at `/mcp`. Never probes a server.
    Serve {
        /// Port to listen on [default: $ACTOR_WEB_SERVER_PORT, $ACTOR_STANDBY_PORT, else 4321]; 0 picks a free port.
        #[arg(long, value_name = "N")]
        port: Option<u16>,
        /// Address to listen on [default: 127.0.0.1; 0.0.0.0 on the Apify platform].
        #[arg(long, value_name = "ADDR")]
        host: Option<std::net::IpAddr>,
        /// Root of the local Apify storage layout [default: $CRAWLEE_STORAGE_DIR,
        /// $APIFY_LOCAL_STORAGE_DIR or ./storage].
        #[arg(long, value_name = "DIR")]
        storage_dir: Option<PathBuf>,
        /// Also answer requests whose `Host` (or `Origin`) is this name, e.g. a reverse
        /// proxy's; loopback names and IP addresses are always answered. Repeatable or
        /// comma-separated.
        #[arg(
            long = "allow-host",
            value_name = "NAME",
            env = "LEDGER_ALLOWED_HOSTS",
            value_delimiter = ','
        )]
        allowed_hosts: Vec<String>,
        /// Refused with an explanation: this command never probes a server.
        #[arg(long, hide = true)]
        allow_private_targets: bool,
    },
    /// Run a small demo MCP server on this machine (a notes server, Streamable HTTP at the
    /// URL's path) for the README's quick start; `--change` switches a running one to its
    /// other release (a tool added, a parameter made required, a new version).
    DemoServer {
        /// Its endpoint: an http:// URL on 127.0.0.1, [::1] or localhost, with a port.
        #[arg(value_name = "URL", default_value = mcp_surface_ledger::demo::DEFAULT_URL)]
        url: String,
        /// Start it in the background and return once it accepts connections.
        #[arg(long, conflicts_with_all = ["change", "stop"])]
        background: bool,
        /// Tell the demo server running at URL to switch to its other release.
        #[arg(long, conflicts_with = "stop")]
        change: bool,
        /// Tell the demo server running at URL to stop.
        #[arg(long)]
        stop: bool,
        /// Refused with an explanation: this command never probes a server.
        #[arg(long, hide = true)]
        allow_private_targets: bool,
    },
}

/// How `snapshot` and `diff` may reach the servers they probe.
#[derive(Debug, clap::Args)]
struct ProbeFlags {
    /// Allow loopback and private-network targets (for self-hosted servers and tests).
    /// Cloud metadata and reserved addresses stay blocked.
    #[arg(long, env = "LEDGER_ALLOW_PRIVATE_TARGETS", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    allow_private_targets: bool,

    /// A secret header for the server's own origin, e.g. 'Authorization: Bearer …': sent to
    /// that exact origin only (never across a redirect to another one), never printed. Prefer
    /// --header-file or $LEDGER_HEADER, which keep the value out of shell history.
    #[arg(
        long,
        value_name = "'NAME: VALUE'",
        env = "LEDGER_HEADER",
        hide_env_values = true
    )]
    header: Option<String>,

    /// Read the secret header (one 'Name: value' line) from this file; it wins over --header.
    #[arg(long, value_name = "FILE")]
    header_file: Option<PathBuf>,
}

impl ProbeFlags {
    /// The settings these flags and the ones given before the subcommand make.
    fn settings(&self, before_subcommand: &Cli) -> Result<ProbeSettings, String> {
        let header = match (&self.header_file, &self.header) {
            (Some(path), _) => Some(SecretHeader::from_file(path)),
            (None, Some(text)) => Some(SecretHeader::parse(text)),
            (None, None) => None,
        }
        .transpose()
        .map_err(|e| e.to_string())?;
        Ok(ProbeSettings {
            allow_private_targets: self.allow_private_targets
                || before_subcommand.allow_private_targets,
            force_era: before_subcommand.force_era,
            header,
        })
    }
}

/// The name a subcommand is typed with.
fn subcommand_name(command: &Command) -> &'static str {
    match command {
        Command::Snapshot { .. } => "snapshot",
        Command::Diff { .. } => "diff",
        Command::Verify { .. } => "verify",
        Command::History { .. } => "history",
        Command::Serve { .. } => "serve",
        Command::DemoServer { .. } => "demo-server",
    }
}

fn parse_era(text: &str) -> Result<Era, String> {
    match text {
        "modern" => Ok(Era::Modern),
        "classic" => Ok(Era::Classic),
        "legacy_sse" => Ok(Era::LegacySse),
        other => Err(format!(
            "unknown era {other:?}: use modern, classic or legacy_sse"
        )),
    }
}

/// The log filter when `RUST_LOG` is not set: this program's messages at info, the MCP
/// library's (one line per call `serve` answers) only from warn up.
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
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

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            tracing::error!("cannot start the async runtime: {error}");
            exit(EXIT_RUNTIME)
        })
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    init_logging();
    let private_flag_given =
        matches.value_source("allow_private_targets") == Some(ValueSource::CommandLine);
    // The flag is refused the same way before and after the subcommand's name.
    let (never_probes, flag_after) = match &cli.command {
        Some(Command::Serve {
            allow_private_targets,
            ..
        }) => (Some("serve"), *allow_private_targets),
        Some(Command::Verify {
            allow_private_targets,
            ..
        }) => (Some("verify"), *allow_private_targets),
        Some(Command::History {
            allow_private_targets,
            ..
        }) => (Some("history"), *allow_private_targets),
        Some(Command::DemoServer {
            allow_private_targets,
            ..
        }) => (Some("demo-server"), *allow_private_targets),
        _ => (None, false),
    };
    if let (true, Some(name)) = (private_flag_given || flag_after, never_probes) {
        tracing::error!(
            "--allow-private-targets is for the commands that probe servers (no subcommand, \
             snapshot, diff); {name} never probes one: leave the flag out"
        );
        return exit(EXIT_BAD_INPUT);
    }
    let actor_settings = ProbeSettings {
        allow_private_targets: cli.allow_private_targets,
        force_era: cli.force_era,
        header: None,
    };
    let command = match &cli.command {
        Some(Command::Serve { .. } | Command::Verify { .. } | Command::History { .. }) | None => {
            None
        }
        Some(subcommand) => {
            let given: Vec<&str> = [
                ("--input", cli.input.is_some()),
                ("--storage-dir", cli.storage_dir.is_some()),
                ("--exit-nonzero-on", !cli.exit_nonzero_on.is_empty()),
                ("--notify", cli.notify.is_some()),
            ]
            .into_iter()
            .filter_map(|(flag, given)| given.then_some(flag))
            .collect();
            if !given.is_empty() {
                let name = subcommand_name(subcommand);
                let (flags, belongs) = match given.as_slice() {
                    [one] => (one.to_string(), "belongs"),
                    [rest @ .., last] => (format!("{} and {last}", rest.join(", ")), "belong"),
                    [] => (String::new(), "belongs"),
                };
                tracing::error!(
                    "{flags} {belongs} to Actor mode (a watch run, no subcommand), not to \
                     `{name}`: leave {} out, or run the watch without `{name}`",
                    if given.len() == 1 { "it" } else { "them" }
                );
                return exit(EXIT_BAD_INPUT);
            }
            Some(subcommand)
        }
    };
    let probe_settings = |flags: &ProbeFlags| match flags.settings(&cli) {
        Ok(settings) => Ok(settings),
        Err(message) => {
            tracing::error!("{message}");
            Err(exit(EXIT_BAD_INPUT))
        }
    };
    match command {
        Some(Command::Snapshot { url, probe }) => match probe_settings(probe) {
            Ok(settings) => snapshot_command(url, settings),
            Err(code) => code,
        },
        Some(Command::Diff {
            before,
            after,
            format,
            fail_on,
            probe,
        }) => match probe_settings(probe) {
            Ok(settings) => diff_command(DiffArgs {
                before: Source::parse(before),
                after: Source::parse(after),
                format: *format,
                fail_on: *fail_on,
                settings,
            }),
            Err(code) => code,
        },
        _ => match cli.command {
            Some(Command::Serve {
                port,
                host,
                storage_dir,
                allowed_hosts,
                ..
            }) => serve_command(ServeArgs {
                port,
                host,
                // `--storage-dir` works before `serve` as it does for Actor mode.
                storage_dir: storage_dir.or(cli.storage_dir),
                allowed_hosts,
            }),
            Some(Command::History {
                storage_dir,
                ledger,
                server,
                at,
                format,
                ..
            }) => history_command(HistoryArgs {
                storage_dir: storage_dir.or(cli.storage_dir),
                ledger,
                server,
                at,
                format,
            }),
            Some(Command::Verify {
                storage_dir,
                ledger,
                heads,
                public_key,
                require_witness,
                ..
            }) => verify_command(VerifyArgs {
                storage_dir: storage_dir.or(cli.storage_dir),
                ledger,
                heads,
                public_key,
                require_witness,
            }),
            Some(Command::DemoServer {
                url,
                background,
                change,
                stop,
                ..
            }) => demo_command(
                &url,
                match (background, change, stop) {
                    (true, _, _) => mcp_surface_ledger::demo::DemoAction::Background,
                    (_, true, _) => mcp_surface_ledger::demo::DemoAction::Change,
                    (_, _, true) => mcp_surface_ledger::demo::DemoAction::Stop,
                    _ => mcp_surface_ledger::demo::DemoAction::Serve,
                },
            ),
            _ if serve::is_standby_start(|name| std::env::var(name).ok()) => {
                serve_command(ServeArgs {
                    storage_dir: cli.storage_dir,
                    allowed_hosts: allowed_hosts_from_env(),
                    ..ServeArgs::default()
                })
            }
            _ => actor_mode(
                cli.input,
                cli.storage_dir,
                actor_settings,
                cli.exit_nonzero_on,
                cli.notify,
                cli.always_build_surfaces,
            ),
        },
    }
}

/// The operator's extra host names for Standby mode, which has no command line of its own.
fn allowed_hosts_from_env() -> Vec<String> {
    std::env::var(serve::hosts::ALLOWED_HOSTS_ENV)
        .map(|names| names.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

fn actor_mode(
    input: Option<PathBuf>,
    storage_dir: Option<PathBuf>,
    settings: ProbeSettings,
    exit_nonzero_on: Vec<ExitCondition>,
    notify: Option<PathBuf>,
    always_build_surfaces: bool,
) -> ExitCode {
    let input_override = match input.as_ref().map(read_input_override).transpose() {
        Ok(bytes) => bytes,
        Err(message) => {
            tracing::error!("{message}");
            return exit(EXIT_BAD_INPUT);
        }
    };
    let notify = match notify
        .as_deref()
        .map(mcp_surface_ledger::notify::read_file)
        .transpose()
    {
        Ok(destinations) => destinations,
        Err(message) => {
            tracing::error!("{message}");
            return exit(EXIT_BAD_INPUT);
        }
    };
    let input_file = input.as_ref().map(|path| {
        if path.as_os_str() == "-" {
            "standard input".to_string()
        } else {
            path.display().to_string()
        }
    });
    let args = ActorArgs {
        input_override,
        input_file,
        storage_dir,
        allow_private_targets: settings.allow_private_targets,
        force_era: settings.force_era,
        exit_nonzero_on,
        notify,
        always_build_surfaces,
    };
    match runtime() {
        Ok(runtime) => exit(runtime.block_on(run_actor(args))),
        Err(code) => code,
    }
}

fn serve_command(args: ServeArgs) -> ExitCode {
    match runtime() {
        Ok(runtime) => exit(runtime.block_on(serve::run(args))),
        Err(code) => code,
    }
}

fn demo_command(url: &str, action: mcp_surface_ledger::demo::DemoAction) -> ExitCode {
    match runtime() {
        Ok(runtime) => match runtime.block_on(mcp_surface_ledger::demo::run(url, action)) {
            Ok(()) => exit(0),
            Err(error) => {
                tracing::error!("{error}");
                exit(error.exit_code())
            }
        },
        Err(code) => code,
    }
}

fn snapshot_command(url: &str, settings: ProbeSettings) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    match runtime.block_on(snapshot::run(url, &settings, &mut stdout)) {
        Ok(()) => exit(0),
        Err(error) => {
            tracing::error!("{error}");
            exit(error.exit_code())
        }
    }
}

fn verify_command(args: VerifyArgs) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    match runtime.block_on(verify::run(&args, &mut stdout)) {
        Ok(verdict) => {
            let code = verdict.exit_code(args.require_witness);
            match verdict.status {
                verify::Status::Broken => {
                    tracing::error!("the ledger's chain is broken: see \"break\" in the output")
                }
                verify::Status::Unwitnessed => tracing::error!(
                    "writes after the newest witnessed one: see \"unwitnessed\" in the output"
                ),
                verify::Status::SelfConsistent => tracing::warn!(
                    "no outside witness was consulted: the ledger only agrees with itself"
                ),
                verify::Status::Intact => {}
            }
            exit(i32::from(code))
        }
        Err(error) => {
            tracing::error!("{error}");
            exit(error.exit_code())
        }
    }
}

fn history_command(args: HistoryArgs) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    match runtime.block_on(history::run(&args, &mut stdout)) {
        Ok(()) => exit(0),
        Err(error) => {
            tracing::error!("{error}");
            exit(error.exit_code())
        }
    }
}

/// Reads an RFC 3339 time (`--at`).
fn parse_time(text: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&chrono::Utc))
        .map_err(|e| format!("not an RFC 3339 time such as 2026-01-31T12:00:00Z: {e}"))
}

fn diff_command(args: DiffArgs) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    match runtime.block_on(diff::run(&args, &mut stdout)) {
        Ok(true) => {
            tracing::warn!("the --fail-on gate tripped: exit code {EXIT_GATE}");
            exit(EXIT_GATE)
        }
        Ok(false) => exit(0),
        Err(error) => {
            tracing::error!("{error}");
            exit(error.exit_code())
        }
    }
}
