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
#   TWOHOST_POWER_OFF=AT   host b powered off AT seconds after its nodes start;
#                          host a's launcher then judges alone (no flag awaited)
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
case $RIOMESH_VM_HOST in
  a)
    await=(--await-flag "$flags/b")
    [[ -n ${TWOHOST_POWER_OFF:-} ]] && await=()
    exec "$launcher" --place "$place" --only "$here_nodes" \
      --finished-flag "$flags/a" "${await[@]}" "$@" ;;
  b)
    if [[ -n ${TWOHOST_CUT:-} ]]; then
      at=${TWOHOST_CUT%+*} for=${TWOHOST_CUT#*+}
      # Cut in the network, not at the NIC: everything host b sends is
      # dropped, so nothing it is sent gets an answer either; the NIC
      # stays up, as when a cable between switches is pulled.
      (sleep "$at"; echo "host b: link cut for $for s"
       tc qdisc replace dev eth0 root netem loss 100%
       sleep "$for"; tc qdisc del dev eth0 root; echo "host b: link back") &
    fi
    if [[ -n ${TWOHOST_POWER_OFF:-} ]]; then
      (sleep "$TWOHOST_POWER_OFF"; echo "host b: power off"; vm-power-off 0) &
    fi
    "$launcher" --place "$place" --only "$here_nodes" \
      --finished-flag "$flags/b" "$@"
    rc=$?
    wait
    exit $rc ;;
esac
