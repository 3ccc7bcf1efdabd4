#!/usr/bin/env bash
# rstream (librdmacm's own rsocket program) against a riomesh raw rdma
# channel, in both roles, at 64 B to 1 MiB, with rstream in blocking and in
# non-blocking mode, every byte verified on both sides. Runs in the VM
# (tools/vm-run.sh), where RIOMESH_RDMA_ADDR is the soft-RoCE address.
#
# Usage: rstream_interop.sh PATH/TO/rstream_peer
set -u
peer=$1
addr=${RIOMESH_RDMA_ADDR:?run inside tools/vm-run.sh}
port=7500 failed=0 runs=0

check() {  # NAME RC...
  local name=$1; shift
  for rc in "$@"; do
    if [[ $rc != 0 ]]; then echo "FAIL: $name (exit codes $*)"; failed=$((failed + 1)); return; fi
  done
  echo "ok:   $name"
}

# size count iterations: small enough for an emulated CPU, large enough to
# wrap the receive rings many times over.
for spec in "64 100 2" "4096 50 2" "65536 20 2" "1048576 4 2"; do
  read -r size count iters <<<"$spec"
  for mode in b n; do
    opts=(-S "$size" -C "$count" -I "$iters")
    port=$((port + 1))
    timeout 120 rstream -b "$addr" -p "$port" "${opts[@]}" -T v -T "$mode" >/dev/null & rs=$!
    timeout 120 "$peer" -s "$addr" -p "$port" "${opts[@]}" -v >/dev/null; pc=$?
    wait "$rs"; check "rstream -T $mode server, riomesh client, $size B" "$pc" "$?"
    port=$((port + 1))
    rm -f /tmp/peer.ready
    timeout 120 "$peer" -b "$addr" -p "$port" "${opts[@]}" -v -r /tmp/peer.ready >/dev/null & ps=$!
    for _ in $(seq 100); do [[ -e /tmp/peer.ready ]] && break; sleep 0.1; done
    timeout 120 rstream -s "$addr" -p "$port" "${opts[@]}" -T v -T "$mode" >/dev/null; rc=$?
    wait "$ps"; check "riomesh server, rstream -T $mode client, $size B" "$rc" "$?"
    runs=$((runs + 2))
  done
done
echo "rstream interop: $((runs - failed)) passed, $failed failed"
exit $((failed > 0))
