#!/usr/bin/env bash
# librdmacm's rstream and riostream against riomesh across the link between
# two hosts: the server on host a, the client on host b, each program in
# both roles, every byte verified on both sides (-T v).
#
# Usage (on the machine): two_hosts.sh SECONDS stream_split.sh PATH/TO/stream_peer
set -u
peer=$1
. "$(dirname "$0")/split_cases.sh"

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
finish
