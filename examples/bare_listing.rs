//! The floor of the whole-run benchmark (`bench/run.sh`): a bare `rmcp` client that only lists
//! the tools of every server of a fleet, with nothing else a run does (no digests, no ledger,
//! no risk scan, no rows). The Actor's CPU per server is measured against this in the same
//! bench run (issue 39): what the Actor spends above it is its own to remove.
//!
//! ```text
//! cargo run --release --example bare_listing -- URLS_FILE [--concurrency 20]
//! ```
//! `URLS_FILE` holds one server URL a line. Each server is read with the official Rust SDK's
//! Streamable HTTP client: `initialize`, `notifications/initialized`, then `tools/list` page by
//! page. At most `--concurrency` servers are in flight. Prints one JSON line: servers read,
//! failures and tools seen. Exit status 1 when any server failed.

use futures::StreamExt;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

/// Lists the tools of one server and returns how many there are.
async fn list_tools(url: String) -> Result<usize, String> {
    let transport = StreamableHttpClientTransport::from_uri(url.clone());
    let client = ().serve(transport).await.map_err(|e| format!("{url}: connect: {e}"))?;
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("{url}: tools/list: {e}"))?;
    let _ = client.cancel().await;
    Ok(tools.len())
}

fn usage() -> ! {
    eprintln!("usage: bare_listing URLS_FILE [--concurrency N]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut concurrency = 20usize;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--concurrency" => {
                concurrency = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| usage())
            }
            _ if file.is_none() => file = Some(arg),
            _ => usage(),
        }
    }
    let Some(file) = file else { usage() };
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        eprintln!("bare_listing: cannot read {file}: {e}");
        std::process::exit(2)
    });
    let urls: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    let outcomes: Vec<Result<usize, String>> = futures::stream::iter(urls.iter().cloned())
        .map(list_tools)
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let failures: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    let tools: usize = outcomes.iter().filter_map(|o| o.as_ref().ok()).sum();
    println!(
        "{}",
        json!({"servers": urls.len(), "failed": failures.len(), "tools": tools})
    );
    for failure in failures.iter().take(5) {
        eprintln!("{failure}");
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
}
