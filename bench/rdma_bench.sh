#!/usr/bin/env bash
# The rdma bench, side by side in one run: perftest's ib_write_bw and
# ib_write_lat (the floor: bare RDMA writes), librdmacm's rstream and
# riostream (rsockets), and riomesh's raw socket (bench/rdma_bench) with
# send/recv and with zero-copy riowrite, at 64 B, 4 KiB, 64 KiB and 1 MiB.
# Both processes on the one soft-RoCE device of the VM: run it through
#   tools/vm-run.sh -- bench/rdma_bench.sh BUILD_DIR [--quick]
# Prints a bandwidth table (Gb/s, with ratios to ib_write_bw and rstream;
# every stream program spinning on non-blocking calls, rsockets' default),
# a latency table (usec, half the round trip, spinning and blocking), and
# what busy-polling one completion queue per connection costs (cq_poll_bench).
set -u
build=${1:?usage: rdma_bench.sh BUILD_DIR [--quick]}
quick=0; [[ ${2:-} == --quick ]] && quick=1
addr=${RIOMESH_RDMA_ADDR:?run inside tools/vm-run.sh}
dev=${RIOMESH_RDMA_DEVICE:-rxe0}
ours=$build/bench/rdma_bench
for tool in ib_write_bw ib_write_lat rstream riostream; do
  command -v $tool >/dev/null || { echo "rdma_bench: $tool missing (tools/deps.sh)" >&2; exit 1; }
done
[[ -x $ours ]] || { echo "rdma_bench: $ours missing (build first)" >&2; exit 1; }

sizes=(64 4096 65536 1048576)
# Transfers per size, for a second or two each under the VM's emulated CPU.
declare -A count=([64]=100000 [4096]=20000 [65536]=2000 [1048576]=200)
lat_iters=2000
if ((quick)); then count=([64]=200 [4096]=200 [65536]=50 [1048576]=10); lat_iters=50; fi
port=7900

log=$(mktemp -d)
trap 'rm -rf "$log"; kill $(jobs -p) 2>/dev/null' EXIT

# pair SERVER_CMD -- CLIENT_CMD: runs both, prints the client's output.
pair() {
  local server=() client=()
  while [[ $1 != -- ]]; do server+=("$1"); shift; done; shift; client=("$@")
  timeout 120 "${server[@]}" >"$log/server" 2>&1 & local pid=$!
  sleep 0.5
  timeout 120 "${client[@]}" 2>"$log/client.err" || {
    echo "rdma_bench: failed: ${client[*]}" >&2; cat "$log/server" "$log/client.err" >&2; }
  wait $pid 2>/dev/null
}

# perftest: the line after the header holds the figures.
perftest_field() {  # COLUMN (1-based) from the first numeric row
  awk -v c="$1" '/^ *[0-9]+ +[0-9]+ / {print $c; exit}'
}
# rstream / riostream: usec/xfer is the 8th column. Their Gb/sec has two
# decimals, too few at 64 B: bandwidth comes from the time (6th column,
# "1.23s") and the bytes moved, the transfers once each way.
rstream_field() { awk -v c="$1" 'NR > 1 && NF >= 8 {print $c; exit}'; }
rstream_gbps() {  # SIZE COUNT
  awk -v b=$(($1 * $2 * 2)) 'NR > 1 && NF >= 8 {t = $6; sub("s", "", t);
    if (t > 0) printf "%.4f\n", b * 8 / t / 1e9; exit}'
}

ib_bw() {
  pair ib_write_bw -d "$dev" -x 1 -s "$1" -n "$2" --report_gbits -p $((++port)) -- \
       ib_write_bw -d "$dev" -x 1 -s "$1" -n "$2" --report_gbits -p $port "$addr" |
    perftest_field 4
}
ib_lat() {
  pair ib_write_lat -d "$dev" -x 1 -s "$1" -n "$2" -p $((++port)) -- \
       ib_write_lat -d "$dev" -x 1 -s "$1" -n "$2" -p $port "$addr" |
    perftest_field 6
}
rs_bw() {  # TOOL SIZE COUNT
  pair "$1" -b "$addr" -p $((++port)) -S "$2" -C "$3" -I 1 -- \
       "$1" -s "$addr" -p $port -S "$2" -C "$3" -I 1 | rstream_gbps "$2" "$3"
}
rs_lat() {  # SIZE ITERS [-T b]
  pair rstream -b "$addr" -p $((++port)) -S "$1" -C 1 -I "$2" ${3:+"$3" "$4"} -- \
       rstream -s "$addr" -p $port -S "$1" -C 1 -I "$2" ${3:+"$3" "$4"} | rstream_field 8
}
ours() {  # spin|block TEST SIZE COUNT
  local p=$spin_port flag=-n
  [[ $1 == block ]] && p=$block_port flag=
  "$ours" -s "$addr" -p $p -T "$2" -S "$3" -C "$4" $flag 2>"$log/ours.err" |
    awk '{print $(NF-1)}'
  [[ -s $log/ours.err ]] && cat "$log/ours.err" >&2
}

# Our servers, one spinning on non-blocking calls as rstream and riostream
# do by default, one blocking (busy-poll for polling_time, then sleep).
spin_port=$((port - 2)) block_port=$((port - 1))
"$ours" -b "$addr" -p $spin_port -n >"$log/ours.spin" 2>&1 &
"$ours" -b "$addr" -p $block_port >"$log/ours.block" 2>&1 &

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
show() { [[ -n $1 ]] && echo "$1" || echo "-"; }

echo "rdma bench on $dev ($addr), one VM run; bandwidth in Gb/s (10^9 bits/s)"
printf "%-8s %11s %9s %9s %11s %11s %11s %11s %11s %11s\n" size ib_write_bw rstream \
  riostream "ours:send" "ours:rio" "send/ib" "send/rs" "rio/ib" "rio/rs"
for s in "${sizes[@]}"; do
  c=${count[$s]}
  echo "  ... $s B: ib_write_bw, rstream, riostream, ours" >&2
  ib=$(ib_bw "$s" "$c"); rs=$(rs_bw rstream "$s" "$c"); rio=$(rs_bw riostream "$s" "$c")
  snd=$(ours spin send "$s" "$c"); wr=$(ours spin riowrite "$s" "$c")
  printf "%-8s %11s %9s %9s %11s %11s %11s %11s %11s %11s\n" "$s" "$(show "$ib")" "$(show "$rs")" \
    "$(show "$rio")" "$(show "$snd")" "$(show "$wr")" "$(ratio "$snd" "$ib")" "$(ratio "$snd" "$rs")" \
    "$(ratio "$wr" "$ib")" "$(ratio "$wr" "$rs")"
done
echo
echo "latency in usec, half the round trip (ib_write_lat: t_avg); spinning on"
echo "non-blocking calls (rstream's default), and blocking (rstream -T b)"
printf "%-8s %12s %9s %11s %9s %11s %11s %9s\n" size ib_write_lat rstream "ours:spin" "ours/rs" \
  "rstream:blk" "ours:blk" "ours/rs"
for s in 64 4096; do
  echo "  ... $s B: ib_write_lat, rstream, ours; rstream and ours blocking" >&2
  ib=$(ib_lat "$s" "$lat_iters"); rs=$(rs_lat "$s" "$lat_iters"); o=$(ours spin lat "$s" "$lat_iters")
  rsb=$(rs_lat "$s" "$lat_iters" -T b); ob=$(ours block lat "$s" "$lat_iters")
  printf "%-8s %12s %9s %11s %9s %11s %11s %9s\n" "$s" "$(show "$ib")" "$(show "$rs")" "$(show "$o")" \
    "$(ratio "$o" "$rs")" "$(show "$rsb")" "$(show "$ob")" "$(ratio "$ob" "$rsb")"
done
echo
echo "busy-polling a progress thread's completion queues: one per connection"
echo "(today) against one shared queue, every queue empty (bench/cq_poll_bench)"
"$build/bench/cq_poll_bench" --device "$dev" --spins $((quick ? 1000 : 20000)) ||
  echo "rdma_bench: failed: cq_poll_bench" >&2
