#!/usr/bin/env bash
# The rsocket API cases (cases.hpp) in the soft-RoCE VM (tools/vm-run.sh):
# each case's two roles on librdmacm's rsocket API and on riomesh, in every
# pairing, each side once as the listener and once as the connector.
# rsocket against rsocket checks the cases themselves.
#
# Usage: rsocket_interop.sh PATH/TO/rsocket_peer PATH/TO/riomesh_peer
set -u
declare -A bin=([rsocket]=$1 [riomesh]=$2)
addr=${RIOMESH_RDMA_ADDR:?run inside tools/vm-run.sh}
port=7700 failed=0 runs=0 limit=90

run_pair() {  # CASE ROLE_A IMPL_A ROLE_B IMPL_B  (A listens, B connects)
  local c=$1 ra=$2 ia=$3 rb=$4 ib=$5 log=/tmp/interop.$$ want_b=${6:-0}
  port=$((port + 1)); runs=$((runs + 1))
  rm -f /tmp/interop.ready
  timeout $limit "${bin[$ia]}" "$c" "$ra" -b "$addr" -p $port -r /tmp/interop.ready \
    >"$log.a" 2>&1 & local pa=$!
  for _ in $(seq 100); do [[ -e /tmp/interop.ready ]] && break; sleep 0.1; done
  timeout $limit "${bin[$ib]}" "$c" "$rb" -s "$addr" -p $port >"$log.b" 2>&1; local rcb=$?
  wait $pa; local rca=$?
  local name="$c: $ia $ra (listens) / $ib $rb (connects)"
  if [[ $rca == 0 && $rcb == "$want_b" ]]; then
    echo "ok:   $name"
  else
    failed=$((failed + 1))
    echo "FAIL: $name (exit codes $rca / $rcb; 124: timed out)"
    sed 's/^/      /' "$log.a" "$log.b"
  fi
  rm -f "$log.a" "$log.b"
}

for pair in "rsocket rsocket" "riomesh rsocket" "rsocket riomesh" "riomesh riomesh"; do
  read -r x y <<<"$pair"
  for spec in "ordering writer reader" "maps writer reader" "shutdown first second" \
              "close streamer closer"; do
    read -r c r1 r2 <<<"$spec"
    run_pair "$c" "$r1" "$x" "$r2" "$y"   # x's role listens
    run_pair "$c" "$r2" "$y" "$r1" "$x"   # y's role listens
  done
  # A closer that exits without closing: only a riomesh streamer can notice
  # (rsockets without keepalive waits for the credit that never comes).
  [[ $x == riomesh ]] && run_pair close streamer "$x" vanish "$y"
  # Every pairing reads to end of stream and polls there.
  run_pair eof sender "$x" poller "$y"
  run_pair eof poller "$y" sender "$x"
  # A riomesh writer into a withdrawn map, facing either mapper (a librdmacm
  # v44 writer is not held to it: see README, interop notes).
  if [[ $y == riomesh ]]; then
    run_pair unmapped mapper "$x" writer "$y"
    run_pair unmapped writer "$y" mapper "$x"
    run_pair edge mapper "$x" writer "$y"
  fi
done
# Bytes sent after the sender's own shutdown: librdmacm's rsend sends them,
# riomesh drops and counts them and still answers in full.
for x in rsocket riomesh; do
  run_pair late shutter rsocket answerer "$x"
  run_pair late answerer "$x" shutter rsocket
done
run_pair late shutter riomesh answerer rsocket
# A librdmacm writer past the end of the entry spins until killed (exit 124);
# the riomesh mapper must have done no work for it meanwhile.
limit=10 run_pair edge mapper riomesh writer rsocket 124
echo "rsocket API interop: $((runs - failed)) passed, $failed failed"
exit $((failed > 0))
