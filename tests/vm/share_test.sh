#!/usr/bin/env bash
# The VM runner shares its project's tree wherever the project was cloned
# (the guest's /tmp is its own): a copy of the runner in a project folder
# under /tmp, started from another folder under /tmp, must read a file of
# that project inside the VM, and what the guest writes there must reach
# the host.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/riomesh-vmshare-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/project/tools" "$tmp/project/tests" "$tmp/elsewhere"
# Copies keep their times: the runner's cached initramfs stays valid.
cp -p "$src/tools/vm-run.sh" "$src/tools/vm-kernel.sh" "$tmp/project/tools/"
echo "seen by the guest $$" >"$tmp/project/tests/marker"
cd "$tmp/elsewhere"
out=$("$tmp/project/tools/vm-run.sh" -t 300 -- cat "$tmp/project/tests/marker" 2>&1) || true
if [[ $out != "seen by the guest $$" ]]; then
  echo "FAILED: the guest read '$out' from $tmp/project/tests/marker"
  exit 1
fi
"$tmp/project/tools/vm-run.sh" -t 300 -- sh -c "echo written by the guest >$tmp/project/tests/reply" || true
if [[ $(cat "$tmp/project/tests/reply" 2>/dev/null) != "written by the guest" ]]; then
  echo "FAILED: what the guest wrote into the project did not reach the host"
  exit 1
fi
echo "ok: a project under /tmp is shared with the VM, both ways"
