//! Fuzz target `legacy_sse`: arbitrary bytes into `mcp_surface_ledger::fuzzing::run("legacy_sse", ..)`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(Err(violation)) = mcp_surface_ledger::fuzzing::run("legacy_sse", data) {
        panic!("{violation}");
    }
});
