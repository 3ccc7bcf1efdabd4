#!/usr/bin/env bash
# Runs SCRIPT on two hosts (tools/vm-run.sh -2), with a folder both see for
# their rendezvous: RIOMESH_TWOHOST_FLAGS, made in the working folder
# (shared into both VMs) and removed afterwards.
#
# Usage: two_hosts.sh VM_SECONDS SCRIPT [ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vm_seconds=$1; shift
flags=$(mktemp -d "$PWD/twohost-flags.XXXXXX")
trap 'rm -rf "$flags"' EXIT
rc=0
RIOMESH_TWOHOST_FLAGS=$flags "$here/../../tools/vm-run.sh" -2 -t "$vm_seconds" -- "$@" || rc=$?
exit $rc
