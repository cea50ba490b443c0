#!/usr/bin/env bash
# sim_ab.sh: the simulator's speed at two commits, measured side by side.
#
# Builds each commit's profile-guided tree the way `make pgo` does
# (scripts/build-pgo.sh, from a git worktree of that commit), then runs
# their sim_bench alternately (--skip-idle --skip-scaling --repeat 3), so
# that a host whose load drifts slows both alike, and prints one line per
# figure:
#   sim_ab_pair<i>_base <us> us
#   sim_ab_pair<i>_candidate <us> us ratio=<candidate/base> vs sim_ab_pair<i>_base
#   sim_ab_base_cpu_us_per_msg <mean> us
#   sim_ab_candidate_cpu_us_per_msg <mean> us ratio=<candidate/base> vs sim_ab_base_cpu_us_per_msg
#   sim_ab_candidate_faster <count> pairs (of sim_ab_pairs <n> pairs)
# A single `make bench` compares a commit with the previous run's figures,
# taken on another day's host load; a change worth 1-3% is only seen this
# way (README, Performance: single runs swing 5.5-7.0 us a message).
#
# Usage: bench/sim_ab.sh BASE [CANDIDATE [PAIRS]]
#   BASE, CANDIDATE: commits (CANDIDATE defaults to HEAD); PAIRS: default 8.
# Environment: JOBS (build parallelism, default nproc), WORK (default
# /tmp/mqlab-sim-ab: worktrees and trees, reused by a later run for the
# same commit), PLAIN_BUILD_DIR (default build: build-pgo.sh compares the
# trained mqsim's digests with that build's; a candidate that changes the
# digests on purpose makes it exit non-zero after building, which this
# script accepts when the trees' programs exist).
# About 7 minutes a tree on 2 CPUs (ccache makes a rebuilt commit faster),
# then 6 seconds a pair. Run nothing else meanwhile.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:?usage: bench/sim_ab.sh BASE [CANDIDATE [PAIRS]]}
CANDIDATE=${2:-HEAD}
PAIRS=${3:-8}
WORK=${WORK:-/tmp/mqlab-sim-ab}
PLAIN_BUILD_DIR=${PLAIN_BUILD_DIR:-$ROOT/build}
export JOBS=${JOBS:-$(nproc)}
case "$PAIRS" in '' | *[!0-9]*) echo "sim_ab: PAIRS must be a number, not '$PAIRS'" >&2; exit 2 ;; esac
[ -x "$PLAIN_BUILD_DIR/bin/mqsim" ] || { echo "sim_ab: no $PLAIN_BUILD_DIR/bin/mqsim (make build first)" >&2; exit 2; }
mkdir -p "$WORK"

# The tree of one commit: $WORK/<sha>/tree (sources) and $WORK/<sha>/pgo.
# sim_bench reads its scenario from the sources it was built from, so the
# worktree stays while its tree is used.
tree_of() {
  local sha
  sha=$(git -C "$ROOT" rev-parse --verify --quiet "$1^{commit}") || { echo "sim_ab: no commit '$1'" >&2; exit 2; }
  local dir=$WORK/$sha
  if [ ! -d "$dir/tree" ]; then
    git -C "$ROOT" worktree add --detach "$dir/tree" "$sha" > /dev/null
  fi
  if [ ! -x "$dir/pgo/bin/sim_bench" ]; then
    echo "sim_ab: building $1 ($sha) profile-guided in $dir/pgo" >&2
    (cd "$dir/tree" && scripts/build-pgo.sh "$PLAIN_BUILD_DIR" "$dir/pgo" > "$dir/build.log" 2>&1) ||
      echo "sim_ab: build-pgo.sh for $1 exited non-zero (see $dir/build.log); using its programs" >&2
    [ -x "$dir/pgo/bin/sim_bench" ] || { echo "sim_ab: no sim_bench built for $1 (see $dir/build.log)" >&2; exit 1; }
  fi
  echo "$dir/pgo"
}

# CPU microseconds a message: the median of sim_bench's three repeats.
us_per_msg() {
  "$1/bin/sim_bench" --skip-idle --skip-scaling --repeat 3 2> /dev/null |
    awk '$1 == "sim_standard_cpu_us_per_msg" { print $2 }'
}

base_tree=$(tree_of "$BASE")
candidate_tree=$(tree_of "$CANDIDATE")
base_sum=0
candidate_sum=0
faster=0
for i in $(seq 1 "$PAIRS"); do
  # Alternating which goes first: a host that speeds up or slows down
  # during a pair favours neither side.
  if [ $((i % 2)) -eq 1 ]; then
    b=$(us_per_msg "$base_tree"); c=$(us_per_msg "$candidate_tree")
  else
    c=$(us_per_msg "$candidate_tree"); b=$(us_per_msg "$base_tree")
  fi
  [ -n "$b" ] && [ -n "$c" ] || { echo "sim_ab: sim_bench printed no figure in pair $i" >&2; exit 1; }
  echo "sim_ab_pair${i}_base $b us"
  awk -v i="$i" -v b="$b" -v c="$c" 'BEGIN { printf "sim_ab_pair%d_candidate %s us ratio=%.3f vs sim_ab_pair%d_base\n", i, c, c / b, i }'
  base_sum=$(awk -v s="$base_sum" -v v="$b" 'BEGIN { print s + v }')
  candidate_sum=$(awk -v s="$candidate_sum" -v v="$c" 'BEGIN { print s + v }')
  faster=$(awk -v n="$faster" -v b="$b" -v c="$c" 'BEGIN { print n + (c < b ? 1 : 0) }')
done
awk -v b="$base_sum" -v c="$candidate_sum" -v n="$PAIRS" -v f="$faster" 'BEGIN {
  printf "sim_ab_base_cpu_us_per_msg %.3f us\n", b / n
  printf "sim_ab_candidate_cpu_us_per_msg %.3f us ratio=%.3f vs sim_ab_base_cpu_us_per_msg\n", c / n, c / b
  printf "sim_ab_pairs %d pairs\n", n
  printf "sim_ab_candidate_faster %d pairs\n", f
}'
echo "sim_ab: trees kept in $WORK (git worktree prune after removing it)" >&2
