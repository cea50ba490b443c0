#!/usr/bin/env bash
# broker_bench.sh: mqnamesrv + mqbroker over loopback against redis-server 7
# on the same machine, in the same run (only ratios mean something here).
#
#   mqadmin perf produce, 1 KiB bodies, 50 senders without pipelining (-w 50)
#   and 50 senders with 16 in flight each (-w 800: perf produce's -w counts
#   sends in flight), under ASYNC_FLUSH and SYNC_FLUSH, each twice: over 50
#   producer clients, one connection each (--producers 50: "c50", the same
#   concurrency as redis-benchmark -c 50), and over one shared client (one
#   connection, as RocketMQ's benchmark Producer.java: "c1"); then mqadmin
#   perf consume of what was produced (from the page cache), and mqbroker's
#   peak RSS: VmHWM, which counts the pages of its CommitLog mapping (the
#   active segment is written through one with ASYNC_FLUSH: up to a segment,
#   1 GiB by default, of page cache), and RssAnon sampled every 0.2 s (its
#   own memory: heap, stacks), which redis's VmHWM is compared with. Each produce run also reports the CPU the broker and
#   the client used (user and system, % of one CPU, and microseconds per
#   message; the machine has 2 CPUs, so server % + client % near 200 means
#   the pair, not the broker alone, ran out of CPU).
#   Topic scaling: a fresh ASYNC_FLUSH broker per case, TOPIC_COUNTS topics
#   of 8 queues (mqadmin updateTopic), 50 producer clients spreading their
#   sends over all of them (--topics): msgs/s and the broker's peak RSS.
#   redis-benchmark XADD of 1 KiB, 50 clients, unpipelined (-P 1) and with 16
#   pipelined (-P 16), under appendfsync everysec and always.
#   Ratios: ASYNC_FLUSH vs everysec, SYNC_FLUSH vs always, at equal in-flight
#   requests (goal >= 1.0). The machine's load drifts (other builds share
#   it), so the two sides of a ratio are measured back to back: redis-server
#   runs beside the mqbroker of its flush type, and each redis-benchmark case
#   runs just before the mqbroker cases at the same requests in flight.
#
#   A second build (SECOND_BUILD_DIR; make bench passes the profile-guided
#   one): its mqbroker runs beside the first, each with its own topic and
#   store, and its cases (through its own mqadmin) follow the first's after
#   the same redis-benchmark run, so all three are measured back to back;
#   its consume side too, not the topic scaling.
#
# Output: one line per figure, `name value unit [ratio=x.xx vs BASELINE]`.
# Environment: BUILD_DIR (default build), BROKER_LABEL (default mqbroker: the
# first word of the mqbroker figures' names), SECOND_BUILD_DIR and
# SECOND_LABEL (the second build's label: make bench's is mqbroker_pgo),
# DURATION seconds per mqbroker case
# (default 8), REDIS_REQUESTS_P1 / REDIS_REQUESTS_P16 (requests per redis
# case), TOPIC_COUNTS (default "1 100 1000"), PAGE_CACHE_FILL (default 1:
# fill the free memory with clean page cache, kept until the end, and top it
# up before each case, so that neither side of a ratio pays the hypervisor's
# first touch of a page taken from free memory: bench/page_cache_fill.cc),
# BROKER_CONF_EXTRA (lines added to every broker.conf, for an A/B of one key:
# BROKER_CONF_EXTRA=groupCommitOnPutThreadEnable=false).
# Installs redis-server with apt-get when missing (the Debian service
# is not started: policy-rc.d, or stopped if it was). Every process it starts
# is stopped by PID; its scratch directory is removed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BIN=$BUILD_DIR/bin
BROKER_LABEL=${BROKER_LABEL:-mqbroker}
# The builds whose mqbroker runs, by index: LABELS[i] names its figures,
# BINS[i] holds its programs.
LABELS=("$BROKER_LABEL")
BINS=("$BIN")
if [ -n "${SECOND_BUILD_DIR:-}" ]; then
  LABELS+=("${SECOND_LABEL:-mqbroker_second}")
  BINS+=("$SECOND_BUILD_DIR/bin")
fi
for label in "${LABELS[@]}"; do
  case "$label" in
    ""|*[!a-z0-9_]*) echo "broker_bench: a label must be one word of [a-z0-9_], not '$label'" >&2; exit 2 ;;
  esac
done
if [ "${#LABELS[@]}" -gt 1 ] && [ "${LABELS[0]}" = "${LABELS[1]}" ]; then
  echo "broker_bench: BROKER_LABEL and SECOND_LABEL are both '${LABELS[0]}'" >&2; exit 2
fi
DURATION=${DURATION:-8}
REDIS_REQUESTS_P1=${REDIS_REQUESTS_P1:-200000}
REDIS_REQUESTS_P16=${REDIS_REQUESTS_P16:-800000}
TOPIC_COUNTS=${TOPIC_COUNTS:-1 100 1000}
SENDERS=50
PIPELINE=16
CLK_TCK=$(getconf CLK_TCK)
PY=/usr/bin/python3

for bin in "${BINS[@]}"; do
  for program in mqnamesrv mqbroker mqadmin; do
    [ -x "$bin/$program" ] || { echo "broker_bench: $bin/$program missing (build it first)" >&2; exit 2; }
  done
done

SCRATCH=$(mktemp -d /tmp/mqlab-broker-bench-XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$SCRATCH"
}
trap cleanup EXIT

# Fills what is free with clean page cache (removed with the scratch
# directory); the first fill's figures are printed, the top-ups' are not.
FILLS=0
fill_page_cache() {
  [ "${PAGE_CACHE_FILL:-1}" = 1 ] || return 0
  FILLS=$((FILLS + 1))
  if [ $FILLS -eq 1 ]; then
    "$BIN/page_cache_fill" --file "$SCRATCH/page-cache-fill-$FILLS" --name broker_bench_page_cache_fill
  else
    "$BIN/page_cache_fill" --file "$SCRATCH/page-cache-fill-$FILLS" > /dev/null
  fi
}
if [ "${PAGE_CACHE_FILL:-1}" = 1 ] && [ ! -x "$BIN/page_cache_fill" ]; then
  echo "broker_bench: $BIN/page_cache_fill missing (build it first)" >&2; exit 2
fi

line() {  # name value unit [baseline baseline_name]
  if [ $# -ge 5 ] && [ -n "$4" ] && [ "$4" != "0" ]; then
    $PY -c 'import sys; n,v,u,b,bn=sys.argv[1:]; print(f"{n} {float(v):.1f} {u} ratio={float(v)/float(b):.2f} vs {bn}")' "$@"
  else
    $PY -c 'import sys; n,v,u=sys.argv[1:4]; print(f"{n} {float(v):.1f} {u}")' "$1" "$2" "$3"
  fi
}

# A base port with base, base+1 and base+2 free on loopback.
free_ports() {
  $PY - <<'PYEOF'
import socket
for _ in range(200):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); base = s.getsockname()[1]; s.close()
    if base > 65000: continue
    ok = True
    for p in range(base, base + 3):
        t = socket.socket()
        try: t.bind(("127.0.0.1", p))
        except OSError: ok = False
        finally: t.close()
    if ok:
        print(base); break
PYEOF
}

# Samples a broker's RssAnon (its own memory, not the page cache of its
# mapped CommitLog segment) every 0.2 s; stop_anon_sampler prints the peak
# (KiB). One sampler per broker pid.
# Each new peak is written beside the file and renamed over it: the sampler
# is killed at any instant, and killed between `>`'s truncation and its
# write it left an empty file, which read as a peak of 0 (once, topics100,
# 2026-12-04 20:51).
declare -A ANON_SAMPLERS
start_anon_sampler() {  # pid
  local peak_file="$SCRATCH/anon-peak-$1"
  echo 0 > "$peak_file"
  ( peak=0
    while kill -0 "$1" 2>/dev/null; do
      v=$(awk '/RssAnon/ {print $2}' "/proc/$1/status" 2>/dev/null)
      if [ -n "$v" ] && [ "$v" -gt "$peak" ]; then
        peak=$v
        echo "$peak" > "$peak_file.new" && mv -f "$peak_file.new" "$peak_file"
      fi
      sleep 0.2
    done ) &
  ANON_SAMPLERS[$1]=$!
}
stop_anon_sampler() {  # pid
  kill "${ANON_SAMPLERS[$1]}" 2>/dev/null || true
  wait "${ANON_SAMPLERS[$1]}" 2>/dev/null || true
  cat "$SCRATCH/anon-peak-$1"
}

stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------- redis
if ! command -v redis-server > /dev/null || ! command -v redis-benchmark > /dev/null; then
  echo "broker_bench: installing redis-server and redis-tools" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools > "$SCRATCH/apt.log" 2>&1 || {
    apt-get update -qq > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools > "$SCRATCH/apt.log" 2>&1
  } || { echo "broker_bench: could not install redis" >&2; cat "$SCRATCH/apt.log" >&2; exit 1; }
  # The package's own service (where an init started it) is not ours to run against.
  if command -v service > /dev/null; then service redis-server stop > /dev/null 2>&1 || true; fi
fi

declare -A RD
BODY=$(head -c 1024 /dev/zero | tr '\0' 'x')
REDIS_PID=0
REDIS_PORT=0
start_redis() {  # appendfsync tag: sets REDIS_PID, REDIS_PORT
  local fsync=$1 tag=$2
  REDIS_PORT=$(free_ports)
  local dir="$SCRATCH/redis-$tag"
  mkdir -p "$dir"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync "$fsync" \
      --save "" --daemonize no --protected-mode yes > "$dir/redis.log" 2>&1 &
  REDIS_PID=$!
  PIDS+=("$REDIS_PID")
  for _ in $(seq 100); do redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done
}

# One redis-benchmark XADD run against the running redis-server; its
# figures go to RD[tag-pipeline-*].
redis_run() {  # tag pipeline
  local tag=$1 pipeline=$2
  local dir="$SCRATCH/redis-$tag" pid=$REDIS_PID port=$REDIS_PORT
  local n=$REDIS_REQUESTS_P1; [ "$pipeline" -gt 1 ] && n=$REDIS_REQUESTS_P16
  redis-cli -p "$port" del s > /dev/null
  # A capped stream, as a retained log: memory stays bounded.
  local csv u0 s0 u1 s1 w0 w1
  read -r u0 s0 < <(cpu_ticks "$pid")
  w0=$(date +%s.%N)
  csv=$(/usr/bin/time -f '%U %S' -o "$dir/time-$pipeline.txt" \
        redis-benchmark -p "$port" -c $SENDERS -n "$n" -P "$pipeline" --csv \
        XADD s MAXLEN '~' 100000 '*' f "$BODY" 2> "$dir/benchmark-$pipeline.err" | tail -1) || true
  # A redis-benchmark that printed no result leaves the figures at 0 and
  # says why, instead of ending the whole run (set -e) without a word.
  case "$csv" in '"XADD'*) ;; *) echo "broker_bench: redis-benchmark -P $pipeline ($tag) printed no result:" >&2
                                 tail -5 "$dir/benchmark-$pipeline.err" >&2; csv= ;; esac
  w1=$(date +%s.%N)
  read -r u1 s1 < <(cpu_ticks "$pid")
  read -r "RD[$tag-$pipeline-cpu]" "RD[$tag-$pipeline-cpu-user]" "RD[$tag-$pipeline-cpu-sys]" \
      "RD[$tag-$pipeline-client-cpu]" "RD[$tag-$pipeline-client-share]" < <($PY - "$u0" "$s0" "$u1" "$s1" "$w0" "$w1" "$CLK_TCK" "$n" \
      "$dir/time-$pipeline.txt" <<'PYEOF'
import sys
u0, s0, u1, s1, w0, w1, tck, total = map(float, sys.argv[1:9])
try:
    cu, cs = map(float, open(sys.argv[9]).read().split()[-2:])
except (OSError, ValueError):
    cu = cs = 0.0
user, sys_ = (u1 - u0) / tck, (s1 - s0) / tck
print(f"{100 * (user + sys_) / max(w1 - w0, 1e-9):.1f} {user * 1e6 / total:.2f} {sys_ * 1e6 / total:.2f} {(cu + cs) * 1e6 / total:.2f} "
      f"{100 * (cu + cs) / max(w1 - w0, 1e-9):.1f}")
PYEOF
)
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  RD[$tag-$pipeline-tps]=$(echo "$csv" | awk -F'","' '{print $2}')
  RD[$tag-$pipeline-p50]=$(echo "$csv" | awk -F'","' '{print $5}')
  RD[$tag-$pipeline-p99]=$(echo "$csv" | awk -F'","' '{print $7}')
}

stop_redis() {  # tag
  RD[$1-hwm]=$(awk '/VmHWM/ {print $2}' /proc/$REDIS_PID/status)
  stop_pid "$REDIS_PID"
}

# ---------------------------------------------------------------- mqbroker
NS_PORT=$(free_ports)
cat > "$SCRATCH/namesrv.conf" <<CONF
listenPort=$NS_PORT
httpPort=0
CONF
"$BIN/mqnamesrv" -c "$SCRATCH/namesrv.conf" > "$SCRATCH/namesrv.log" 2>&1 &
NS_PID=$!
PIDS+=("$NS_PID")
NS=127.0.0.1:$NS_PORT

# perf produce summary -> "tps p50 p99"
produce_figures() {
  $PY - "$1" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
tps = re.search(r"\[Complete\].*?Send TPS: (\d+)", text)
total = re.search(r"\[Complete\] Send Total: (\d+)", text)
pct = re.search(r"Send RT\(ms\) p50: ([\d.]+) p99: ([\d.]+)", text)
failed = re.search(r"Send Failed: (\d+)", text.split("[Complete]")[-1]) if "[Complete]" in text else None
print(tps.group(1) if tps else 0, pct.group(1) if pct else 0, pct.group(2) if pct else 0,
      failed.group(1) if failed else -1, total.group(1) if total else 0)
PYEOF
}

declare -A MQ
# The build the functions below act on (use_build): its programs, its
# broker's pid and address (start_broker), the topic its cases send to and
# the prefix of its keys in MQ (none for the first build).
CUR_BIN=$BIN
BROKER_PID=0
BROKER_ADDR=
BENCH_TOPIC=BenchTopic
KEY_PREFIX=
declare -a BROKER_PIDS BROKER_ADDRS
use_build() {  # index
  CUR_BIN=${BINS[$1]}
  BROKER_PID=${BROKER_PIDS[$1]:-0}
  BROKER_ADDR=${BROKER_ADDRS[$1]:-}
  if [ "$1" -eq 0 ]; then BENCH_TOPIC=BenchTopic KEY_PREFIX=; else BENCH_TOPIC=BenchTopic$1 KEY_PREFIX=b$1-; fi
}
# Its own brokerName per build: two masters of one name would be one broker
# group to the name server, and routes would flip between them.
start_broker() {  # flush_type tag index: sets BROKER_PIDS[index], BROKER_ADDRS[index] and use_build index
  local flush=$1 tag=$2 index=$3
  local port; port=$(free_ports)
  local store="$SCRATCH/store-$tag-$index"
  cat > "$SCRATCH/broker-$tag-$index.conf" <<CONF
brokerClusterName=BenchCluster
brokerName=bench-broker$([ "$index" -eq 0 ] || echo "-$index")
brokerId=0
brokerRole=ASYNC_MASTER
flushDiskType=$flush
namesrvAddr=$NS
brokerIP1=127.0.0.1
listenPort=$port
haListenPort=$((port + 1))
httpPort=$((port + 2))
storePathRootDir=$store
mappedFileSizeCommitLog=268435456
warmMapedFileEnable=true
allocateMappedFileEnable=true
# Nothing is deleted during the run (the consume side reads it all back);
# the scratch store is removed at the end. This machine's shared disk is
# fuller than the default thresholds.
fileReservedTime=48
diskMaxUsedSpaceRatio=95
diskSpaceWarningLevelRatio=0.99
diskSpaceCleanForciblyRatio=0.99
autoCreateTopicEnable=true
defaultTopicQueueNums=8
${BROKER_CONF_EXTRA:-}
CONF
  "${BINS[$index]}/mqbroker" -c "$SCRATCH/broker-$tag-$index.conf" > "$SCRATCH/broker-$tag-$index.log" 2>&1 &
  BROKER_PIDS[$index]=$!
  BROKER_ADDRS[$index]=127.0.0.1:$port
  PIDS+=("$!")
  use_build "$index"
}

# Creates topics (8 queues each) on the broker and waits until the name
# server lists every one of them. Waiting for the last name alone is not
# enough: the creations run two at a time and the broker registers its topic
# table asynchronously, so the last one routed may be registered before a
# neighbour, and a perf produce that looks up a missing route fails at once.
create_topics() {  # topic...
  local topics=("$@")
  local ready=0
  for _ in $(seq 100); do
    if "$CUR_BIN/mqadmin" updateTopic -n "$NS" -b "$BROKER_ADDR" -t "$1" -r 8 -w 8 > /dev/null 2>&1; then ready=1; break; fi
    sleep 0.3
  done
  if [ $ready -ne 1 ]; then echo "broker_bench: broker at $BROKER_ADDR did not come up" >&2; cat "$SCRATCH"/broker-*.log >&2; exit 1; fi
  shift
  if [ $# -gt 0 ]; then
    printf '%s\n' "$@" | xargs -P 2 -I{} "$CUR_BIN/mqadmin" updateTopic -n "$NS" -b "$BROKER_ADDR" -t {} -r 8 -w 8 > /dev/null
  fi
  local listed=0
  for _ in $(seq 200); do
    listed=$("$CUR_BIN/mqadmin" topicList -n "$NS" 2> /dev/null | grep -cxF -f <(printf '%s\n' "${topics[@]}") || true)
    [ "$listed" -ge "${#topics[@]}" ] && return 0
    sleep 0.3
  done
  echo "broker_bench: the name server lists $listed of ${#topics[@]} topics" >&2; exit 1
}

cpu_ticks() { awk '{print $14 + 0, $15 + 0}' "/proc/$1/stat"; }  # utime stime, in clock ticks

# One perf produce run against the current build's broker (use_build), with
# its mqadmin; its figures go to MQ[key-*]:
# tps p50 p99 failed total, the broker's CPU (% of one CPU over the run, and
# user/system microseconds per stored message) and the client's (us/msg).
produce_run() {  # key perf-produce-args...
  local key=$1; shift
  local out="$SCRATCH/produce-$key.txt"
  local u0 s0 u1 s1 w0 w1
  read -r u0 s0 < <(cpu_ticks "$BROKER_PID")
  w0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$SCRATCH/time-$key.txt" \
      "$CUR_BIN/mqadmin" perf produce -n "$NS" -s 1024 --duration "$DURATION" "$@" > "$out" 2>&1 || true
  w1=$(date +%s.%N)
  read -r u1 s1 < <(cpu_ticks "$BROKER_PID")
  local tps p50 p99 failed total
  read -r tps p50 p99 failed total < <(produce_figures "$out")
  if ! grep -q '^\[Complete\]' "$out"; then  # the scratch directory goes at exit: say why here
    echo "broker_bench: perf produce ($key) printed no summary:" >&2; tail -5 "$out" >&2
  fi
  MQ[$key-tps]=$tps; MQ[$key-p50]=$p50; MQ[$key-p99]=$p99; MQ[$key-failed]=$failed; MQ[$key-total]=$total
  read -r "MQ[$key-cpu]" "MQ[$key-cpu-user]" "MQ[$key-cpu-sys]" "MQ[$key-client-cpu]" "MQ[$key-client-share]" < <($PY - "$u0" "$s0" "$u1" "$s1" "$w0" "$w1" \
      "$CLK_TCK" "$total" "$SCRATCH/time-$key.txt" <<'PYEOF'
import sys
u0, s0, u1, s1, w0, w1, tck, total = map(float, sys.argv[1:9])
try:
    cu, cs = map(float, open(sys.argv[9]).read().split()[-2:])
except (OSError, ValueError):
    cu = cs = 0.0
n = max(total, 1.0)
user, sys_ = (u1 - u0) / tck, (s1 - s0) / tck
print(f"{100 * (user + sys_) / max(w1 - w0, 1e-9):.1f} {user * 1e6 / n:.2f} {sys_ * 1e6 / n:.2f} {(cu + cs) * 1e6 / n:.2f} "
      f"{100 * (cu + cs) / max(w1 - w0, 1e-9):.1f}")
PYEOF
)
}

# One flush type against its redis counterpart. The machine is shared and
# its load drifts, so each pair of figures a ratio compares is measured back
# to back: redis-benchmark at one pipeline depth, then each build's mqbroker
# at the same number of requests in flight (50 clients, then 1 client).
run_pair_case() {  # flush_type tag appendfsync redis_tag
  local flush=$1 tag=$2 fsync=$3 rtag=$4 i
  fill_page_cache
  for i in "${!BINS[@]}"; do
    start_broker "$flush" "$tag" "$i"
    start_anon_sampler "$BROKER_PID"
    create_topics "$BENCH_TOPIC"
  done
  start_redis "$fsync" "$rtag"
  local -a produced=()
  for inflight in $SENDERS $((SENDERS * PIPELINE)); do
    local pipeline=1; [ "$inflight" -gt $SENDERS ] && pipeline=$PIPELINE
    fill_page_cache
    redis_run "$rtag" "$pipeline"
    for i in "${!BINS[@]}"; do
      use_build "$i"
      for clients in $SENDERS 1; do
        local key=$KEY_PREFIX$tag-c$clients-w$inflight
        produce_run "$key" -t "$BENCH_TOPIC" -w "$inflight" --producers "$clients"
        produced[i]=$((${produced[i]:-0} + ${MQ[$key-total]}))
      done
    done
  done
  stop_redis "$rtag"
  # The consume side: everything produced, from the first offset (page cache).
  for i in "${!BINS[@]}"; do
    use_build "$i"
    local cout="$SCRATCH/consume-$tag-$i.txt"
    "$CUR_BIN/mqadmin" perf consume -n "$NS" -t "$BENCH_TOPIC" -g "bench_consumer_${tag}_$i" -p false --fromFirst \
        -q "${produced[i]}" --duration 30 > "$cout" 2>&1 || true
    local ctps
    ctps=$($PY -c 'import re,sys; m=re.search(r"Consume TPS: (\d+)", open(sys.argv[1]).read()); print(m.group(1) if m else 0)' "$cout")
    MQ[$KEY_PREFIX$tag-consume-tps]=$ctps
    MQ[$KEY_PREFIX$tag-hwm]=$(awk '/VmHWM/ {print $2}' /proc/$BROKER_PID/status)
    MQ[$KEY_PREFIX$tag-anon]=$(stop_anon_sampler "$BROKER_PID")
    stop_pid "$BROKER_PID"
  done
}

# Topic scaling: a fresh broker per count, so VmHWM is that case's own. The
# first build only.
run_topics_case() {  # count
  local n=$1 base=Scale$1
  fill_page_cache
  start_broker ASYNC_FLUSH "topics$n" 0
  start_anon_sampler "$BROKER_PID"
  local start=$SECONDS
  if [ "$n" -eq 1 ]; then create_topics "$base"; else create_topics $(seq -f "${base}_%.0f" 0 $((n - 1))); fi
  MQ[topics$n-create-s]=$((SECONDS - start))
  produce_run "topics$n" -t "$base" --topics "$n" -w "$SENDERS" --producers "$SENDERS"
  MQ[topics$n-hwm]=$(awk '/VmHWM/ {print $2}' /proc/$BROKER_PID/status)
  MQ[topics$n-rss]=$(awk '/VmRSS/ {print $2}' /proc/$BROKER_PID/status)
  MQ[topics$n-anon]=$(stop_anon_sampler "$BROKER_PID")
  stop_pid "$BROKER_PID"
}

run_pair_case ASYNC_FLUSH async everysec everysec
run_pair_case SYNC_FLUSH sync always always
for n in $TOPIC_COUNTS; do run_topics_case "$n"; done


# ---------------------------------------------------------------- report
cpu_lines() {  # name array-name key
  local name=$1 key=$3
  local -n table=$2
  line "${name}_server_cpu" "${table[$key-cpu]:-0}" "%"
  line "${name}_server_cpu_user_per_msg" "${table[$key-cpu-user]:-0}" us
  line "${name}_server_cpu_sys_per_msg" "${table[$key-cpu-sys]:-0}" us
  line "${name}_client_cpu_per_msg" "${table[$key-client-cpu]:-0}" us
  line "${name}_client_cpu" "${table[$key-client-share]:-0}" "%"
}
for pair in "async everysec ASYNC_FLUSH" "sync always SYNC_FLUSH"; do
  set -- $pair
  mq=$1 rd=$2 label=$3
  for inflight in $SENDERS $((SENDERS * PIPELINE)); do
    pipeline=1; [ "$inflight" -gt $SENDERS ] && pipeline=$PIPELINE
    rname="redis_xadd_1k_${rd}_c${SENDERS}_P${pipeline}"
    line "$rname" "${RD[$rd-$pipeline-tps]:-0}" msgs/s
    line "${rname}_p50" "${RD[$rd-$pipeline-p50]:-0}" ms
    line "${rname}_p99" "${RD[$rd-$pipeline-p99]:-0}" ms
    cpu_lines "$rname" RD "$rd-$pipeline"
    for i in "${!BINS[@]}"; do
      use_build "$i"
      for clients in $SENDERS 1; do
        key=$KEY_PREFIX$mq-c$clients-w$inflight
        name="${LABELS[i]}_produce_1k_${mq}_flush_c${clients}_w${inflight}"
        line "$name" "${MQ[$key-tps]:-0}" msgs/s "${RD[$rd-$pipeline-tps]:-0}" "$rname"
        line "${name}_p50" "${MQ[$key-p50]:-0}" ms
        line "${name}_p99" "${MQ[$key-p99]:-0}" ms
        cpu_lines "$name" MQ "$key"
        if [ "${MQ[$key-failed]:-0}" != "0" ]; then line "${name}_send_failed" "${MQ[$key-failed]}" sends; fi
      done
    done
  done
  line "redis_peak_rss_${rd}" "$($PY -c "print(${RD[$rd-hwm]:-0} / 1024)")" MiB
  for i in "${!BINS[@]}"; do
    use_build "$i"
    key=$KEY_PREFIX$mq
    line "${LABELS[i]}_consume_1k_${mq}_flush" "${MQ[$key-consume-tps]:-0}" msgs/s
    line "${LABELS[i]}_consume_1k_${mq}_flush_mb" "$($PY -c "print(${MQ[$key-consume-tps]:-0} * 1024 / 1e6)")" MB/s
    line "${LABELS[i]}_peak_rss_${mq}_flush" "$($PY -c "print(${MQ[$key-hwm]:-0} / 1024)")" MiB \
        "$($PY -c "print(${RD[$rd-hwm]:-0} / 1024)")" "redis_peak_rss_${rd}"
    line "${LABELS[i]}_peak_rss_anon_${mq}_flush" "$($PY -c "print(${MQ[$key-anon]:-0} / 1024)")" MiB \
        "$($PY -c "print(${RD[$rd-hwm]:-0} / 1024)")" "redis_peak_rss_${rd}"
  done
done
first=
for n in $TOPIC_COUNTS; do
  name="${BROKER_LABEL}_produce_1k_async_flush_c${SENDERS}_w${SENDERS}_topics$n"
  if [ -z "$first" ]; then first=$n; fi
  line "$name" "${MQ[topics$n-tps]:-0}" msgs/s "${MQ[topics$first-tps]:-0}" \
      "${BROKER_LABEL}_produce_1k_async_flush_c${SENDERS}_w${SENDERS}_topics$first"
  line "${name}_p99" "${MQ[topics$n-p99]:-0}" ms
  if [ "${MQ[topics$n-failed]:-0}" != "0" ]; then line "${name}_send_failed" "${MQ[topics$n-failed]}" sends; fi
  line "${BROKER_LABEL}_peak_rss_topics$n" "$($PY -c "print(${MQ[topics$n-hwm]:-0} / 1024)")" MiB \
      "$($PY -c "print(${MQ[topics$first-hwm]:-0} / 1024)")" "${BROKER_LABEL}_peak_rss_topics$first"
  line "${BROKER_LABEL}_peak_rss_anon_topics$n" "$($PY -c "print(${MQ[topics$n-anon]:-0} / 1024)")" MiB \
      "$($PY -c "print(${MQ[topics$first-anon]:-0} / 1024)")" "${BROKER_LABEL}_peak_rss_anon_topics$first"
  line "${BROKER_LABEL}_server_cpu_topics$n" "${MQ[topics$n-cpu]:-0}" "%"
  line "${BROKER_LABEL}_create_topics$n" "${MQ[topics$n-create-s]:-0}" s
done
