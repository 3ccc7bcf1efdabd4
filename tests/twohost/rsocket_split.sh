#!/usr/bin/env bash
# The rsocket API cases (tests/interop/cases.hpp) across the link between
# two hosts: a program on librdmacm's rsocket API against one on riomesh,
# either one listening on host a, each role on each side.
#
# Usage (on the machine): two_hosts.sh SECONDS rsocket_split.sh PATH/TO/rsocket_peer PATH/TO/riomesh_peer
set -u
declare -A bin=([rsocket]=$1 [riomesh]=$2)
limit=90 port=7700
. "$(dirname "$0")/split_cases.sh"

for pair in "riomesh rsocket" "rsocket riomesh"; do
  read -r x y <<<"$pair"
  for spec in "ordering writer reader" "maps writer reader" "shutdown first second" \
              "eof sender poller"; do
    read -r c r1 r2 <<<"$spec"
    run_case "$c: $x $r1 on host a / $y $r2 on host b" "${bin[$x]}" "$c" "$r1" -- \
      "${bin[$y]}" "$c" "$r2"
    run_case "$c: $x $r2 on host a / $y $r1 on host b" "${bin[$x]}" "$c" "$r2" -- \
      "${bin[$y]}" "$c" "$r1"
  done
done
# Bytes a librdmacm peer sends after its own shutdown, across the link.
run_case "late: rsocket shutter on host a / riomesh answerer on host b" \
  "${bin[rsocket]}" late shutter -- "${bin[riomesh]}" late answerer
run_case "late: riomesh answerer on host a / rsocket shutter on host b" \
  "${bin[riomesh]}" late answerer -- "${bin[rsocket]}" late shutter
finish
