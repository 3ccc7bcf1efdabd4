#!/usr/bin/env bash
# librdmacm's own rsocket programs against a riomesh raw_socket, run in the
# soft-RoCE VM (tools/vm-run.sh, which sets RIOMESH_RDMA_ADDR):
#   rstream   (send / recv)            both roles, 64 B to 1 MiB, -T b and -T n
#   riostream (riomap + riowrite)      both roles, 64 B to 1 MiB, -T b and -T n
# with every byte verified on both sides (-T v). A case that does not end
# within its time limit is reported with which side was still running.
#
# Usage: stream_interop.sh PATH/TO/stream_peer [rstream|riostream]...
set -u
peer=$1; shift
tools=("$@"); ((${#tools[@]})) || tools=(rstream riostream)
addr=${RIOMESH_RDMA_ADDR:?run inside tools/vm-run.sh}
port=7500 failed=0 runs=0 limit=120

check() {  # NAME PEER_RC TOOL_RC
  local name=$1 prc=$2 trc=$3
  runs=$((runs + 1))
  if [[ $prc == 0 && $trc == 0 ]]; then echo "ok:   $name"; return; fi
  failed=$((failed + 1))
  local why="exit codes: riomesh $prc, $tool $trc"
  [[ $prc == 124 ]] && why+=" (riomesh side timed out)"
  [[ $trc == 124 ]] && why+=" ($tool timed out)"
  echo "FAIL: $name ($why)"
}

for tool in "${tools[@]}"; do
  flag=(); [[ $tool == riostream ]] && flag=(-i)
  # size count iterations: small enough for an emulated CPU, large enough
  # to wrap the receive rings (rstream) and reuse the maps (riostream).
  for spec in "64 100 2" "4096 50 2" "65536 20 2" "1048576 4 2"; do
    read -r size count iters <<<"$spec"
    opts=(-S "$size" -C "$count" -I "$iters")
    for mode in b n; do
      ours=(); [[ $mode == n ]] && ours=(-n)
      port=$((port + 1))
      timeout $limit "$tool" -b "$addr" -p "$port" "${opts[@]}" -T v -T "$mode" >/dev/null & ts=$!
      timeout $limit "$peer" "${flag[@]}" -s "$addr" -p "$port" "${opts[@]}" -v "${ours[@]}" >/dev/null
      pc=$?; wait "$ts"; tc=$?
      check "$tool -T $mode server, riomesh client, $size B" $pc $tc
      port=$((port + 1))
      rm -f /tmp/peer.ready
      timeout $limit "$peer" "${flag[@]}" -b "$addr" -p "$port" "${opts[@]}" -v "${ours[@]}" \
        -r /tmp/peer.ready >/dev/null & ps=$!
      for _ in $(seq 100); do [[ -e /tmp/peer.ready ]] && break; sleep 0.1; done
      timeout $limit "$tool" -s "$addr" -p "$port" "${opts[@]}" -T v -T "$mode" >/dev/null
      tc=$?; wait "$ps"; pc=$?
      check "riomesh server, $tool -T $mode client, $size B" $pc $tc
    done
  done
done
echo "stream interop: $((runs - failed)) passed, $failed failed"
exit $((failed > 0))
