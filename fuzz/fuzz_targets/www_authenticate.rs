//! Fuzz target `www_authenticate`: arbitrary bytes into `mcp_surface_ledger::fuzzing::run("www_authenticate", ..)`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(Err(violation)) = mcp_surface_ledger::fuzzing::run("www_authenticate", data) {
        panic!("{violation}");
    }
});
