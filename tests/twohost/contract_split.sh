#!/usr/bin/env bash
# The channel contract suite (tests/integration/channel_contract_test.cpp)
# across the link: the test on host a, each of its peer processes on host
# b, started, killed and reaped there through files in a folder both see
# (tests/integration/contract_peer.hpp says how).
#
# Usage (inside tools/vm-run.sh -2, through two_hosts.sh):
#   contract_split.sh CONTRACT_PROGRAM [doctest options...]
# RIOMESH_CHANNEL (rdma or tcp) chooses the channel, on both hosts.
set -u
bin=$1; shift
dir=${RIOMESH_TWOHOST_FLAGS:?run through two_hosts.sh}/contract
mkdir -p "$dir"

if [[ $RIOMESH_VM_HOST == a ]]; then
  RIOMESH_CONTRACT_REMOTE=$dir RIOMESH_CONTRACT_ADDR=$RIOMESH_RDMA_ADDR "$bin" "$@"
  rc=$?
  touch "$dir/done"  # also when the test died without saying so
  exit $rc
fi

# Host b: runs peer N until it ends or its .kill file appears.
run_peer() {
  local n=$1 spec where
  { read -r spec; read -r where; } <"$dir/$n.job"
  RIOMESH_CONTRACT_PEER=$spec RIOMESH_CONTRACT_AT=$where "$bin" & local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    [[ -e $dir/$n.kill ]] && kill -9 "$pid" 2>/dev/null
    sleep 0.02
  done
  wait "$pid" 2>/dev/null  # (no "Killed" notice from the shell)
  local rc=$?
  echo "host b: peer $n ($spec) ended: $rc"
  echo $rc >"$dir/$n.exit.tmp" && mv "$dir/$n.exit.tmp" "$dir/$n.exit"
}

declare -A started
until [[ -e $dir/done ]]; do
  for job in "$dir"/*.job; do
    [[ -e $job ]] || continue
    n=$(basename "$job" .job)
    [[ -n ${started[$n]:-} ]] && continue
    started[$n]=1
    run_peer "$n" &
  done
  sleep 0.02
done
wait
