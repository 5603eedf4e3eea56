#!/usr/bin/env bash
# Whole-run benchmark (issues 9, 18, 24, 39): the Actor against a loopback fleet of MCP servers,
# next to the round-trip bounds, a bare rmcp client that only lists the same fleet's tools
# (examples/bare_listing.rs: the floor), and the official MCP Python SDK client.
#
#   bench/run.sh [--servers N] [--delay-ms D] [--concurrency C] [--tools K] [--listeners L]
#                [--prompts P] [--resources R]
#                [--shared-surfaces S] [--rounds R] [--skip-python] [--skip-core] [--debug]
#                [--keep] [--no-build]
#
# Defaults: 100 servers, 50 ms delay before every response, concurrency 20, 50 tools each (the
# first 50 tools of ../shared/fixtures/github-mcp-server/v1.6.0.json, generated if absent),
# 5 rounds.
# Steps: build (release unless --debug), start the fleet (examples/bench_fleet.rs, one listener
# per server unless --listeners), then R rounds of: a first run over an empty storage (it
# creates the ledger), a later run over the unchanged fleet and a bare rmcp listing of the
# same fleet (interleaved, so all three see the same machine); then R runs of
# bench/python_client.py (needs the venv of tests/peers/install.sh, or PYTHON=/path/to/python
# with mcp==2.3.*); one table of medians with the smallest and largest figure of the rounds;
# then the surface-core library bench (`cargo bench --bench core`). --no-build uses the
# binaries already built (or ACTOR=/path and FLEET=/path). Above 1000 servers the INPUT adds
# "shards": 0 (the Actor chooses ceil(N/1000)), shards run concurrently in one process, each
# with `concurrency` servers in flight.
# --shared-surfaces S: the fleet serves only S distinct surfaces (server i answers as server
# i % S), as real fleets do (one product per tenant or region): many servers, and shards, then
# write the same surface records at once. The table names it.
# --prompts P --resources R: every server also lists P prompts, R resources and one resource
# template (read, digested, scanned and stored by the Actor); issue 37 compares
# `--prompts 20 --resources 50` with the same run without them. The table names them.
# Bounds: 2-round-trip bound = ceil(N/(C x shards)) x 2 x D (discover or initialize, then
# tools/list); 1-round-trip limit = ceil(N/(C x shards)) x D. CPU and peak RSS come from GNU
# time around the measured process alone. Timings are measured, never asserted: exit status
# is 0 when every run read every server, whatever the figures.
# ACTOR_FLAGS adds flags to every Actor run, e.g. ACTOR_FLAGS=--always-build-surfaces measures
# the later run without the unchanged-bytes fast path (docs/performance.md, issue 39).
set -euo pipefail

servers=100
delay_ms=50
concurrency=20
tools=50
prompts=0
resources=0
skip_python=0
skip_core=0
profile=release
keep=0
build=1
rounds=5
listeners=""
shared_surfaces=""
# The most servers one Actor run (one shard) reads; larger fleets are split into shards.
shard_size=1000
max_servers=5000
while [ $# -gt 0 ]; do
  case "$1" in
    --servers) servers="$2"; shift 2 ;;
    --delay-ms) delay_ms="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --tools) tools="$2"; shift 2 ;;
    --prompts) prompts="$2"; shift 2 ;;
    --resources) resources="$2"; shift 2 ;;
    --skip-python) skip_python=1; shift ;;
    --skip-core) skip_core=1; shift ;;
    --debug) profile=debug; shift ;;
    --keep) keep=1; shift ;;
    --listeners) listeners="$2"; shift 2 ;;
    --shared-surfaces) shared_surfaces="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$concurrency" -lt 1 ] || [ "$concurrency" -gt 20 ]; then
  echo "bench: --concurrency must be 1..20 (the Actor's input range)" >&2; exit 2
fi
if [ -n "$shared_surfaces" ] && { [ "$shared_surfaces" -lt 1 ] || [ "$shared_surfaces" -gt "$servers" ]; }; then
  echo "bench: --shared-surfaces must be 1..--servers" >&2; exit 2
fi
if [ "$rounds" -lt 1 ]; then
  echo "bench: --rounds must be at least 1" >&2; exit 2
fi
if [ "$servers" -lt 1 ] || [ "$servers" -gt "$max_servers" ]; then
  echo "bench: --servers must be 1..$max_servers" >&2; exit 2
fi
shards=$(( (servers + shard_size - 1) / shard_size ))
# The fleet needs a descriptor per listener and per connection, the Actor one per pooled
# connection: with too low a limit, the servers share listeners (one origin, many paths).
if [ -z "$listeners" ]; then
  listeners="$servers"
  open_files="$(ulimit -n)"
  if [ "$open_files" != unlimited ] && [ $(( 3 * servers + 256 )) -gt "$open_files" ]; then
    listeners=$(( (open_files - 256) / 3 ))
    [ "$listeners" -lt 1 ] && listeners=1
    echo "bench: open-file limit $open_files: $servers servers share $listeners listeners" >&2
  fi
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-$root/target/peers/venv/bin/python}"
timer=/usr/bin/time
if [ ! -x "$timer" ]; then
  echo "bench: $timer (GNU time) is required for CPU and peak RSS figures" >&2; exit 2
fi
if [ "$skip_python" = 0 ] && [ ! -x "$python" ]; then
  echo "bench: no Python with mcp==2.3.* at $python: run tests/peers/install.sh, set PYTHON, or pass --skip-python" >&2
  exit 2
fi

# --- build ----------------------------------------------------------------------------------
# One cargo invocation for every target, so the dependencies are built once with one feature set.
build_flags=(--bin mcp-surface-ledger --example bench_fleet --example bare_listing)
[ "$skip_core" = 0 ] && [ "$profile" = release ] && build_flags+=(--bench core)
if [ "$build" = 0 ]; then
  echo "bench: not building (--no-build)" >&2
elif [ "$profile" = release ]; then
  echo "bench: building (release)..." >&2
  cargo build --release "${build_flags[@]}" >&2
else
  echo "bench: building (debug)..." >&2
  cargo build "${build_flags[@]}" >&2
fi
actor="${ACTOR:-$root/target/$profile/mcp-surface-ledger}"
fleet="${FLEET:-$root/target/$profile/examples/bench_fleet}"
bare="${BARE:-$root/target/$profile/examples/bare_listing}"

# --- fleet ----------------------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench.XXXXXX")"
fleet_pid=""
cleanup() {
  if [ -n "$fleet_pid" ]; then kill "$fleet_pid" 2>/dev/null || true; wait "$fleet_pid" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "bench: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

fleet_args=(--servers "$servers" --listeners "$listeners" --delay-ms "$delay_ms" --tools "$tools")
[ -n "$shared_surfaces" ] && fleet_args+=(--shared-surfaces "$shared_surfaces")
fleet_args+=(--prompts "$prompts" --resources "$resources")
"$fleet" "${fleet_args[@]}" --urls-out "$work/urls.txt" >"$work/fleet.log" 2>&1 &
fleet_pid=$!
for _ in $(seq 1 300); do
  grep -q '^READY' "$work/fleet.log" 2>/dev/null && break
  kill -0 "$fleet_pid" 2>/dev/null || { cat "$work/fleet.log" >&2; echo "bench: the fleet did not start" >&2; exit 1; }
  sleep 0.1
done
grep -q '^READY' "$work/fleet.log" || { echo "bench: the fleet did not get ready" >&2; exit 1; }

# --- the Actor --------------------------------------------------------------------------------
{
  printf '{"ledger_name":"bench","concurrency":%s,' "$concurrency"
  [ "$shards" -gt 1 ] && printf '"shards":0,'
  printf '"servers":['
  sed 's/.*/"&"/' "$work/urls.txt" | paste -sd, -
  printf ']}\n'
} >"$work/input.json"

# run_measured NAME CMD...: runs CMD under GNU time; leaves "wall user sys maxrss_kb" in $work/NAME.time
run_measured() {
  local name="$1"; shift
  "$timer" -f '%e %U %S %M' -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err"
}

# The Actor runs as its image runs it: its allocator's settings are built in (.cargo/config.toml).
actor_env=(env)
read -r -a actor_flags <<<"${ACTOR_FLAGS:-}"
actor_run() {
  local name="$1" storage="$work/storage-${1##*-}"
  if ! run_measured "$name" "${actor_env[@]}" "$actor" --input "$work/input.json" --storage-dir "$storage" --allow-private-targets ${actor_flags[@]+"${actor_flags[@]}"}; then
    tail -20 "$work/$name.err" >&2; echo "bench: the Actor's $name run failed" >&2; exit 1
  fi
  # Every server must have been read: the summary (OUTPUT) counts them.
  local output="$storage/key_value_stores/default/OUTPUT.json" checked unreachable
  checked="$(grep -o '"servers_checked": *[0-9]*' "$output" | grep -o '[0-9]*$' || true)"
  unreachable="$(grep -o '"servers_unreachable": *[0-9]*' "$output" | grep -o '[0-9]*$' || true)"
  if [ "$checked" != "$servers" ] || [ "$unreachable" != 0 ]; then
    tail -20 "$work/$name.err" >&2
    echo "bench: the Actor's $name run checked ${checked:-?} of $servers servers, ${unreachable:-?} unreachable" >&2; exit 1
  fi
  printf '%s %s\n' "${name%%-*}" "$(cat "$work/$name.time")" >>"$work/figures"
}
# Each round starts from an empty storage of its own: a first run creates the ledger, a later
# run reads the unchanged fleet against it. The storages are deleted with the work directory at
# the end, not between runs: on ext4 without a journal, creating files right after thousands
# were deleted makes the kernel skip each recently freed inode (docs/performance.md), which
# would charge the next run for the benchmark's own cleanup.
: >"$work/figures"
for round in $(seq 1 "$rounds"); do
  echo "bench: round $round of $rounds" >&2
  actor_run "first-$round"
  actor_run "later-$round"
  # The floor: the same fleet listed by a bare rmcp client, as many servers in flight as the
  # Actor's shards together.
  if ! run_measured "bare-$round" "$bare" "$work/urls.txt" --concurrency $(( concurrency * shards )); then
    cat "$work/bare-$round.err" >&2; echo "bench: the bare rmcp listing failed" >&2; exit 1
  fi
  printf 'bare %s\n' "$(cat "$work/bare-$round.time")" >>"$work/figures"
done

# --- the Python SDK client ------------------------------------------------------------------
if [ "$skip_python" = 0 ]; then
  for round in $(seq 1 "$rounds"); do
    if ! run_measured "python-$round" "$python" "$root/bench/python_client.py" "$work/urls.txt" --concurrency "$concurrency"; then
      cat "$work/python-$round.err" >&2; echo "bench: the Python client failed" >&2; exit 1
    fi
    printf 'python %s\n' "$(cat "$work/python-$round.time")" >>"$work/figures"
  done
fi

# --- table ----------------------------------------------------------------------------------
# Every figure is the median of the rounds, with the smallest and largest in brackets. The
# CPU ratio pairs round i of the Actor with round i of the Python client.
rss_limit=50
[ "$servers" -gt 100 ] && rss_limit=100
[ "$shards" -gt 1 ] && rss_limit=150
awk -v n="$servers" -v c="$concurrency" -v d="$delay_ms" -v tools="$tools" -v shards="$shards" \
  -v prompts="$prompts" -v resources="$resources" \
  -v surfaces="${shared_surfaces:-$servers}" -v rounds="$rounds" -v rss_limit="$rss_limit" \
  -v nproc="$(nproc)" -v py_detail="$( [ "$skip_python" = 0 ] && cat "$work/python-1.out" || true)" '
  function ceil(x) { return (x == int(x)) ? x : int(x) + 1 }
  function verdict(ok) { return ok ? "met" : "MISSED" }
  # sorted(a, k, s): copies a[1..k] into s[1..k] in ascending order.
  function sorted(a, k, s,   i, j, v) {
    for (i = 1; i <= k; i++) s[i] = a[i]
    for (i = 2; i <= k; i++) { v = s[i]; for (j = i - 1; j >= 1 && s[j] > v; j--) s[j + 1] = s[j]; s[j + 1] = v }
  }
  function median(a, k,   s) { sorted(a, k, s); return (k % 2) ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2 }
  function least(a, k,   s) { sorted(a, k, s); return s[1] }
  function most(a, k,   s) { sorted(a, k, s); return s[k] }
  function spread(a, k, fmt) { return sprintf(fmt " (" fmt "-" fmt ")", median(a, k), least(a, k), most(a, k)) }
  {
    kind = $1; i = ++count[kind]
    wall[kind, i] = $2; cpu[kind, i] = $3 + $4; rss[kind, i] = $5 / 1024
  }
  # column(kind, table, out): out[1..rounds] = the figures of one kind.
  function column(kind, table, out,   i) { for (i = 1; i <= count[kind]; i++) out[i] = table[kind, i] }
  END {
    waves = ceil(n / (c * shards))
    bound2 = waves * 2 * d / 1000; bound1 = waves * d / 1000
    label["first"] = "Actor, first run (empty ledger)"
    label["later"] = "Actor, later run (unchanged)"
    label["python"] = "Python SDK client (mcp 2.3)"
    label["bare"] = "Bare rmcp listing (tools only)"
    printf "\nWhole-run benchmark: %d servers x %d tools, %d ms before every response, concurrency %d, %d CPUs\n", n, tools, d, c, nproc
    if (prompts > 0 || resources > 0) printf "Declared lists: every server also lists %d prompts, %d resources and one resource template\n", prompts, resources
    else printf "Declared lists: none (tools only; --prompts P --resources R to add them)\n"
    if (surfaces < n) printf "Shared surfaces: the servers serve %d distinct surfaces (server i as server i %% %d)\n", surfaces, surfaces
    else printf "Shared surfaces: none (every server its own surface; --shared-surfaces S to share)\n"
    if (shards > 1) {
      printf "%d shards of at most 1000 servers, run concurrently in one process, each with %d servers in flight (%d in all)\n", shards, c, c * shards
      printf "2-round-trip bound ceil(N/(C x shards)) x 2 x delay = %.3f s; 1-round-trip limit = %.3f s\n", bound2, bound1
    } else {
      printf "2-round-trip bound ceil(N/C) x 2 x delay = %.3f s; 1-round-trip limit = %.3f s\n", bound2, bound1
    }
    printf "Medians of %d rounds, smallest and largest in brackets; peak RSS of the measured process alone (GNU time)\n\n", rounds
    printf "| %-31s | %-23s | %-23s | %-26s | %-23s | %-26s | %-26s |\n", "run", "wall s", "/2-RT bound", "CPU/server ms", "peak RSS MB", "CPU vs Python", "CPU / bare listing"
    printf "|%s|%s|%s|%s|%s|%s|%s|\n", "---------------------------------", "-------------------------", "-------------------------", "----------------------------", "-------------------------", "----------------------------", "----------------------------"
    split("first later bare python", kinds, " ")
    for (k = 1; k <= 4; k++) {
      kind = kinds[k]; m = count[kind]
      if (!m) continue
      delete w; delete b; delete p; delete r; delete v; delete f
      column(kind, wall, w); column(kind, rss, r)
      for (i = 1; i <= m; i++) { b[i] = w[i] / bound2; p[i] = 1000 * cpu[kind, i] / n }
      vs = "-"
      if (kind != "python" && count["python"]) {
        for (i = 1; i <= m; i++) v[i] = cpu["python", (i <= count["python"]) ? i : count["python"]] / cpu[kind, i]
        vs = spread(v, m, "%.1fx")
      }
      # CPU over that of the bare listing, round i against round i.
      fv = "-"
      if (kind != "bare" && kind != "python" && count["bare"]) {
        for (i = 1; i <= m; i++) f[i] = cpu[kind, i] / cpu["bare", (i <= count["bare"]) ? i : count["bare"]]
        fv = spread(f, m, "%.2fx")
        floor[kind] = median(f, m)
      }
      printf "| %-31s | %-23s | %-23s | %-26s | %-23s | %-26s | %-26s |\n", label[kind], spread(w, m, "%.3f"), spread(b, m, "%.2fx"), spread(p, m, "%.2f"), spread(r, m, "%.1f"), vs, fv
      ratio[kind] = median(b, m); rssmed[kind] = median(r, m); if (vs != "-") cpuvs[kind] = median(v, m)
    }
    if (py_detail != "") printf "\nPython client detail (round 1): %s\n", py_detail
    # What a client that does nothing but list reaches on this machine: the bare rmcp listing
    # sends 3 requests per server one after the other (initialize, notifications/initialized,
    # tools/list), so its own bound is 3 round trips a wave. Its ratio to that bound is the
    # overhead of the fleet answering, the sockets and the scheduling on these CPUs, which no
    # client removes: read the Actor ratio against it.
    if (count["bare"]) {
      delete w; delete b
      column("bare", wall, w)
      for (i = 1; i <= count["bare"]; i++) b[i] = w[i] / (3 * bound1)
      printf "\nReference: the bare rmcp listing (3 round trips per server) takes %s its own 3-round-trip bound (%.3f s)\n", spread(b, count["bare"], "%.2fx"), 3 * bound1
    }
    # Targets of issue 39: the first run at the round-trip bound and near the CPU of the bare
    # listing; a later run of an unchanged fleet at no more CPU than the bare listing.
    target["first"] = (shards > 1) ? 1.3 : 1.1
    target["later"] = 0.8
    cpu_floor["first"] = 1.5
    cpu_floor["later"] = 1.0
    rss_target["first"] = rss_limit
    rss_target["later"] = (n >= 1000) ? 60 : rss_limit
    for (k = 1; k <= 2; k++) {
      kind = kinds[k]
      printf "\nTargets (issue 39), %s, medians:\n", label[kind]
      printf "  wall <= %.1fx the 2-round-trip bound: %.2fx  %s\n", target[kind], ratio[kind], verdict(ratio[kind] <= target[kind])
      if (kind in floor) printf "  CPU <= %.1fx the bare rmcp listing: %.2fx  %s\n", cpu_floor[kind], floor[kind], verdict(floor[kind] <= cpu_floor[kind])
      if (kind in cpuvs) printf "  CPU >= 12x less than the Python client: %.1fx  %s\n", cpuvs[kind], verdict(cpuvs[kind] >= 12)
      printf "  peak RSS <= %d MB: %.1f MB  %s\n", rss_target[kind], rssmed[kind], verdict(rssmed[kind] <= rss_target[kind])
    }
  }' "$work/figures"

# --- surface core -----------------------------------------------------------------------------
if [ "$skip_core" = 0 ]; then
  echo
  if [ "$profile" = release ]; then
    cargo bench --bench core 2>/dev/null
  else
    echo "surface core bench skipped: it only means something in release (drop --debug)"
  fi
fi
