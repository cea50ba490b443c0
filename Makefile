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
