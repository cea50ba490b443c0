# mqlab: the two Quick start commands and their helpers.
#   make demo   install what is missing, build, run the main job
#   make test   install what is missing, build, run every test (ctest + pytest)
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PYTEST = /usr/bin/python3 -m pytest

.PHONY: all setup configure build demo test ctest pytest bench sanitize clean

all: build

setup:
	@scripts/setup-deps.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > $(BUILD_DIR).configure.log 2>&1 \
	  || (cat $(BUILD_DIR).configure.log; exit 1)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	$(BUILD_DIR)/bin/storage_crash_demo

ctest: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

pytest: build
	MQLAB_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTEST) -q pytests/

test: ctest pytest

bench: build
	$(BUILD_DIR)/bin/store_bench

# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize:
	$(MAKE) test BUILD_DIR=build-asan BUILD_TYPE=Debug CMAKE_FLAGS="-DMQLAB_SANITIZE=address,undefined"

clean:
	rm -rf $(BUILD_DIR) build-asan

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
