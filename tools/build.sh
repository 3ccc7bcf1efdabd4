#!/usr/bin/env bash
# Configures and builds riomesh into a build directory (default: build/).
# Usage: tools/build.sh [BUILD_DIR [extra cmake args...]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}; shift || true
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
# Reconfigure only when there is no cache yet: cmake --build re-runs it when
# a CMakeLists.txt changes.
if [[ ! -f $dir/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$dir" "${generator[@]}" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
elif (($#)); then
  cmake "$dir" "$@" >/dev/null
fi
cmake --build "$dir" --parallel "$(nproc)"
