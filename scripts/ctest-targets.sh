#!/usr/bin/env bash
# Prints the executable target names of the ctest tests with a label, from a configured
# build tree, so a build can make only what those tests run (make test-tsan).
# Usage: scripts/ctest-targets.sh BUILD_DIR LABEL
set -euo pipefail
cd "$1"
ctest -N -L "$2" --show-only=json-v1 | python3 -c '
import json, os, sys
names = set()
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or []
    # Only programs built in this tree; scripts run by bash or python3 need no target.
    if cmd and os.path.realpath(cmd[0]).startswith(os.path.realpath(".") + os.sep):
        names.add(os.path.basename(cmd[0]))
print(" ".join(sorted(names)))
'
