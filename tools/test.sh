#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors,
# runs the unit tests under AddressSanitizer + UBSan, fuzzes each libFuzzer
# target for 20 s, then the whole suite.
# ctest's summary of the whole suite is the last thing printed, or, if a
# test failed, the end of each failed test's output and the list of them.
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
rc=0
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@" || rc=$?
if ((rc != 0)); then
  # A long log is often read by its two ends: what each failed test said
  # of its failure, and the end of its output, are repeated here.
  echo "== the last lines each failed test printed (Testing/Temporary/LastTest.log)"
  awk -v keep=40 '
    /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name) }
    /^Output:$/ { n = 0; m = 0; getline; inside = 1; next }
    /^<end of output>$/ { inside = 0; next }
    inside {
      lines[n++ % keep] = $0
      if (m < 20 && /FAIL|ERROR|[Ee]rror|[Aa]ssert|[Ss]anitizer|[Tt]imed? ?out/) said[m++] = $0
    }
    /^Test Failed\.$/ || /^Test Fail Reason:$/ {
      print "---- " name
      if (m > 0) print "(its first lines that say what failed, then its last lines)"
      for (i = 0; i < m; ++i) print said[i]
      for (i = (n > keep ? n - keep : 0); i < n; ++i) print lines[i % keep]
    }' Testing/Temporary/LastTest.log || true
  echo "== the tests that failed"
  sed 's/^/\t/' Testing/Temporary/LastTestsFailed.log 2>/dev/null || true
fi
exit "$rc"
