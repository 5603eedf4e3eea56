//! Fuzz target `dupkeys`: arbitrary bytes into `mcp_surface_ledger::fuzzing::run("dupkeys", ..)`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(Err(violation)) = mcp_surface_ledger::fuzzing::run("dupkeys", data) {
        panic!("{violation}");
    }
});
