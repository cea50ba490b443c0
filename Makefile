# mqlab: the two Quick start commands and their helpers.
#   make demo   install what is missing, build, run the main job: the topology
#               comparison (mqsim compare) into $(COMPARE_DIR)
#   make test   install what is missing, build, run every test (ctest + pytest)
#   make crash-demo         the storage crash demo (SYNC_FLUSH vs ASYNC_FLUSH, one power cut)
#   make report-screenshot  the comparison page in headless Chromium, as a PNG beside it
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PYTEST = /usr/bin/python3 -m pytest

.PHONY: all setup configure build demo crash-demo report-screenshot test ctest pytest bench bench-clock bench-programs pgo sanitize tsan fuzz fuzz-ci fuzz-build clean

all: build

setup:
	@scripts/setup-deps.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > $(BUILD_DIR).configure.log 2>&1 \
	  || (cat $(BUILD_DIR).configure.log; exit 1)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job: every topology x flush type x fault of the matrix, each over
# its seeds, into a report folder (report.json, summary.md, summary.csv,
# index.html and the plots); then the Markdown summary's table. mqsim exits 1
# when a run failed (a finding, which the report shows and explains) and 2
# when it could not compare at all: only the latter fails the demo.
COMPARE_MATRIX ?= scenarios/topology-matrix.yaml
COMPARE_DIR ?= out/compare-topology-matrix

demo: build
	@status=0; $(BUILD_DIR)/bin/mqsim compare $(COMPARE_MATRIX) --out $(COMPARE_DIR) || status=$$?; \
	if [ $$status -ge 2 ]; then exit $$status; fi; \
	echo; echo "Markdown summary: $(COMPARE_DIR)/summary.md   the page: $(COMPARE_DIR)/index.html"; echo; \
	sed -n '/^## Acknowledged messages lost/,/^## The comparison/p' $(COMPARE_DIR)/summary.md | sed '$$d'

crash-demo: build
	$(BUILD_DIR)/bin/storage_crash_demo

# The comparison page as a person sees it: headless Chromium (Debian's
# chromium, installed here when missing: it is big, and no test needs it)
# renders index.html into $(SCREENSHOT). Not part of `make test` or CI.
SCREENSHOT ?= $(COMPARE_DIR)/screenshot.png
CHROMIUM_FLAGS = --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync

$(COMPARE_DIR)/index.html:
	$(MAKE) demo

report-screenshot: $(COMPARE_DIR)/index.html
	@if ! command -v chromium > /dev/null; then \
	  echo "report-screenshot: installing Debian's chromium"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium; \
	fi
	@profile=$$(mktemp -d); status=0; \
	chromium $(CHROMIUM_FLAGS) --user-data-dir=$$profile --screenshot=$(abspath $(SCREENSHOT)) \
	  --window-size=1400,3000 file://$(abspath $(COMPARE_DIR))/index.html > $$profile.log 2>&1 || status=$$?; \
	rm -rf $$profile; \
	if [ $$status -ne 0 ] || [ ! -s $(SCREENSHOT) ]; then cat $$profile.log; rm -f $$profile.log; echo "report-screenshot: chromium failed"; exit 1; fi; \
	rm -f $$profile.log; echo "report-screenshot: $(SCREENSHOT)"

# Both runners fail when they run nothing: ctest --no-tests=error, and
# pytest's own exit status 5 when it collects no test.
ctest: build
	cd $(BUILD_DIR) && ctest --output-on-failure --no-tests=error -j $(JOBS)

pytest: build
	MQLAB_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTEST) -q pytests/

test: ctest pytest

# The profile-guided build (scripts/build-pgo.sh): mqsim, sim_bench and the
# programs compiled with the branch and call counts of the simulator's own
# runs, into $(PGO_DIR) (about 7 minutes on 2 CPUs from nothing: two builds
# and the training). The simulator runs 1.3-1.4x as fast, mqbroker and mqadmin use a
# fifth less CPU per message; the check at its end proves the same runs give
# the same traces.
PGO_DIR ?= build-pgo
pgo: bench-programs
	JOBS=$(JOBS) scripts/build-pgo.sh $(BUILD_DIR) $(PGO_DIR)

# What make bench runs from the plain tree: the programs and benchmarks, not
# the test executables, whose links would add minutes after a change.
BENCH_PROGRAMS = mqsim mqbroker mqnamesrv mqadmin page_cache_fill raw_disk_bench store_bench sim_bench \
  replication_bench remoting_bench
bench-programs: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target $(BENCH_PROGRAMS)

# Every benchmark (store_bench, raw_disk_bench, sim_bench, replication_bench,
# broker_bench) into bench/results.md, in under 15 minutes with the
# profile-guided rebuild after a change (results.md's make_bench section
# says how long the builds and the benchmarks took); BENCH_LONG=1 adds the
# long scaling runs (16 GiB through the store, 600 simulated minutes).
# store_bench (ASYNC_FLUSH), sim_bench and broker_bench run the plain
# build's programs and the profile-guided one's (make pgo, built first).
# bench-clock, the first prerequisite, notes when the builds began, so the
# recipe can say how long they took (not a recursive make in the recipe:
# make -n would run that line, and with it every benchmark).
BENCH_CLOCK = $(BUILD_DIR)/bench-builds-began
bench-clock:
	@mkdir -p $(BUILD_DIR) && date +%s > $(BENCH_CLOCK)
bench: bench-clock bench-programs pgo
	BENCH_BUILD_SECONDS=$$(( $$(date +%s) - $$(cat $(BENCH_CLOCK)) )) \
	BUILD_DIR=$(abspath $(BUILD_DIR)) PGO_BUILD_DIR=$(abspath $(PGO_DIR)) bench/run_all.sh

# The whole test suite (ctest and pytest) under AddressSanitizer and
# UndefinedBehaviorSanitizer: `make test` in a second build folder
# (build-asan), gcc build type Sanitize (-O2 -g1, see CMakeLists.txt) with
# -DMQLAB_SANITIZE=address,undefined.
# A separate command: CI (.ci/run) runs the plain build. A report fails the test: UBSan is built
# -fno-sanitize-recover=all (see CMakeLists.txt), LeakSanitizer checks every
# process at exit, the fuzz targets' corpus replay (ctest's fuzz_replay.*)
# runs sanitized, and the pytests send the reports of the programs they
# start to files that fail the test (pytests/conftest.py; the programs are
# stopped with SIGTERM, so a broker's shutdown is checked too). Sanitized
# programs run 2-3x slower: the pytests' deadlines are multiplied by
# SANITIZE_TIMEOUT_SCALE (MQLAB_TIMEOUT_SCALE, pytests/real_cluster.py).
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SANITIZE_TIMEOUT_SCALE ?= 2
SANITIZE_DIR ?= build-asan
sanitize:
	@start=$$(date +%s); \
	$(SANITIZER_ENV) MQLAB_TIMEOUT_SCALE=$(SANITIZE_TIMEOUT_SCALE) $(MAKE) test BUILD_DIR=$(SANITIZE_DIR) BUILD_TYPE=Sanitize \
	  CMAKE_FLAGS="-DMQLAB_SANITIZE=address,undefined $(CMAKE_FLAGS)"; \
	status=$$?; echo "sanitize: exit $$status after $$(( $$(date +%s) - start )) s (build, ctest, pytest)"; exit $$status

# ThreadSanitizer over the real Env's threads (the file system's flush
# thread, the segment preparer's two, the file offloader, the network): gcc,
# build type Sanitize with -DMQLAB_SANITIZE=thread, env_test only (the
# broker core is single-threaded; env_test is what runs those threads).
TSAN_DIR ?= build-tsan
tsan: setup
	@cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=Sanitize -DMQLAB_SANITIZE=thread $(CMAKE_FLAGS) \
	  > $(TSAN_DIR).configure.log 2>&1 || (cat $(TSAN_DIR).configure.log; exit 1)
	@cmake --build $(TSAN_DIR) -j $(JOBS) --target env_test
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_DIR)/bin/env_test

# libFuzzer targets (fuzz/*.cc), built with clang under ASan + UBSan into
# $(FUZZ_DIR), each run for FUZZ_SECONDS from its checked-in seeds
# (fuzz/corpus/<target>/, read only) plus what earlier runs found
# ($(FUZZ_DIR)/corpus/<target>/). A crash, leak, UB report, timeout or
# out-of-memory stops the run and fails; the input is in
# $(FUZZ_DIR)/artifacts/. `make fuzz-ci` is a short run (30 s per target).
# Every build also replays each target's corpus plus deterministic mutants
# in ctest (fuzz_replay.*), without libFuzzer.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 120
FUZZ_TARGETS ?= remoting_frame request_header json_header message_codec commitlog_recovery ha_protocol scenario broker_conf
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

fuzz-build: setup
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DMQLAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  > $(FUZZ_DIR).configure.log 2>&1 || (cat $(FUZZ_DIR).configure.log; exit 1)
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzz_targets

fuzz: fuzz-build
	@set -e; mkdir -p $(FUZZ_DIR)/artifacts; for target in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$target; log=$(FUZZ_DIR)/fuzz-$$target.log; \
	  status=0; $(FUZZ_DIR)/bin/$${target}_fuzzer $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$$target- $(FUZZ_DIR)/corpus/$$target fuzz/corpus/$$target \
	    > $$log 2>&1 || status=$$?; \
	  if [ $$status -ne 0 ]; then tail -n 60 $$log; echo "fuzz: $$target failed (exit $$status); input in $(FUZZ_DIR)/artifacts/, log $$log"; exit 1; fi; \
	  echo "fuzz: $$target: $$(grep -E '^stat::number_of_executed_units' $$log | awk '{print $$2}') runs in $(FUZZ_SECONDS) s, no crash"; \
	done

fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=30

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(TSAN_DIR) $(FUZZ_DIR)

# The CI sweep: every example scenario (not the compare matrix) over a sample
# of seeds, swept twice. Fails when a seed fails (or a canary passes on any
# seed), or when the two sweeps disagree about a seed: mqsim merge refuses
# one seed with two results, so nondeterminism is caught the day it lands.
# Reports and summaries go to $(SWEEP_DIR).
SWEEP_SEEDS ?= 1-10
SWEEP_DIR ?= $(BUILD_DIR)/sweep
SWEEP_SCENARIOS ?= $(filter-out scenarios/topology-matrix.yaml,$(wildcard scenarios/*.yaml))

.PHONY: sim-sweep
sim-sweep: build
	@mkdir -p $(SWEEP_DIR)
	@set -e; for file in $(SWEEP_SCENARIOS); do \
	  name=$$(basename $$file .yaml); out=$(SWEEP_DIR)/$$name; \
	  case $$name in *canary*) want=1;; *) want=0;; esac; \
	  for pass in 1 2; do \
	    status=0; \
	    $(BUILD_DIR)/bin/mqsim sweep $$file --seeds $(SWEEP_SEEDS) --jobs $(JOBS) --json $$out.$$pass.json \
	      > $$out.$$pass.txt || status=$$?; \
	    if [ $$status -ne $$want ] || { [ $$want -eq 1 ] && ! grep -q ' runs: 0 passed,' $$out.$$pass.txt; }; then \
	      echo "sim-sweep: $$name: mqsim sweep exited $$status, expected $$want; see $$out.$$pass.txt"; exit 1; \
	    fi; \
	  done; \
	  status=0; $(BUILD_DIR)/bin/mqsim merge $$out.json $$out.1.json $$out.2.json > /dev/null || status=$$?; \
	  if [ $$status -eq 2 ]; then echo "sim-sweep: $$name: the two sweeps disagree (above)"; exit 1; fi; \
	  echo "sim-sweep: $$name: seeds $(SWEEP_SEEDS) as expected, twice, same digests"; \
	done
