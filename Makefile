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

.PHONY: all setup configure build demo crash-demo report-screenshot test ctest pytest bench sanitize clean

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
