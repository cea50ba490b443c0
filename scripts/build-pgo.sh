#!/usr/bin/env bash
# build-pgo.sh: the profile-guided build (`make pgo`) of mqsim, mqbroker,
# mqnamesrv and mqadmin (and of sim_bench, store_bench and page_cache_fill,
# which make bench runs from the same folder), in three steps:
#   1. an instrumented build of mqsim (-DMQLAB_PGO=generate, CMakeLists.txt);
#   2. training: that mqsim runs the standard benchmark scenario and the
#      topology comparison (every topology, flush type and fault kind), which
#      writes how often each branch and call ran into the profile;
#   3. the same build directory compiled with the profile (-DMQLAB_PGO=use)
#      and linked with link-time optimization.
# The simulator runs the broker's own code (store, processors, remoting
# codec, client library), so mqbroker and mqadmin are built with the counts
# of the same functions; only the real Env (Asio, POSIX files) is untrained,
# and compiles as without a profile.
# Then a check that optimization changed nothing but speed: the plain and the
# profile-guided mqsim must give the standard scenario the same trace and
# history digests (both are deterministic in the seed, whatever the compiler
# did). Exits non-zero when a step fails or the digests differ. Run again
# with no source changed since its last complete build, it does nothing.
#
# Usage: scripts/build-pgo.sh [PLAIN_BUILD_DIR [PGO_BUILD_DIR]]
#   (defaults build and build-pgo; the plain build must have bin/mqsim).
# Environment: JOBS (default nproc). On 2 CPUs the instrumented build takes
# about 3 minutes from nothing, the profile-using one (with link-time
# optimization, CMakeLists.txt) about 4. Both go through ccache, so after a
# change the instrumented one recompiles only what changed, and the
# profile-using one what changed or now runs differently (its profile
# changed); the seven link-time-optimizing links (about 2 minutes) it
# always redoes.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
abs() { case "$1" in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }
PLAIN_DIR=$(abs "${1:-build}")
PGO_DIR=$(abs "${2:-build-pgo}")
PROFILE_DIR=$PGO_DIR/pgo-profile
JOBS=${JOBS:-$(nproc)}
# store_bench and sim_bench for make bench; page_cache_fill for broker_bench.
TARGETS=(mqsim mqbroker mqnamesrv mqadmin sim_bench store_bench page_cache_fill)
STANDARD=$ROOT/scenarios/bench/standard.yaml

# What the build was made from: the content of every file the compiler or
# the training reads (tracked or new: the CMake files, C++ sources and
# headers, the scenarios the training runs, this script and its specs
# file) and the compiler's version. Nothing else: an edit of a benchmark
# script, a test or the README changes no binary, and retraining for it
# cost make bench five minutes.
# Fails outside a git checkout (then it always builds). In path order:
# git lists tracked files before new ones, so committing a new file
# changed the stamp (and retrained) though no content had.
BUILD_INPUTS=('CMakeLists.txt' '*.cmake' '*.cc' '*.h' '*.cxx' 'scenarios/*' 'scripts/build-pgo.sh'
              'scripts/*.specs')
source_stamp() {
  git -C "$ROOT" rev-parse --verify -q HEAD > /dev/null || return 1
  {
    git -C "$ROOT" ls-files -z --cached --others --exclude-standard -- "${BUILD_INPUTS[@]}" | LC_ALL=C sort -z |
      (cd "$ROOT" && xargs -0 -r sha256sum 2> /dev/null)
    c++ --version | head -1
  } | sha256sum | cut -d' ' -f1
}

all_built() {
  local target
  for target in "${TARGETS[@]}"; do [ -x "$PGO_DIR/bin/$target" ] || return 1; done
}

# All in one function, read whole before it runs: bash reads a script as it
# goes, so an edit of this file during a build would otherwise run garbage.
main() {
  if [ ! -x "$PLAIN_DIR/bin/mqsim" ]; then
    echo "build-pgo: $PLAIN_DIR/bin/mqsim is missing: build the plain tree first (make build)" >&2
    exit 2
  fi
  mkdir -p "$PGO_DIR"
  # Nothing changed since the last complete build (the same files, the
  # same compiler): done. Any change retrains and rebuilds everything
  # (ccache, not this script, tells which objects a new profile changes).
  local stamp="" stamp_file=$PGO_DIR/pgo-source-stamp
  stamp=$(source_stamp) || stamp=""
  if [ -n "$stamp" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] &&
     all_built; then
    echo "build-pgo: $PGO_DIR is up to date (sources unchanged since its build)" >&2
    return 0
  fi
  rm -f "$stamp_file"
  TRAIN_DIR=$(mktemp -d /tmp/mqlab-pgo-train-XXXXXX)
  trap 'rm -rf "$TRAIN_DIR"' EXIT

  configure() {  # generate | use
    cmake -S "$ROOT" -B "$PGO_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMQLAB_PGO="$1" \
      -DMQLAB_PGO_DIR="$PROFILE_DIR" > "$PGO_DIR.$1.configure.log" 2>&1 \
      || { cat "$PGO_DIR.$1.configure.log" >&2; exit 1; }
  }

  # mqsim exits 1 when a run fails an expectation (a finding, not an error:
  # the topology matrix has configurations that lose messages by design).
  # The same training gives the same profile files, so that the
  # profile-using build's ccache (below) finds an object whose source and
  # counts did not change: the runs are deterministic, but gcc also
  # profiles values (which pointers a call sees, their alignment), so the
  # address space is not randomized (setarch -R) and the environment is
  # always the same few variables; the comparison runs one seed at a time
  # (--jobs 1), so its runs' counts merge in one order.
  run_sim() {
    local status=0
    local fixed=(env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR=/tmp)
    if command -v setarch > /dev/null; then fixed+=(setarch "$(uname -m)" -R); fi
    "${fixed[@]}" "$@" > /dev/null || status=$?
    if [ "$status" -gt 1 ]; then
      echo "build-pgo: '$*' exited $status" >&2
      exit 1
    fi
  }

  echo "build-pgo: 1/3 instrumented build in $PGO_DIR" >&2
  start=$SECONDS
  configure generate
  cmake --build "$PGO_DIR" -j "$JOBS" --target mqsim
  rm -rf "$PROFILE_DIR"  # counts from an older tree would mislead the compiler
  echo "build-pgo: instrumented build took $((SECONDS - start)) s" >&2

  echo "build-pgo: 2/3 training" >&2
  start=$SECONDS
  run_sim "$PGO_DIR/bin/mqsim" run "$STANDARD" --seed 1 --json "$TRAIN_DIR/standard.json"
  run_sim "$PGO_DIR/bin/mqsim" compare "$ROOT/scenarios/topology-matrix.yaml" --jobs 1 --no-render \
    --out "$TRAIN_DIR/compare"
  profiles=$(find "$PROFILE_DIR" -name '*.gcda' | wc -l)
  if [ "$profiles" -eq 0 ]; then
    echo "build-pgo: the training wrote no profile into $PROFILE_DIR" >&2
    exit 1
  fi
  echo "build-pgo: training took $((SECONDS - start)) s, $profiles profile files" >&2
  # Each file's summary holds how many runs wrote counts (the standard
  # run, the comparison and each of its forked runs, which must write
  # theirs: sim/forked_runs.cc) and the program's largest count, summed over
  # the runs, which varies by a few counts from training to training: the
  # comparison reads its runs' reports, which say how many wall seconds each
  # took. Rounded down to three digits (less than 1% off what gcc takes for
  # hot), so that it does not make every file differ.
  /usr/bin/python3 - "$PROFILE_DIR" << 'PY'
import glob, os, struct, sys
for path in glob.glob(os.path.join(sys.argv[1], '*.gcda')):
    data = bytearray(open(path, 'rb').read())
    # magic, version, stamp, checksum; then the object summary record:
    # tag 0xa1000000, length 8, runs and sum_max (32 bits each).
    if data[:4] != b'adcg' or struct.unpack_from('<II', data, 16) != (0xa1000000, 8):
        sys.exit('build-pgo: ' + path + ': not a gcc 12 profile with its summary first')
    runs, sum_max = struct.unpack_from('<II', data, 24)
    if runs <= 2:
        sys.exit('build-pgo: ' + path + ': counts of ' + str(runs) + ' runs: the forked runs wrote none')
    unit = 10 ** max(len(str(sum_max)) - 3, 0)
    struct.pack_into('<I', data, 28, sum_max // unit * unit)
    with open(path, 'wb') as out:
        out.write(data)
PY
  # The profile-using build goes through ccache (CMakeLists.txt), which
  # hashes each object's profile with its source. ccache 4.7 looks for it
  # under the object's path in the profile folder (CMakeFiles/x.dir/y.gcda)
  # while gcc 12 names it by the object's whole path with every '/' made
  # '#'; finding none, ccache compiles uncached. So each profile gets a hard
  # link under the name ccache looks for: one file, the two cannot differ.
  local prefix gcda name relative
  prefix=$(printf '%s/' "$PGO_DIR" | tr '/' '#')
  for gcda in "$PROFILE_DIR"/*.gcda; do
    name=$(basename "$gcda")
    case $name in "$prefix"*) ;; *) continue ;; esac
    relative=$(printf '%s' "${name#"$prefix"}" | tr '#' '/')
    mkdir -p "$PROFILE_DIR/$(dirname "$relative")"
    ln -f "$gcda" "$PROFILE_DIR/$relative"
  done

  echo "build-pgo: 3/3 build with the profile" >&2
  start=$SECONDS
  configure use
  cmake --build "$PGO_DIR" -j "$JOBS" --target "${TARGETS[@]}"
  echo "build-pgo: profile-guided build took $((SECONDS - start)) s" >&2

  # The same run, both builds: equal digests, or the optimization changed
  # behaviour (undefined behaviour somewhere, or floating point).
  digests() {  # mqsim -> "trace history"
    rm -f "$TRAIN_DIR/check.json"  # a run that writes none must not pass on the last one's
    "$1" run "$STANDARD" --seed 1 --json "$TRAIN_DIR/check.json" > /dev/null || true
    /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["trace_digest"], r["history_digest"])' \
      "$TRAIN_DIR/check.json"
  }
  plain=$(digests "$PLAIN_DIR/bin/mqsim")
  guided=$(digests "$PGO_DIR/bin/mqsim")
  if [ "$plain" != "$guided" ]; then
    echo "build-pgo: the standard scenario's digests differ: plain build $plain, profile-guided $guided" >&2
    exit 1
  fi
  echo "build-pgo: same trace and history digests as the plain build ($plain)" >&2
  if [ -n "$stamp" ]; then echo "$stamp" > "$stamp_file"; fi
  echo "build-pgo: done: $PGO_DIR/bin/{$(IFS=,; echo "${TARGETS[*]}")}" >&2
}

main "$@"
