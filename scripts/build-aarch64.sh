#!/usr/bin/env bash
# Cross-builds ember for ARM64 Linux into DIR and writes DIR/run, which runs an aarch64 program
# under qemu-aarch64 (EMBER_QEMU_CPU picks the CPU; default "max": dotprod and i8mm).
#   scripts/build-aarch64.sh DIR [cmake targets...]     (all targets when none are named)
#   DIR/run DIR/bin/ember-chat -m model.gguf
# Installs g++-aarch64-linux-gnu and qemu-user when missing. Debian's arm64 sentencepiece cannot
# be installed beside the amd64 one, so the arm64 packages are downloaded (apt-get download) and
# unpacked (dpkg-deb -x) into DIR/sysroot, which the toolchain file and DIR/run use.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/build-aarch64.sh DIR [targets...]" >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)
shift

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
need=()
command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
if ((${#need[@]})); then
  echo "build-aarch64: installing ${need[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

sysroot="$dir/sysroot"
packages=(libsentencepiece0 libsentencepiece-dev libprotobuf-lite32 libpcre2-8-0 libpcre2-dev)
if [ ! -f "$sysroot/.complete" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "build-aarch64: adding the arm64 package architecture (for apt-get download)" >&2
    $sudo_cmd dpkg --add-architecture arm64
    $sudo_cmd apt-get update -qq
  fi
  debs="$dir/debs"
  mkdir -p "$debs" "$sysroot"
  args=()
  for p in "${packages[@]}"; do args+=("$p:arm64"); done
  (cd "$debs" && apt-get download -qq "${args[@]}" 2>/dev/null) || {
    $sudo_cmd apt-get update -qq
    (cd "$debs" && apt-get download -qq "${args[@]}")
  }
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  # The -dev packages link libX.so to an absolute /usr/lib path: point it into the sysroot.
  for link in "$sysroot"/usr/lib/aarch64-linux-gnu/*.so; do
    target=$(readlink "$link" || true)
    case "$target" in /*) ln -sf "$sysroot$target" "$link" ;; esac
  done
  touch "$sysroot/.complete"
fi

cat > "$dir/run" <<RUN
#!/bin/sh
# Runs an aarch64 program of this build under qemu-aarch64 (EMBER_QEMU_CPU: max, cortex-a53, ...).
exec qemu-aarch64 -cpu "\${EMBER_QEMU_CPU:-max}" -L /usr/aarch64-linux-gnu \\
  -E LD_LIBRARY_PATH="$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu" "\$@"
RUN
chmod +x "$dir/run"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DEMBER_AARCH64_SYSROOT="$sysroot" -DCMAKE_CROSSCOMPILING_EMULATOR="$dir/run" \
  -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_BENCHMARKS=OFF -DEMBER_INSTALL=OFF \
  "${launcher[@]}" ${EXTRA_CMAKE_ARGS:-} >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$dir" -j "$(nproc)" --target "$@"
else
  cmake --build "$dir" -j "$(nproc)"
fi
echo "build-aarch64: built into $dir; run programs with $dir/run" >&2
