#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the pub/sub
# cluster (examples/pubsub/cluster: a broker, a publisher and two
# subscribers, one riomesh-node process each) on loopback with the best
# fabric the machine has (fabric: auto). Shows progress while it runs and
# ends with a table: messages, bytes, rate, p50 / p99 latency, payload bytes
# copied. Exit 0 when every subscriber got every sample intact.
#
# Usage: tools/main.sh [--vm] [pubsub-cluster options...]
#   --vm   run it inside the soft-RoCE VM instead (tools/vm-run.sh): rdma
#   e.g.   tools/main.sh --set pub-1.messages=10000,pub-1.size=64KiB
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/deps.sh"
# The build's progress, a line every 5 s (a first build takes minutes); its
# whole output is in build.log, whose end is shown if it fails.
log=$root/build.log
echo "main: building riomesh in $root/build (output in $log)" >&2
if ! "$root/tools/build.sh" "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" 2>&1 | tee "$log" |
  { last=-5; while IFS= read -r line; do
      if [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] && ((SECONDS - last >= 5)); then
        last=$SECONDS
        echo "main: build ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} steps (${SECONDS} s)" >&2
      fi
    done; }; then
  tail -40 "$log" >&2
  echo "main: the build failed (all of it: $log)" >&2
  exit 1
fi
launch=("$root/build/examples/pubsub/pubsub-cluster")
if [[ ${1:-} == --vm ]]; then
  shift
  # rxe serves the VM's own address, not 127.0.0.1 (tools/vm-run.sh).
  exec "$root/tools/vm-run.sh" -t 900 -- "${launch[@]}" --host 10.77.0.1 "$@" \
    "$root"/examples/pubsub/cluster/*.yaml
fi
exec "${launch[@]}" "$@" "$root"/examples/pubsub/cluster/*.yaml
