#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the example node's
# configuration through riomesh (until the pub/sub cluster lands, this shows
# the effective settings and the fabric the node would use).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/deps.sh"
"$root/tools/build.sh" "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
exec "$root/build/tools/riomesh" config show "$root/examples/node.yaml" "$@"
