# What this host's riomesh nodes hold of the kernel's (sourced by
# pubsub_split.sh), read through the rdma tool and /proc, to find what a
# fault leaked.

# "connections N queue_pairs N other_qps N other_ids N fds N
# memory_regions N": connection ids set up (state CONNECT), RC queue pairs,
# queue pairs not ready to send (a lost connection's, flushed, if it
# leaked) and connection ids neither set up nor listening (a leaked
# one's), the nodes' open descriptors, and the memory regions registered.
host_resources() {
  local qps ids fd=0 p mrs
  qps=$(rdma res show qp 2>/dev/null | grep ' type RC ' || true)
  ids=$(rdma res show cm_id 2>/dev/null | grep ' ps TCP ' || true)
  mrs=$(rdma res show mr 2>/dev/null | grep -c ' mrn ' || true)
  for p in $(pgrep -x riomesh-node); do
    fd=$((fd + $(ls "/proc/$p/fd" 2>/dev/null | wc -l)))
  done
  echo "connections $(grep -c ' state CONNECT ' <<<"$ids")" \
    "queue_pairs $(grep -c . <<<"$qps")" \
    "other_qps $(grep -v ' state RTS ' <<<"$qps" | grep -c .)" \
    "other_ids $(grep -vE ' state (CONNECT|LISTEN) ' <<<"$ids" | grep -c .) fds $fd" \
    "memory_regions $mrs"
}

# Connections set up between this host and ADDRESS.
connections_with() {
  rdma res show cm_id 2>/dev/null | grep " state CONNECT " | grep -c " dst-addr $1:" || true
}

# Polls until host_resources says WANT, up to SECONDS; prints it, or
# every state seen on the way if it never came.
# Memory regions may differ by one per connection: an arena sized by
# demand has two segments while it moves (docs/architecture.md); more
# than that is a leak.
same_resources() {  # NOW WANT
  local mr_now=${1##*memory_regions } mr_want=${2##*memory_regions } conns
  conns=${2#connections }
  conns=${conns%% *}
  [[ ${1% memory_regions*} == "${2% memory_regions*}" ]] &&
    ((mr_now >= mr_want - conns && mr_now <= mr_want + conns))
}

await_resources() {  # WANT SECONDS
  local want=$1 until=$((SECONDS + $2)) now seen=""
  while now=$(host_resources); ! same_resources "$now" "$want"; do
    [[ $seen == *"$now;"* ]] || seen+="$now; "
    ((SECONDS < until)) || { echo "never as before, saw: $seen"; return 1; }
    sleep 0.2
  done
  echo "$now"
}
