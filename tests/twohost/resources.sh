# What this host's riomesh nodes hold of the kernel's (sourced by
# pubsub_split.sh), read through the rdma tool and /proc, to find what a
# fault leaked.

# "connections N queue_pairs N other_qps N other_ids N fds N": connection
# ids set up (state CONNECT), RC queue pairs, queue pairs not ready to
# send (a lost connection's, flushed, if it leaked) and connection ids
# neither set up nor listening (a leaked one's), and the nodes' open
# descriptors.
host_resources() {
  local qps ids fd=0 p
  qps=$(rdma res show qp 2>/dev/null | grep ' type RC ' || true)
  ids=$(rdma res show cm_id 2>/dev/null | grep ' ps TCP ' || true)
  for p in $(pgrep -x riomesh-node); do
    fd=$((fd + $(ls "/proc/$p/fd" 2>/dev/null | wc -l)))
  done
  echo "connections $(grep -c ' state CONNECT ' <<<"$ids")" \
    "queue_pairs $(grep -c . <<<"$qps") other_qps $(grep -vc ' state RTS ' <<<"$qps")" \
    "other_ids $(grep -vEc ' state (CONNECT|LISTEN) ' <<<"$ids") fds $fd"
}

# Connections set up between this host and ADDRESS.
connections_with() {
  rdma res show cm_id 2>/dev/null | grep " state CONNECT " | grep -c " dst-addr $1:" || true
}

# Polls until host_resources says WANT, up to SECONDS; prints what it saw
# last and fails if that was not it.
await_resources() {  # WANT SECONDS
  local want=$1 until=$((SECONDS + $2)) now
  while now=$(host_resources); [[ $now != "$want" ]]; do
    ((SECONDS < until)) || { echo "$now"; return 1; }
    sleep 0.2
  done
  echo "$now"
}
