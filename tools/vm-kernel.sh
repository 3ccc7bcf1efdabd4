#!/usr/bin/env bash
# Fetches Debian's stock kernel for the soft-RoCE test VM and unpacks it into a
# cache, without installing it on the host (a container's /boot is not ours to
# touch). Prints the cache directory of the unpacked kernel on stdout.
#
# Debian's kernel is the one users run, and it ships rdma_rxe as a module,
# which is why we boot it rather than build our own.
#
# Usage: tools/vm-kernel.sh [--quiet]
# Env:   RIOMESH_VM_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/riomesh-vm)
#        RIOMESH_VM_KERNEL kernel package (default: what linux-image-amd64 depends on)
set -euo pipefail
quiet=0; [[ ${1:-} == --quiet ]] && quiet=1
say() { ((quiet)) || echo "vm-kernel: $*" >&2; }

cache=${RIOMESH_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/riomesh-vm}
mkdir -p "$cache"

resolve() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}
pkg=${RIOMESH_VM_KERNEL:-}
[[ -z $pkg && -s $cache/package ]] && pkg=$(<"$cache/package")
if [[ -z $pkg ]]; then
  pkg=$(resolve)
  if [[ -z $pkg ]]; then apt-get update >&2; pkg=$(resolve); fi
  [[ -n $pkg ]] || { echo "vm-kernel: cannot resolve linux-image-amd64" >&2; exit 1; }
  echo "$pkg" >"$cache/package"
fi

# What the unpacked tree keeps changes now and then; a cache of another
# layout is fetched again.
layout=2  # 2: vgem and the DRM core it needs kept (a dma-buf exporter)
dir=$cache/$pkg
if [[ -f $dir/.complete && $(<"$dir/.complete") == "layout $layout" ]]; then
  echo "$dir"
  exit 0
fi

echo "vm-kernel: fetching $pkg (once; unpacked into $dir)" >&2
work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt's download sandbox user cannot write into root's home: run it as root.
sandbox=(); ((EUID == 0)) && sandbox=(-o APT::Sandbox::User=root)
(cd "$work" && { apt-get "${sandbox[@]}" download "$pkg" >&2 ||
                 { apt-get update >&2 && apt-get "${sandbox[@]}" download "$pkg" >&2; }; })
dpkg-deb -x "$work"/*.deb "$work/root"
kver=$(ls "$work/root/lib/modules")
# A headless VM needs no sound, GPU, USB or wireless drivers: dropping them
# halves the cache. Of the GPU drivers it keeps vgem, a virtual one whose
# buffers export as dma-buf: the tests' stand-in for device memory.
(cd "$work/root/lib/modules/$kver/kernel" &&
  rm -rf sound drivers/{media,staging,iio,hwmon,usb,bluetooth,hid,isdn,mmc,mtd} \
         drivers/net/{wireless,ethernet,can,usb} &&
  find drivers/gpu -name '*.ko*' ! -path '*/vgem/*' ! -name 'drm.ko*' \
       ! -name 'drm_shmem_helper.ko*' -delete)
depmod -b "$work/root" "$kver"  # the package leaves modules.dep to its postinst
# QEMU can boot the uncompressed ELF kernel directly (PVH entry), which spares
# the guest a slow xz decompression under TCG; fall back to bzImage otherwise.
bz=$(echo "$work"/root/boot/vmlinuz-*)
# xz complains about the bytes that follow the stream; the ELF check decides.
off=$(LC_ALL=C grep -abo $'\xfd7zXZ' "$bz" | head -1 | cut -d: -f1 || true)
[[ -n $off ]] && { tail -c +$((off + 1)) "$bz" | xz -dc >"$work/root/boot/vmlinux" 2>/dev/null || true; }
if readelf -h "$work/root/boot/vmlinux" >/dev/null 2>&1; then
  say "using the uncompressed kernel"
else
  rm -f "$work/root/boot/vmlinux"
fi
echo "$kver" >"$work/root/kernel-release"
rm -rf "$dir"; mv "$work/root" "$dir"; echo "layout $layout" >"$dir/.complete"
echo "$dir"
