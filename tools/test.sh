#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors,
# runs the unit tests under AddressSanitizer + UBSan, fuzzes each libFuzzer
# target for 20 s, then the whole suite.
# ctest's summary of the whole suite is the last thing printed.
#
# Usage: tools/test.sh [ctest args...]   e.g. tools/test.sh -L unit
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/deps.sh"

# Line tables (-g1) are all a backtrace needs; full debug info of CAF's
# templates cost a third of the release build, and with -O2 half of the
# sanitizer build (callgrind and perf users build their own).
echo "== sanitizer build (address, undefined): unit and integration tests"
"$root/tools/build.sh" "$root/build-asan" -DRIOMESH_WERROR=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DRIOMESH_SANITIZE=address,undefined >/dev/null
# (not the package test: it builds a separate, unsanitized project)
(cd "$root/build-asan" && ctest -L 'unit|integration' -LE package --output-on-failure \
   --timeout 300 -j "$(nproc)")

echo "== fuzzing: 20 s per target from its seed corpus (tools/fuzz.sh)"
"$root/tools/fuzz.sh" -t 20

echo "== release build: all tests"
"$root/tools/build.sh" "$root/build" -DRIOMESH_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cd "$root/build"
# In parallel, but the VM suites, benches and load tests alone (RUN_SERIAL):
# a VM takes every core, and the others measure.
exec ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
