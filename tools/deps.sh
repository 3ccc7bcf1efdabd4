#!/usr/bin/env bash
# Installs every Debian package riomesh needs to build, test and run its VM.
# Idempotent: asks dpkg first and calls apt-get only for what is missing, so a
# machine that has everything pays a single dpkg-query (well under a second).
#
# Usage: tools/deps.sh [--check]     --check: list what is missing, install nothing
set -euo pipefail

# build: compilers, CMake and the -dev packages the CMake files look for
build=(g++ cmake make ninja-build pkg-config
       libcaf-dev libyaml-cpp-dev doctest-dev libibverbs-dev librdmacm-dev libssl-dev
       libdrm-dev libcpp-httplib-dev libsystemd-dev)
# run and test: the RDMA userland (providers, rsocket peers, perftest for the floor)
rdma=(rdma-core ibverbs-providers ibverbs-utils rdmacm-utils librdmacm1 perftest)
# the soft-RoCE VM: QEMU, a static busybox for its initramfs, the tools that build
# it; iproute2 also makes the network namespaces of the pub/sub cluster test
vm=(qemu-system-x86 busybox-static cpio kmod xz-utils binutils iproute2)
# fuzzing (libFuzzer ships with clang's runtime), charts, and instruction
# counts (bench/instructions.sh: callgrind)
extra=(clang libclang-rt-14-dev gnuplot-nox valgrind)
# the metrics test scrapes a cluster with Prometheus itself; the service
# test reads the unit with systemd-analyze
ops=(prometheus systemd)

want=("${build[@]}" "${rdma[@]}" "${vm[@]}" "${extra[@]}" "${ops[@]}")

declare -A have=()
while read -r pkg status; do
  [[ $status == "install ok installed" ]] && have[$pkg]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${want[@]}" 2>/dev/null || true)

missing=()
for p in "${want[@]}"; do [[ -n ${have[$p]:-} ]] || missing+=("$p"); done

if [[ ${1:-} == --check ]]; then
  if ((${#missing[@]})); then echo "deps: missing: ${missing[*]}"; exit 1; fi
  echo "deps: all present"; exit 0
fi

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}" >&2
  sudo=(); ((EUID == 0)) || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have stale package lists; update once, only if needed.
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    { "${sudo[@]}" apt-get update >&2 &&
      "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
fi

# The VM boots Debian's kernel without installing it on the host: fetch and
# unpack the package once into the VM runner's cache.
"$(dirname "$0")/vm-kernel.sh" --quiet >/dev/null
