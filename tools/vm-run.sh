#!/usr/bin/env bash
# Runs a command inside a throw-away QEMU VM that has a soft-RoCE device, and
# exits with the command's exit code. The host kernel here has no RDMA; the
# VM boots Debian's own kernel (fetched by tools/vm-kernel.sh), which ships
# rdma_rxe, and sees the host's files: build on the host, test in the VM.
#
# Usage: tools/vm-run.sh [-t SECONDS] [-m MEM] [-2] [-v] -- COMMAND [ARGS...]
#   -t  kill the VM after SECONDS (default 1200); exit code 124
#   -m  guest memory (default 2G)
#   -2  two hosts: boot two VMs joined by an emulated Ethernet link and run
#       COMMAND in both (see below)
#   -v  show the guest kernel's console on stderr
#
# In the guest the command runs as root in the current directory, with the
# caller's environment, unlimited memlock, and rxe0 on a dummy netdev:
#   RIOMESH_RDMA_ADDR=10.77.0.1  RIOMESH_RDMA_DEVICE=rxe0
# With -2 each VM has one virtio NIC, eth0 (MTU 9000), on a link of its
# own with the other (QEMU's socket netdev, a TCP connection over the
# host's loopback: lossless; the guests' addresses exist only on that
# link), and rxe0 on eth0:
#   host a: RIOMESH_VM_HOST=a RIOMESH_RDMA_ADDR=10.78.0.1 RIOMESH_PEER_ADDR=10.78.0.2
#   host b: RIOMESH_VM_HOST=b RIOMESH_RDMA_ADDR=10.78.0.2 RIOMESH_PEER_ADDR=10.78.0.1
# The exit code is host a's if it failed, else host b's. A host may end
# itself abruptly, as a power cut would (no shutdown, nothing sent), with
# `vm-power-off`, a shell function in its environment: its exit code is
# then what it passed (default 0).
# The guest sees the host's files read-only, over a root and a /tmp of its
# own; the current folder, this project's tree and the folders listed in
# RIOMESH_VM_SHARE (colon-separated) are shared read-write at their paths.
# A guest that stalls in its kernel's boot (nothing from its initramfs in
# RIOMESH_VM_BOOT_LIMIT seconds, default 120) is booted again, once (with
# -2, both hosts are).
# Exit code: the command's; 124 on timeout; 125 if the VM failed first.
set -euo pipefail
{ # read whole before running: editing this file cannot break a running VM

timeout_s=1200 mem=2G verbose=0 hosts=1
while getopts "t:m:v2h" opt; do
  case $opt in
    t) timeout_s=$OPTARG ;; m) mem=$OPTARG ;; v) verbose=1 ;; 2) hosts=2 ;;
    h) sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1)); [[ ${1:-} == -- ]] && shift
(($#)) || { echo "vm-run: no command" >&2; exit 2; }
die() { echo "vm-run: $*" >&2; exit 125; }

here=$(cd "$(dirname "$0")" && pwd)
kdir=$("$here/vm-kernel.sh" --quiet) || die "no VM kernel (run tools/deps.sh)"
kver=$(cat "$kdir/kernel-release")
kernel=$kdir/boot/vmlinux; [[ -s $kernel ]] || kernel=$(echo "$kdir"/boot/vmlinuz-*)
for tool in qemu-system-x86_64 busybox cpio; do
  command -v "$tool" >/dev/null || [[ -x /bin/$tool ]] || die "$tool missing (run tools/deps.sh)"
done

# --- initramfs: busybox and the modules needed to mount the host's root ----
initrd=$kdir/riomesh-initrd.gz
if [[ ! -s $initrd || $0 -nt $initrd ]]; then
  stage=$(mktemp -d)
  mkdir -p "$stage"/{bin,dev,proc,sys,host,rw,ctl,root}
  cp /bin/busybox "$stage/bin/busybox"
  : >"$stage/load"
  for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$kdir" -S "$kver" --show-depends "$m" | while read -r verb path args; do
      [[ $verb == insmod ]] || continue
      rel=${path#"$kdir"}
      grep -qx "$rel" "$stage/load" && continue
      mkdir -p "$stage$(dirname "$rel")"; cp "$path" "$stage$rel"; echo "$rel" >>"$stage/load"
    done
  done
  cat >"$stage/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
stty -F /dev/ttyS1 raw -echo 2>/dev/null   # byte-exact command output
# Milestones before the command's own (a VM that stalls at boot says where).
echo "vm-run: initramfs" >/dev/ttyS0 2>/dev/null
while read -r m; do insmod "$m"; done </load
o=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o,ro,cache=loose host /host || poweroff -f
mount -t 9p -o $o,cache=none ctl /ctl || poweroff -f
# A tmpfs over the read-only host root: the guest may write anywhere, and
# nothing it writes outside the shared work folder reaches the host.
mount -t tmpfs tmpfs /rw && mkdir /rw/up /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/up,workdir=/rw/work root /root || poweroff -f
echo "vm-run: host root mounted" >/dev/ttyS0 2>/dev/null
mount --move /proc /root/proc; mount --move /sys /root/sys; mount --move /dev /root/dev
mount -t tmpfs tmpfs /root/run; mount -t tmpfs tmpfs /root/tmp
mkdir -p /root/dev/pts /root/dev/shm /root/run/vm
mount -t devpts devpts /root/dev/pts; mount -t tmpfs tmpfs /root/dev/shm
mount --move /ctl /root/run/vm
read -r kmods </root/run/vm/kmods
mkdir -p "/root/lib/modules/$(uname -r)" && mount --bind "/root$kmods" "/root/lib/modules/$(uname -r)"
# The folders shared read-write (the working folder, the project's tree),
# each at its own path: a clone under /tmp works as well as one elsewhere.
while read -r tag path; do
  mkdir -p "/root$path" && mount -t 9p -o $o,cache=mmap "$tag" "/root$path"
done </root/run/vm/shares
chroot /root /bin/bash /run/vm/stage2 </root/dev/ttyS1 >/root/dev/ttyS1 2>&1
sync; poweroff -f
INIT
  # On-demand module loads inside the guest go to the chroot's modprobe.
  mkdir -p "$stage/sbin"
  printf '#!/bin/sh\nexec /bin/chroot /root /sbin/modprobe "$@"\n' >"$stage/sbin/modprobe"
  chmod +x "$stage/init" "$stage/sbin/modprobe"
  (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
  mv "$initrd.tmp" "$initrd"; rm -rf "$stage"
fi

# --- this run: command, environment, working folder --------------------------
ctl=$(mktemp -d); trap 'rm -rf "$ctl"' EXIT
echo "$kdir/lib/modules/$kver" >"$ctl/kmods"
pwd -P >"$ctl/cwd"
# Shared read-write at their own paths: the working folder, this project's
# tree (its scripts and build folders, wherever it was cloned: the guest's
# /tmp is its own) and RIOMESH_VM_SHARE (folders, colon-separated). A
# folder inside another shared one needs no share of its own.
project=$(cd "$here/.." && pwd -P)
candidates=("$(pwd -P)" "$project")
IFS=: read -r -a extra <<<"${RIOMESH_VM_SHARE:-}"
for d in "${extra[@]}"; do
  [[ -n $d ]] || continue
  [[ -d $d ]] || die "RIOMESH_VM_SHARE: $d is not a folder"
  candidates+=("$(cd "$d" && pwd -P)")
done
shares=()
for d in "${candidates[@]}"; do
  inside=0
  for e in "${candidates[@]}"; do
    [[ $d != "$e" && $d == "$e"/* ]] && inside=1
  done
  for e in "${shares[@]}"; do [[ $d == "$e" ]] && inside=1; done
  ((inside)) || shares+=("$d")
done
virtfs=() n=0
for d in "${shares[@]}"; do
  echo "share$n $d" >>"$ctl/shares"
  virtfs+=(-virtfs "local,path=$d,mount_tag=share$n,security_model=none,multidevs=remap")
  n=$((n + 1))
done
export -p | grep -vE '^declare -x (BASH_[A-Z_]*|SHLVL|OLDPWD|PWD|_)=' >"$ctl/env"
printf '%q ' "$@" >"$ctl/cmd"
cat >"$ctl/stage2" <<'STAGE2'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Milestones on the console (shown when a VM times out): how far it got.
milestone() { echo "vm-run: $*" >/dev/ttyS0 2>/dev/null || true; }
milestone "booted"
# rdma_rxe computes its ICRC with the "crc32" crypto algorithm but does not
# depend on the module that provides it: load it first.
modprobe -a crc32_generic ib_uverbs rdma_ucm rdma_rxe
modprobe vgem 2>/dev/null || true  # dma-buf exporter for the tests, where kept
ip link set lo up
if [[ -s /run/vm/host ]]; then
  # One of two hosts: rxe on the NIC of the link between them.
  read -r host me peer </run/vm/host
  modprobe -a virtio_net sch_netem
  ip link set eth0 mtu 9000
  ip addr add "$me/24" dev eth0
  ip link set eth0 up
  rdma link add rxe0 type rxe netdev eth0
else
  ip link add dummy0 mtu 9000 type dummy
  ip addr add 10.77.0.1/24 dev dummy0
  ip link set dummy0 up
  rdma link add rxe0 type rxe netdev dummy0
  me=10.77.0.1
fi
ulimit -l unlimited   # registering memory pins it
ulimit -c 0
. /run/vm/env
export RIOMESH_RDMA_ADDR=$me RIOMESH_RDMA_DEVICE=rxe0
if [[ -s /run/vm/host ]]; then
  export RIOMESH_VM_HOST=$host RIOMESH_PEER_ADDR=$peer
  # A power cut: the exit code first, then off at once, with no shutdown.
  vm-power-off() { echo "${1:-0}" >/run/vm/rc; sync; echo o >/proc/sysrq-trigger; sleep 10; }
  export -f vm-power-off
fi
milestone "network and rxe0 set up ($(rdma link 2>&1 | tr '\n' ' ')); running the command"
cd "$(cat /run/vm/cwd)"
eval "$(cat /run/vm/cmd)"
echo $? >/run/vm/rc
STAGE2

accel=(-accel tcg,thread=multi -cpu max)
if [[ -w /dev/kvm ]] && [[ -d /sys/module/kvm_intel || -d /sys/module/kvm_amd ]]; then
  accel=(-accel kvm -cpu host)
fi
cpus=$(nproc); ((cpus > 8)) && cpus=8
share() { echo "-virtfs" "local,path=$1,mount_tag=$2,security_model=none,multidevs=remap$3"; }
# qemu_args CTL [DEVICE ARGS...]: a VM's command line, into `args`.
qemu_args() {
  local ctl_dir=$1; shift
  local console=(-serial "file:$ctl_dir/console")
  ((verbose)) && console=(-serial "file:/dev/stderr")
  # The kernel's errors reach the console too (loglevel 4: hung tasks, RCU
  # stalls, driver errors), which a VM that timed out shows: a guest that
  # went quiet says why, if its kernel knows.
  # shellcheck disable=SC2046
  args=("${accel[@]}" -machine pc -m "$mem" -smp "$cpus"
    -nodefaults -no-user-config -display none -no-reboot "${console[@]}" -serial stdio
    -kernel "$kernel" -initrd "$initrd"
    -append "console=ttyS0 panic=-1 quiet loglevel=4 8250.nr_uarts=2 cryptomgr.notests mitigations=off tsc=reliable"
    $(share / host ",readonly=on") $(share "$ctl_dir" ctl "") "${virtfs[@]}" "$@")
}
# ended NAME CTL QEMU_EXIT: returns the VM's exit code, or says why it has none.
ended() {
  local name=$1 ctl_dir=$2 rc=$3
  [[ -s $ctl_dir/rc ]] && return "$(cat "$ctl_dir/rc")"
  [[ -s $ctl_dir/console ]] && { echo "vm-run: $name's console:" >&2; tail -40 "$ctl_dir/console" >&2; }
  ((rc == 124)) && { echo "vm-run: $name timed out after ${timeout_s}s" >&2; return 124; }
  echo "vm-run: $name ended without an exit code (qemu exit $rc)" >&2
  return 125
}
# A guest whose initramfs has said nothing after boot_limit seconds
# stalled in its kernel's boot: seen under TCG as a VM silent until its
# timeout, with an empty console. Its command has not started, so it is
# booted again, once, within what is left of the timeout (not with -v,
# whose console is not kept).
boot_limit=${RIOMESH_VM_BOOT_LIMIT:-120}
boot_once() {  # BUDGET: qemu's exit code; 200 if the guest stalled at boot
  rm -f "$ctl/console"
  timeout "$1" qemu-system-x86_64 "${args[@]}" </dev/null &
  local pid=$! waited=0
  while ((!verbose)) && kill -0 "$pid" 2>/dev/null && ! grep -qs "vm-run: initramfs" "$ctl/console"; do
    if ((waited >= boot_limit)); then
      kill "$pid" 2>/dev/null
      wait "$pid" || true
      return 200
    fi
    sleep 1
    waited=$((waited + 1))
  done
  wait "$pid"
}
# again_within WHO CTL: says that WHO stalled at boot, with what its
# console shows; `left` becomes what is left of the timeout for a second
# boot (exit 124 if nothing is).
again_within() {
  echo "vm-run: $1 said nothing in ${boot_limit}s (stalled at boot); booting again" >&2
  [[ -s $2/console ]] && { echo "vm-run: its console:" >&2; tail -20 "$2/console" >&2; }
  left=$((timeout_s - SECONDS))
  ((left > 0)) || { echo "vm-run: no time left for a second boot" >&2; exit 124; }
}
if ((hosts == 1)); then
  qemu_args "$ctl"
  rc=0
  boot_once "$timeout_s" || rc=$?
  if ((rc == 200)); then
    again_within "the VM" "$ctl"
    rc=0
    boot_once "$left" || rc=$?
    ((rc == 200)) && { echo "vm-run: the VM stalled at boot again" >&2; exit 125; }
  fi
  ended "the VM" "$ctl" "$rc" || exit $?
  exit 0
fi
# Two hosts: their NICs joined by a TCP connection over the host's
# loopback (QEMU's socket netdev), which, unlike UDP datagrams, loses no
# frame when a guest falls behind: a link as lossless as a RoCE fabric's,
# where tests add loss of their own with netem.
pick_port() {  # a free port on the host's loopback for the link, into `port`
  port=0
  for _ in $(seq 50); do
    local p=$((20000 + RANDOM % 40000))
    [[ -z $(ss -Hltn "sport = :$p" 2>/dev/null) ]] && { port=$p; return; }
  done
  die "no free port for the link between the hosts"
}
ctl_b=$(mktemp -d); trap 'rm -rf "$ctl" "$ctl_b"' EXIT
cp -r "$ctl/." "$ctl_b/"
echo "a 10.78.0.1 10.78.0.2" >"$ctl/host"
echo "b 10.78.0.2 10.78.0.1" >"$ctl_b/host"
# QEMU leaves Nagle's algorithm on for the link's TCP connection: a frame
# right behind another (an RDMA ACK, then the next request) waits for the
# first one's acknowledgment, some 20 ms a hop. A preloaded shim sets
# TCP_NODELAY on every TCP socket QEMU connects or accepts; built once,
# with the initramfs.
nodelay=$kdir/riomesh-nodelay.so
if [[ ! -s $nodelay || $0 -nt $nodelay ]]; then
  command -v cc >/dev/null || die "cc missing (run tools/deps.sh)"
  cat >"$ctl/nodelay.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
static void nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}
int connect(int fd, const struct sockaddr* a, socklen_t n) {
  int (*real)(int, const struct sockaddr*, socklen_t) = dlsym(RTLD_NEXT, "connect");
  int rc = real(fd, a, n);
  nodelay(fd);
  return rc;
}
int accept4(int fd, struct sockaddr* a, socklen_t* n, int flags) {
  int (*real)(int, struct sockaddr*, socklen_t*, int) = dlsym(RTLD_NEXT, "accept4");
  int rc = real(fd, a, n, flags);
  if (rc >= 0)
    nodelay(rc);
  return rc;
}
int accept(int fd, struct sockaddr* a, socklen_t* n) {
  return accept4(fd, a, n, 0);
}
SHIM
  cc -shared -fPIC -O2 -o "$nodelay.tmp" "$ctl/nodelay.c" -ldl && mv "$nodelay.tmp" "$nodelay" ||
    die "cannot build the TCP_NODELAY shim"
fi
nic() {  # nic MAC_END listen|connect
  echo -netdev "socket,id=link,$2=127.0.0.1:$port" \
    -device "virtio-net-pci,netdev=link,mac=52:54:00:78:00:$1,host_mtu=9000"
}
export LD_PRELOAD=$nodelay${LD_PRELOAD:+:$LD_PRELOAD}
# boot_pair BUDGET: both hosts, their exit codes into qa and qb; returns
# 200 if either stalled at boot (both are stopped then: the link's other
# end would wait for it forever).
boot_pair() {
  pick_port
  # shellcheck disable=SC2046
  qemu_args "$ctl" $(nic 01 listen); args_a=("${args[@]}")
  # shellcheck disable=SC2046
  qemu_args "$ctl_b" $(nic 02 connect); args_b=("${args[@]}")
  rm -f "$ctl/console" "$ctl_b/console" "$ctl.qemu" "$ctl_b.qemu"
  { timeout "$1" qemu-system-x86_64 "${args_a[@]}" </dev/null || echo $? >"$ctl.qemu"; } |
    sed -u 's/^/[host a] /' &
  local pid_a=$!
  # Host b dials host a's end of the link: once it listens.
  for _ in $(seq 100); do
    [[ -n $(ss -Hltn "sport = :$port" 2>/dev/null) ]] && break
    sleep 0.05
  done
  { timeout "$1" qemu-system-x86_64 "${args_b[@]}" </dev/null || echo $? >"$ctl_b.qemu"; } |
    sed -u 's/^/[host b] /' &
  local pid_b=$! waited=0 stalled=0
  while ((!verbose)) && { kill -0 "$pid_a" || kill -0 "$pid_b"; } 2>/dev/null &&
    ! { grep -qs "vm-run: initramfs" "$ctl/console" && grep -qs "vm-run: initramfs" "$ctl_b/console"; }; do
    if ((waited >= boot_limit)); then
      stalled=1
      pkill -f -- "127.0.0.1:$port" 2>/dev/null || true
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
  wait
  qa=0 qb=0
  [[ -s $ctl.qemu ]] && qa=$(cat "$ctl.qemu")
  [[ -s $ctl_b.qemu ]] && qb=$(cat "$ctl_b.qemu")
  rm -f "$ctl.qemu" "$ctl_b.qemu"
  ((stalled)) && return 200
  return 0
}
if ! boot_pair "$timeout_s"; then
  # Both boot again: the link's other end cannot wait for the first.
  for c in "$ctl" "$ctl_b"; do
    grep -qs "vm-run: initramfs" "$c/console" && continue
    h=a; [[ $c == "$ctl_b" ]] && h=b
    again_within "host $h" "$c"
  done
  boot_pair "$left" || { echo "vm-run: a host stalled at boot again" >&2; exit 125; }
fi
rc_a=0 rc_b=0
ended "host a" "$ctl" "$qa" || rc_a=$?
ended "host b" "$ctl_b" "$qb" || rc_b=$?
((rc_a != 0)) && exit "$rc_a"
exit "$rc_b"
}
