#!/usr/bin/env bash
# Installs the Debian packages mqlab builds and tests with, and nothing when
# they are all present (so `make` stays fast and offline once set up).
set -euo pipefail

PACKAGES=(
  g++ cmake make ccache pkg-config
  libboost-dev libboost-program-options-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev zlib1g-dev
  libgoogle-perftools-dev  # tcmalloc, the programs' allocator (CMakeLists.txt says why)
  python3 python3-pytest
  python3-matplotlib python3-jsonschema
  clang libclang-rt-14-dev  # make fuzz: libFuzzer and clang's sanitizer runtimes
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing missing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
