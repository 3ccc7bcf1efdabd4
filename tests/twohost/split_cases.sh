# Cases across the link between two hosts (run by two_hosts.sh), sourced
# by the scripts that list them: each case's server on host a, its client
# on host b. The hosts meet through files in RIOMESH_TWOHOST_FLAGS: a says
# when its server listens and how it ended; host b reports each case.
#   run_case NAME SERVER_CMD... -- CLIENT_CMD...
# appends "-b ADDR -p PORT" to the server and "-s ADDR -p PORT" to the
# client; `finish` prints the tally on host b and exits.
flags=${RIOMESH_TWOHOST_FLAGS:?run through two_hosts.sh}
server=10.78.0.1 limit=${limit:-120} port=${port:-7600} case=0 failed=0

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
    timeout $limit "${server_cmd[@]}" -b "$server" -p $port >"$flags/a-$case.log" 2>&1 & local s=$!
    listening $port || echo "host a: $name: the server never listened"
    touch "$flags/ready-$case"
    wait $s; echo $? >"$flags/a-$case"
  else
    wait_for "$flags/ready-$case"
    timeout $limit "${client_cmd[@]}" -s "$server" -p $port >"$flags/b-$case.log" 2>&1
    local rc=$?
    wait_for "$flags/a-$case"
    local ra; ra=$(cat "$flags/a-$case" 2>/dev/null || echo none)
    if [[ $ra == 0 && $rc == 0 ]]; then
      echo "ok:   $name"
    else
      failed=$((failed + 1))
      echo "FAIL: $name (exit codes: server $ra, client $rc; 124: timed out)"
      sed 's/^/      /' "$flags/a-$case.log" "$flags/b-$case.log" 2>/dev/null
    fi
  fi
}

finish() {
  [[ $RIOMESH_VM_HOST == b ]] && echo "across the link: $((case - failed)) passed, $failed failed"
  exit $((failed > 0))
}
