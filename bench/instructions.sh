#!/usr/bin/env bash
# Instructions per 8 B round trip, counted exactly by valgrind's callgrind
# (this machine's virtual CPU has no hardware counters, and its timings
# are noisy): for each contender, actor_bench's server and client run
# under callgrind twice, for SMALL and for LARGE round trips; the
# difference of the two runs' totals (both processes, every thread)
# divided by LARGE - SMALL is what one more round trip costs, set-up and
# tear-down cancelled out. Busy-polling is off (riomesh's polling_time 0;
# both actor contenders on CAF's sharing scheduler, which sleeps instead
# of spinning), or the counts would measure time spent waiting.
#
# Usage: bench/instructions.sh PATH/TO/actor_bench [CONTENDER...]
#   contenders: riomesh caf raw (the default: all three)
#   SMALL=200 LARGE=1200 in the environment change the counts;
#   KEEP=DIR keeps callgrind's files there, for callgrind_annotate.
set -euo pipefail
bench=${1:?usage: bench/instructions.sh PATH/TO/actor_bench [CONTENDER...]}
shift
kinds=("$@")
((${#kinds[@]})) || kinds=(riomesh caf raw)
small=${SMALL:-200} large=${LARGE:-1200}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is missing" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ACTOR_BENCH_POLLING_US=0 ACTOR_BENCH_MAX_POLLING_US=0 ACTOR_BENCH_POLICY=sharing

# Both processes' instructions for N round trips of KIND.
instructions() {  # KIND N
  local kind=$1 n=$2 tag=$work/$1-$2 port word
  coproc server {
    exec valgrind --tool=callgrind --callgrind-out-file="$tag.server.out" \
      "$bench" serve "$kind" 0 2>"$tag.server.log"
  }
  local server_pid=$server_PID
  read -r word port <&"${server[0]}" || { cat "$tag.server.log" >&2; return 1; }
  [[ $word == ready ]] || { echo "server said: $word $port" >&2; return 1; }
  # The client waits for a line on stdin once connected: the go.
  echo | valgrind --tool=callgrind --callgrind-out-file="$tag.client.out" \
    "$bench" drive "$kind" "$port" rtt 8 "$n" 1 >"$tag.client.txt" 2>"$tag.client.log" ||
    { cat "$tag.client.log" >&2; return 1; }
  exec {server[1]}>&-
  wait "$server_pid" || true
  local total=0 f v
  for f in "$tag".server.out* "$tag".client.out*; do
    v=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$f" | head -1)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}

keep() { [[ -z ${KEEP:-} ]] || { mkdir -p "$KEEP" && cp "$work"/*.out* "$KEEP"/; }; }
trap 'keep; rm -rf "$work"' EXIT

printf '%-10s %16s %16s %14s\n' contender "Ir ($small rt)" "Ir ($large rt)" "Ir per rt"
for kind in "${kinds[@]}"; do
  a=$(instructions "$kind" "$small")
  b=$(instructions "$kind" "$large")
  printf '%-10s %16d %16d %14d\n' "$kind" "$a" "$b" $(((b - a) / (large - small)))
done
