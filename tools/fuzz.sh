#!/usr/bin/env bash
# Builds the libFuzzer programs with clang (AddressSanitizer and UBSan on)
# into build-fuzz/ and runs each for a while from its seed corpus.
#
# Usage: tools/fuzz.sh [-t SECONDS] [TARGET...]   (default 60 s each; all targets)
#   tools/fuzz.sh -t 20                  the short run the test command does
#   tools/fuzz.sh -t 3600 tcp_frames     a long run of one target
# Targets: envelope, tcp_frames, engine, config (tests/fuzz/NAME_fuzz.cpp).
# New corpus entries go to build-fuzz/corpus/NAME; an input that fails is
# written to build-fuzz/artifacts/ and the run fails. Keep it as a
# regression test: copy it to tests/fuzz/corpus/NAME/crash-<what>, fix the
# bug, and `ctest -R 'fuzz corpus'` replays it from then on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60
if [[ ${1:-} == -t ]]; then seconds=$2; shift 2; fi
targets=("$@")
((${#targets[@]})) || targets=(envelope tcp_frames engine config)

"$root/tools/deps.sh"
dir=$root/build-fuzz
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f $dir/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DRIOMESH_FUZZ=ON \
    -DRIOMESH_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
fi
# Only the fuzzers and what they link: not CAF's runtime, not the tests.
cmake --build "$dir" --parallel "$(nproc)" --target "${targets[@]/%/_fuzzer}" >"$dir.build.log" 2>&1 ||
  { tail -50 "$dir.build.log" >&2; exit 1; }
mkdir -p "$dir/artifacts"
failed=()
for t in "${targets[@]}"; do
  mkdir -p "$dir/corpus/$t"
  echo "== fuzz $t for ${seconds} s"
  # The first directory is where libFuzzer adds what it finds; the seeds stay as they are.
  if ! "$dir/tests/fuzz/${t}_fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
      "$dir/corpus/$t" "$root/tests/fuzz/corpus/$t" 2>"$dir/$t.log"; then
    failed+=("$t")
    tail -40 "$dir/$t.log" >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs" "$dir/$t.log" || true
done
if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]} (inputs in $dir/artifacts)" >&2
  exit 1
fi
echo "fuzz: ${targets[*]}: no failure in ${seconds} s each"
