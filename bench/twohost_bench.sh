#!/usr/bin/env bash
# actor_bench's rdma contenders across the link between two hosts: riomesh,
# rstream, riostream and perftest, every server on host a (through
# `actor_bench agent`), every client on host b, one run of each VM.
#   tests/twohost/two_hosts.sh 2400 bench/twohost_bench.sh BUILD_DIR [actor_bench options]
# e.g. --reps 3 --only "8 B". Host b prints the tables.
set -u
build=${1:?usage: twohost_bench.sh BUILD_DIR [actor_bench options]}; shift
bench=$build/bench/actor_bench
flags=${RIOMESH_TWOHOST_FLAGS:?run through tests/twohost/two_hosts.sh}
port=7399
if [[ $RIOMESH_VM_HOST == a ]]; then
  "$bench" agent "$RIOMESH_RDMA_ADDR" $port >/dev/null & agent=$!
  # Serving until host b is done.
  while [[ ! -e $flags/b ]]; do sleep 0.5; done
  kill $agent
  exit 0
fi
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/10.78.0.1/$port) 2>/dev/null && break
  sleep 0.2
done
"$bench" --no-scale --servers-at 10.78.0.1:$port "$@"; rc=$?
touch "$flags/b"
exit $rc
