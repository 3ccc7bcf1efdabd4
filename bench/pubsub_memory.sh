#!/usr/bin/env bash
# What the pub/sub cluster pins on rdma: a broker, one publisher (200
# samples of SIZE from the pool) and N subscribers, every node with a
# 16 MiB arena, each a riomesh-node process on the VM's soft-RoCE device.
# Prints each node's peak VmPin (the kernel's count of pinned pages,
# sampled every 50 ms), the broker's and publisher's memory lines at stop,
# and the cluster's verdict. In the VM:
#   tools/vm-run.sh -m 4G -- bench/pubsub_memory.sh BUILD_DIR N [SIZE]
set -eu
build=${1:?usage: pubsub_memory.sh BUILD_DIR SUBSCRIBERS [SIZE]}
n=${2:?usage: pubsub_memory.sh BUILD_DIR SUBSCRIBERS [SIZE]}
size=${3:-256KiB}
host=${RIOMESH_RDMA_ADDR:?run inside tools/vm-run.sh}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/secret"
chmod 600 "$dir/secret"
peer="{secret_file: $dir/secret, peers: [{name: broker, address: \"$host:7481\"}]}"
cat >"$dir/broker.yaml" <<Y
node: {name: broker, listen: "$host:7481", fabric: verbs}
cluster: {secret_file: $dir/secret}
channel: {arena: 16MiB}
actors:
  - {type: pubsub.broker, name: broker}
Y
cat >"$dir/publisher.yaml" <<Y
node: {name: pub-node, listen: "$host:7482", fabric: verbs}
cluster: $peer
channel: {arena: 16MiB}
actors:
  - type: pubsub.publisher
    name: pub-1
    params: {broker: broker, broker_actor: broker, topic: ticks, messages: 200, size: $size,
             rate: 0, window: 16, wait_for_subscribers: $n}
Y
files=("$dir/broker.yaml" "$dir/publisher.yaml")
for i in $(seq 1 "$n"); do
  cat >"$dir/sub-$i.yaml" <<Y
node: {name: sub-node-$i, listen: "$host:$((7500 + i))", fabric: verbs}
cluster: $peer
channel: {arena: 16MiB}
actors:
  - {type: pubsub.subscriber, name: sub-$i, params: {broker: broker, topic: ticks, publishers: 1}}
Y
  files+=("$dir/sub-$i.yaml")
done
(while true; do
  for p in $(pgrep -f riomesh-node); do
    f=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -o '[a-z0-9-]*\.yaml' | head -1) || true
    v=$(awk '/VmPin/ {print $2}' "/proc/$p/status" 2>/dev/null) || true
    [[ -n $f && -n $v ]] && echo "$f $v"
  done
  sleep 0.05
done) >"$dir/pins.txt" &
sampler=$!
status=0
"$build/examples/pubsub/pubsub-cluster" --quiet "${files[@]}" >"$dir/out.txt" 2>&1 || status=$?
kill $sampler
echo "peak VmPin, KiB:"
sort -k1,1 -k2,2n "$dir/pins.txt" | awk '{m[$1] = $2} END {for (k in m) printf "  %-16s %9d\n", k, m[k]}' |
  sort
grep -h "\] info: memory:" "$dir/out.txt" | grep -E "\[(broker|pub-node)\]" || true
tail -3 "$dir/out.txt"
exit $status
