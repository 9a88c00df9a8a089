#!/usr/bin/env bash
# Installs ember's build dependencies (Debian 12 packages) and builds ember in ./build.
# Idempotent: packages already present are not reinstalled; the build is incremental.
#   scripts/setup.sh            install + Release build
#   BUILD_DIR=... BUILD_TYPE=... EXTRA_CMAKE_ARGS=... scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git libeigen3-dev libxsimd-dev catch2
          libsentencepiece-dev libpcre2-dev qemu-user nlohmann-json3-dev python3
          libcpp-httplib-dev)
# More packages from the caller (scripts/test.sh adds what only the tests use).
read -r -a extra_packages <<< "${EXTRA_PACKAGES:-}"
packages+=("${extra_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" ${EXTRA_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
echo "setup: built ember in $build_dir (binaries in $build_dir/bin)" >&2
