//! Command-line entry point (to be written).

fn main() {}
