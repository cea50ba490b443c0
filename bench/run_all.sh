#!/usr/bin/env bash
# run_all.sh: every benchmark in one go (what `make bench` runs), then
# bench/results.md: the date, the machine (nproc, kernel, disk) and one table
# row per figure. Each benchmark prints `name value unit [ratio=x.xx vs B]`
# lines; their raw output is kept in bench/results/<bench>.txt.
#
# Budget: make bench in under 15 minutes on the 2-vCPU machine, builds
# included (the make_bench section of results.md: the seconds the Makefile
# spent building, BENCH_BUILD_SECONDS, and this script's). store_bench's
# scaling runs 1 and 4 GiB; BENCH_LONG=1 adds 16 GiB (about 2-3 more
# minutes on a fast disk, much more on a thin-provisioned one) and
# sim_bench's 600-minute run.
# Environment: BUILD_DIR (default build), PGO_BUILD_DIR (default build-pgo:
# store_bench_pgo and sim_bench_pgo run when it holds their programs, and
# broker_bench runs its mqbroker beside the plain one), BENCH_ONLY="store_bench
# sim_bench" to run a subset.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
BIN=$BUILD_DIR/bin
PGO_BUILD_DIR=${PGO_BUILD_DIR:-$ROOT/build-pgo}
case "$PGO_BUILD_DIR" in /*) ;; *) PGO_BUILD_DIR=$ROOT/$PGO_BUILD_DIR ;; esac
PGO_BIN=$PGO_BUILD_DIR/bin
OUT=$ROOT/bench/results
mkdir -p "$OUT"
BENCH_LONG=${BENCH_LONG:-0}
SCALING=1,4
SIM_ARGS=()
if [ "$BENCH_LONG" = 1 ]; then SCALING=1,4,16; SIM_ARGS=(--long); fi
ALL="page_cache_fill raw_disk_bench store_bench store_bench_pgo sim_bench sim_bench_pgo replication_bench broker_bench"
ALL+=" remoting_bench"
ONLY=${BENCH_ONLY:-$ALL}

# The load average around the run: other work on a shared machine slows
# every figure (ratios measured in the same run suffer least).
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# The page cache's filling (page_cache_fill, below), kept until the end.
FILL_DIR=$(mktemp -d /tmp/mqlab-page-cache-fill-XXXXXX)
trap 'rm -rf "$FILL_DIR"' EXIT

status=0
run() {  # name command...
  local name=$1; shift
  case " $ONLY " in *" $name "*) ;; *) return 0 ;; esac
  echo "== $name: $*" >&2
  # What the benchmark before freed is free and cold again: fill it first.
  if [ "$name" != page_cache_fill ] && [ -x "$BIN/page_cache_fill" ]; then
    "$BIN/page_cache_fill" --file "$FILL_DIR/before-$name" > /dev/null || true
  fi
  local start=$SECONDS
  if "$@" > "$OUT/$name.txt" 2> "$OUT/$name.err"; then
    echo "== $name: $((SECONDS - start)) s" >&2
  else
    echo "== $name FAILED after $((SECONDS - start)) s (see $OUT/$name.err)" >&2
    status=1
  fi
  echo "${name}_wall_seconds $((SECONDS - start)) s" >> "$OUT/$name.txt"
  grep -v '^#' "$OUT/$name.txt" >&2 || true
}

# First the machine's free memory, filled with clean page cache kept until
# the end: on this VM a page taken from free memory costs the hypervisor's
# first touch (8-60 us, as the host's load goes), which would land in
# whichever benchmark takes it; a page reclaimed from the cache does not
# (bench/page_cache_fill.cc).
run page_cache_fill "$BIN/page_cache_fill" --file "$FILL_DIR/fill"
run raw_disk_bench "$BIN/raw_disk_bench"
# Every case: both flush modes, keyed puts (the IndexFile) and the transient
# store pool, each beside its raw baseline.
run store_bench "$BIN/store_bench" --cases async,sync,keyed,pool,mapped --scaling-gib "$SCALING"
# The profile-guided store (make pgo) on pre-touched blocks, ASYNC_FLUSH: the
# put's user-space work, which the profile shortens, is most of its cost there.
if [ -x "$PGO_BIN/store_bench" ]; then
  run store_bench_pgo "$PGO_BIN/store_bench" --label store_pgo --cases async --blocks pretouched
fi
run sim_bench "$BIN/sim_bench" "${SIM_ARGS[@]}"
# The profile-guided build's simulator (make pgo), when there is one: the
# same runs, whose digests its build already checked against the plain one's.
if [ -x "$PGO_BIN/sim_bench" ]; then
  run sim_bench_pgo "$PGO_BIN/sim_bench" --label sim_pgo "${SIM_ARGS[@]}"
fi
run replication_bench "$BIN/replication_bench"
# With the profile-guided programs (make pgo) too, when built: their
# mqbroker_pgo cases follow the plain mqbroker's after the same redis run
# (one run, not a second one against redis and its own fills: 245 s for
# both builds on 2026-12-06, against 156 + 121 s as two runs).
SECOND_BROKER=()
if [ -x "$PGO_BIN/mqbroker" ] && [ -x "$PGO_BIN/mqadmin" ] && [ -x "$PGO_BIN/mqnamesrv" ]; then
  SECOND_BROKER=(SECOND_BUILD_DIR="$PGO_BUILD_DIR" SECOND_LABEL=mqbroker_pgo)
fi
run broker_bench env BUILD_DIR="$BUILD_DIR" "${SECOND_BROKER[@]}" "$ROOT/bench/broker_bench.sh"
# The remoting codec's JSON header: fast paths vs nlohmann, same run (seconds).
run remoting_bench "$BIN/remoting_bench" --benchmark_min_time=0.5

# What make bench took: the Makefile's builds (plain programs, make pgo)
# and the benchmarks above, against the 15-minute budget.
BENCH_SECONDS=$SECONDS
{
  echo "# the build seconds come from the Makefile (BENCH_BUILD_SECONDS; 0 when run_all.sh runs alone)"
  echo "make_bench_build_seconds ${BENCH_BUILD_SECONDS:-0} s"
  echo "make_bench_benchmarks_seconds $BENCH_SECONDS s"
  awk -v b="${BENCH_BUILD_SECONDS:-0}" -v r="$BENCH_SECONDS" \
    'BEGIN { m = (b + r) / 60; printf("make_bench_minutes %.1f min ratio=%.2f vs 15min_budget\n", m, m / 15) }'
} > "$OUT/make_bench.txt"
grep -v '^#' "$OUT/make_bench.txt" >&2

# ---------------------------------------------------------------- results.md
disk_of() {
  local source; source=$(df --output=source /tmp | tail -1)
  local base; base=$(basename "$source")
  local model=""
  [ -r "/sys/block/$base/device/model" ] && model=$(tr -s ' ' < "/sys/block/$base/device/model")
  local rotational=""
  [ -r "/sys/block/$base/queue/rotational" ] && rotational=$([ "$(cat /sys/block/$base/queue/rotational)" = 0 ] && echo "non-rotational" || echo "rotational")
  echo "$source ${model:+($model) }$rotational, $(df -h --output=size,avail /tmp | tail -1 | awk '{print $1" total, "$2" free"}') on /tmp"
}
{
  echo "# Benchmark results"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r)"
  echo "- disk: $(disk_of)"
  echo "- load average (1 / 5 / 15 min): $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end, on $(nproc) CPUs$(awk -v n="$(nproc)" '$1 > n {print ": loaded, other work shared the machine"}' /proc/loadavg)"
  echo "- commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo
  echo "Produced by \`make bench\` (bench/run_all.sh). Ratios compare with a baseline measured in the same run."
  for name in $ALL make_bench; do
    [ -f "$OUT/$name.txt" ] || continue
    echo
    echo "## $name"
    echo
    echo "| figure | value | unit | ratio | vs |"
    echo "|---|---:|---|---:|---|"
    grep -v '^#' "$OUT/$name.txt" | awk '
      NF >= 3 {
        ratio = ""; vs = "";
        for (i = 4; i <= NF; i++) { if ($i ~ /^ratio=/) { ratio = substr($i, 7); } if ($i == "vs" && i < NF) vs = $(i + 1); }
        printf("| %s | %s | %s | %s | %s |\n", $1, $2, $3, ratio, vs);
      }'
  done
  # broker_bench at a glance: mqbroker vs redis at equal concurrency, and
  # the topic scaling (the same figures as its table above).
  for label in mqbroker mqbroker_pgo; do
    bench=broker_bench
    [ -f "$OUT/$bench.txt" ] && grep -q "^${label}_produce_" "$OUT/$bench.txt" || continue
    /usr/bin/python3 - "$OUT/$bench.txt" "$bench" "$label" <<'PYEOF'
import re, sys
v = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 3 and not line.startswith("#"):
        v[f[0]] = f[1]
bench, label = sys.argv[2], sys.argv[3]
# The same figures under the label's names: mqbroker_pgo_produce_... reads as mqbroker_produce_...
v.update({"mqbroker" + k[len(label):]: x for k, x in list(v.items()) if k.startswith(label + "_")})
build = " (profile-guided build, make pgo)" if label != "mqbroker" else ""
print(f"\n### {bench}: mqbroker{build} vs redis, 50 senders (msgs/s; ratio to redis)\n")
print("| flush vs fsync | in flight | redis | mqbroker, 50 clients | ratio | mqbroker, 1 client | ratio |")
print("|---|---|---:|---:|---:|---:|---:|")
for mq, rd in (("async", "everysec"), ("sync", "always")):
    for w, p in ((50, 1), (800, 16)):
        r = float(v.get(f"redis_xadd_1k_{rd}_c50_P{p}", 0))
        row = [f"{mq.upper()}_FLUSH vs {rd}", f"{w} ({w // 50} each)", f"{r:.0f}"]
        for c in (50, 1):
            m = float(v.get(f"mqbroker_produce_1k_{mq}_flush_c{c}_w{w}", 0))
            row += [f"{m:.0f}", f"{m / r:.2f}" if r else ""]
        print("| " + " | ".join(row) + " |")
# The label's own topic cases (broker_bench runs them for the first build only).
counts = sorted({int(m.group(1)) for k in v for m in [re.match(re.escape(label) + r"_peak_rss_topics(\d+)$", k)] if m})
if len(counts) > 1:
    print(f"\n### {bench}: topics (ASYNC_FLUSH, 50 clients, 1 KiB)\n")
    print("| topics | msgs/s | ratio to 1 topic | p99 (ms) | broker peak RSS (MiB) | of it own (RssAnon, MiB) | topic creation (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    base = float(v.get(f"mqbroker_produce_1k_async_flush_c50_w50_topics{counts[0]}", 0))
    for n in counts:
        t = float(v.get(f"mqbroker_produce_1k_async_flush_c50_w50_topics{n}", 0))
        print(f"| {n} | {t:.0f} | {t / base if base else 0:.2f} | {v.get(f'mqbroker_produce_1k_async_flush_c50_w50_topics{n}_p99', '')} "
              f"| {v.get(f'mqbroker_peak_rss_topics{n}', '')} | {v.get(f'mqbroker_peak_rss_anon_topics{n}', '')} "
              f"| {v.get(f'mqbroker_create_topics{n}', '')} |")
PYEOF
  done
} > "$ROOT/bench/results.md"
echo "bench/results.md written" >&2
exit $status
