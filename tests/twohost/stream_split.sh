#!/usr/bin/env bash
# librdmacm's rstream and riostream against riomesh across the link between
# two hosts (run by two_hosts.sh): the server on host a, the client on host
# b, each program in both roles, every byte verified on both sides (-T v).
# The hosts meet through files in RIOMESH_TWOHOST_FLAGS: a says when its
# server listens, each says how its side ended; host b reports.
#
# Usage (on the machine): two_hosts.sh SECONDS stream_split.sh PATH/TO/stream_peer
set -u
peer=$1
flags=${RIOMESH_TWOHOST_FLAGS:?run through two_hosts.sh}
server=10.78.0.1 limit=120 port=7600 case=0 failed=0

# Host a: listening once the connection manager shows its port.
listening() {
  for _ in $(seq 200); do
    rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr $server:$1 " && return 0
    sleep 0.05
  done
  return 1
}
wait_for() {  # FILE
  for _ in $(seq $((limit * 10))); do [[ -e $1 ]] && return 0; sleep 0.1; done
  return 1
}

run_case() {  # NAME SERVER_CMD... -- CLIENT_CMD...
  local name=$1; shift
  case=$((case + 1)) port=$((port + 1))
  local server_cmd=() client_cmd=()
  while [[ $1 != -- ]]; do server_cmd+=("$1"); shift; done; shift
  client_cmd=("$@")
  if [[ $RIOMESH_VM_HOST == a ]]; then
    timeout $limit "${server_cmd[@]}" -b "$server" -p $port >/dev/null & local s=$!
    listening $port || echo "host a: $name: the server never listened"
    touch "$flags/ready-$case"
    wait $s; echo $? >"$flags/a-$case"
  else
    wait_for "$flags/ready-$case"
    timeout $limit "${client_cmd[@]}" -s "$server" -p $port >/dev/null; local rc=$?
    wait_for "$flags/a-$case"
    local ra; ra=$(cat "$flags/a-$case" 2>/dev/null || echo none)
    if [[ $ra == 0 && $rc == 0 ]]; then
      echo "ok:   $name"
    else
      failed=$((failed + 1))
      echo "FAIL: $name (exit codes: server $ra, client $rc; 124: timed out)"
    fi
  fi
}

for tool in rstream riostream; do
  flag=(); [[ $tool == riostream ]] && flag=(-i)
  for spec in "4096 50 2" "1048576 8 2"; do
    read -r size count iters <<<"$spec"
    opts=(-S "$size" -C "$count" -I "$iters")
    run_case "$tool server on host a, riomesh client on host b, $size B" \
      "$tool" "${opts[@]}" -T v -T b -- "$peer" "${flag[@]}" "${opts[@]}" -v
    run_case "riomesh server on host a, $tool client on host b, $size B" \
      "$peer" "${flag[@]}" "${opts[@]}" -v -- "$tool" "${opts[@]}" -T v -T b
  done
done
[[ $RIOMESH_VM_HOST == b ]] && echo "across the link: $((case - failed)) passed, $failed failed"
exit $((failed > 0))
