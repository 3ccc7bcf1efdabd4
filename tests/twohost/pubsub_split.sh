#!/usr/bin/env bash
# The example pub/sub cluster split over two hosts (by default broker and
# publisher on host a, both subscribers on host b), one pubsub-cluster
# launcher on each, every node at its host's own address on the link
# between them.
#
# On the machine: boots the two VMs (tools/vm-run.sh -2) and runs itself in
# both. Each launcher judges its own actors (subscribers: every sample
# intact and in order; publisher: every post acked; every node stopped
# cleanly); host a keeps its nodes up until host b says its actors are
# done, through a flag file in a folder both see (the working folder,
# shared into both).
#
# Usage: pubsub_split.sh VM_SECONDS RIOMESH LAUNCHER [LAUNCHER OPTIONS...] NODE.yaml...
#   RIOMESH: the riomesh program (for the cluster's secret)
# From the environment:
#   TWOHOST_A=NODE,...     the nodes on host a (default broker,pub-node)
# and faults of the link:
#   TWOHOST_NETEM="SPEC"   tc netem SPEC on both ends (e.g. "delay 5ms loss 1%")
#   TWOHOST_CUT=AT+FOR     all host b sends dropped AT seconds after its nodes
#                          start, for FOR seconds (not with TWOHOST_NETEM)
#   TWOHOST_CUT_AT_NIC=1   the cut by taking host b's NIC down instead (no
#                          test uses it: docs/reliability.md, "Not solved")
#   TWOHOST_POWER_OFF=AT   host b powered off AT seconds after its nodes start;
#                          host a's launcher then judges alone (no flag awaited)
# On rdma, after a cut each host must hold what it held before it (every
# link set up again, nothing of the lost ones left: resources.sh), and
# after a power-off host a must have given back what its links to b held.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vm_seconds=$1 riomesh=$2 launcher=$3
shift 3

if [[ -z ${RIOMESH_VM_HOST:-} ]]; then
  # Both hosts read the secret the files name: made here, before either
  # boots, so that neither makes its own.
  for f in "$@"; do
    [[ $f == *.yaml ]] || continue
    secret=$(dirname "$f")/.secrets/cluster.secret
    [[ -s $secret ]] || "$riomesh" secret "$secret" >/dev/null
    break
  done
  exec "$here/two_hosts.sh" "$vm_seconds" "$here/pubsub_split.sh" "$vm_seconds" "$riomesh" \
    "$launcher" "$@"
fi

# Which nodes run on host a (the others on host b).
a_nodes=${TWOHOST_A:-broker,pub-node}
place="" here_nodes=""
for n in broker pub-node sub-node-1 sub-node-2; do
  if [[ ,$a_nodes, == *,$n,* ]]; then at=10.78.0.1 host=a; else at=10.78.0.2 host=b; fi
  place+=${place:+,}$n=$at
  [[ $host == "$RIOMESH_VM_HOST" ]] && here_nodes+=${here_nodes:+,}$n
done
flags=$RIOMESH_TWOHOST_FLAGS
if [[ -n ${TWOHOST_NETEM:-} ]]; then
  # shellcheck disable=SC2086
  tc qdisc add dev eth0 root netem $TWOHOST_NETEM
  echo "host $RIOMESH_VM_HOST: $(tc qdisc show dev eth0)"
fi
# On rdma, after a cut or a power-off, what the lost connections held of
# the kernel's (queue pairs, connection ids, descriptors) is given back.
. "$here/resources.sh"
host_of() { if [[ ,$a_nodes, == *,$1,* ]]; then echo a; else echo b; fi; }
links=0  # connections across the link: every node but the broker dials it
for n in pub-node sub-node-1 sub-node-2; do
  if [[ $(host_of "$n") != "$(host_of broker)" ]]; then links=$((links + 1)); fi
done
leak_checks=""
[[ ${RIOMESH_FABRIC:-} != tcp && -n ${TWOHOST_CUT:-}${TWOHOST_POWER_OFF:-} ]] && leak_checks=1

# Both hosts: the state just before the cut (every link up, samples
# flowing, so the senders' memory is registered), then the same state
# again after it (host b says when it ended: the link-back flag).
check_cut() {
  local before after
  sleep "$((${TWOHOST_CUT%+*} - 2))"
  await_links || return
  before=$(host_resources)
  echo "host $RIOMESH_VM_HOST: before the cut: $before"
  wait_for_flag "$flags/link-back" || return
  if after=$(await_resources "$before" 40); then
    echo "host $RIOMESH_VM_HOST: after the cut, as before: $after"
  else
    echo "host $RIOMESH_VM_HOST: FAIL: after the cut: $after; before it: $before"
    touch "$flags/leak-$RIOMESH_VM_HOST"
  fi
}
# Host a: once host b is powered off, its connections to b are gone and
# with them their queue pairs, connection ids and descriptors.
check_power_off() {
  local before after c q f m
  sleep "$((TWOHOST_POWER_OFF - 2))"
  await_links || return
  before=$(host_resources)
  echo "host a: before the power-off: $before"
  read -r _ c _ q _ _ _ _ _ f _ m <<<"$before"
  wait_for_flag "$flags/power-off" || return
  local until=$((SECONDS + 40)) ok=""
  while ((SECONDS < until)); do
    after=$(host_resources)
    local ac aq aoq aoi af am
    read -r _ ac _ aq _ aoq _ aoi _ af _ am <<<"$after"
    # Each link held descriptors and memory regions of its own (its event
    # channel, its rings and arena): at least one of each comes back.
    if ((ac == c - links && aq == q - links && aoq == 0 && aoi == 0 && af <= f - links &&
         am <= m - links)); then
      ok=1; break
    fi
    sleep 0.2
  done
  if [[ -n $ok ]]; then
    echo "host a: after the power-off, the $links connections to host b given back: $after"
  else
    echo "host a: FAIL: after the power-off: $after; before it: $before ($links links)"
    touch "$flags/leak-a"
  fi
}
await_links() {
  local until=$((SECONDS + 60))
  until (($(connections_with "$RIOMESH_PEER_ADDR") == links)); do
    ((SECONDS < until)) || { echo "host $RIOMESH_VM_HOST: FAIL: never $links links up"
                             touch "$flags/leak-$RIOMESH_VM_HOST"; return 1; }
    sleep 0.2
  done
}
wait_for_flag() {
  local until=$((SECONDS + 120))
  until [[ -e $1 ]]; do
    ((SECONDS < until)) || { echo "host $RIOMESH_VM_HOST: FAIL: no $1"
                             touch "$flags/leak-$RIOMESH_VM_HOST"; return 1; }
    sleep 0.2
  done
}
# Under netem, what the link and the device did (to read a failure by):
# netem's drops, and soft-RoCE's counters that are not zero (retries,
# sequence errors, receiver-not-ready NAKs).
link_counters() {
  [[ -n ${TWOHOST_NETEM:-} ]] || return 0
  local d=/sys/class/infiniband/rxe0/ports/1/hw_counters out="" f v
  if [[ -d $d ]]; then
    for f in "$d"/*; do
      v=$(<"$f")
      [[ $v != 0 ]] && out+=" ${f##*/}=$v"
    done
  fi
  echo "host $RIOMESH_VM_HOST: rxe0:$out"
  echo "host $RIOMESH_VM_HOST: $(tc -s qdisc show dev eth0 | grep -m1 -o 'Sent .*')"
}
# The launcher's code, or 1 if a check found a leak.
judged() {
  local rc=$1
  link_counters
  wait
  [[ -e $flags/leak-$RIOMESH_VM_HOST ]] && rc=1
  return "$rc"
}

if [[ -n $leak_checks && -n ${TWOHOST_CUT:-} ]]; then check_cut & fi
if [[ -n $leak_checks && -n ${TWOHOST_POWER_OFF:-} && $RIOMESH_VM_HOST == a ]]; then
  check_power_off &
fi

case $RIOMESH_VM_HOST in
  a)
    await=(--await-flag "$flags/b")
    [[ -n ${TWOHOST_POWER_OFF:-} ]] && await=()
    rc=0
    "$launcher" --place "$place" --only "$here_nodes" \
      --finished-flag "$flags/a" "${await[@]}" "$@" || rc=$?
    judged $rc ;;
  b)
    if [[ -n ${TWOHOST_CUT:-} ]]; then
      at=${TWOHOST_CUT%+*} for=${TWOHOST_CUT#*+}
      # Cut in the network, not at the NIC: everything host b sends is
      # dropped, so nothing it is sent gets an answer either; the NIC
      # stays up, as when a cable between switches is pulled.
      (sleep "$at"; echo "host b: link cut for $for s"
       if [[ -n ${TWOHOST_CUT_AT_NIC:-} ]]; then
         ip link set eth0 down; sleep "$for"; ip link set eth0 up
       else
         tc qdisc replace dev eth0 root netem loss 100%
         sleep "$for"; tc qdisc del dev eth0 root
       fi
       echo "host b: link back"
       touch "$flags/link-back") &
    fi
    if [[ -n ${TWOHOST_POWER_OFF:-} ]]; then
      (sleep "$TWOHOST_POWER_OFF"; echo "host b: power off"; touch "$flags/power-off"
       vm-power-off 0) &
    fi
    rc=0
    "$launcher" --place "$place" --only "$here_nodes" \
      --finished-flag "$flags/b" "$@" || rc=$?
    judged $rc ;;
esac
