#!/usr/bin/env bash
# Builds the cargo-fuzz targets and runs each for a while with the limits the project holds
# them to: no input may take over 1 s (-timeout=1) and memory stays bounded (-rss_limit_mb).
#
# Usage: fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 600 s, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). On a stable toolchain the sanitizer
# flags need RUSTC_BOOTSTRAP=1, which this script sets. New inputs go to fuzz/corpus-grown/
# (not committed); crashes, timeouts and out-of-memory inputs go to fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(sse legacy_sse exchange canon dupkeys grade risk www_authenticate input)
fi

export RUSTC_BOOTSTRAP=1
cargo fuzz build -O
host=$(rustc -vV | sed -n 's/^host: //p')

for target in "${targets[@]}"; do
    echo "--- fuzz $target for ${seconds}s"
    mkdir -p "corpus-grown/$target" "artifacts/$target"
    "target/$host/release/$target" "corpus-grown/$target" "corpus/$target" \
        -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
        -max_len=16384 -print_final_stats=1 -artifact_prefix="artifacts/$target/"
done
