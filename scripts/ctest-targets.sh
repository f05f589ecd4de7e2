#!/usr/bin/env bash
# Prints the build targets that the ctest tests with a label run, from a configured build
# tree (built or not), so a build can make only what those tests need (make test-tsan).
# A test's target is its executable when ctest knows it, else a target of the test's name.
# Usage: scripts/ctest-targets.sh BUILD_DIR LABEL
set -euo pipefail
cd "$1"
targets=$(cmake --build . --target help | sed -nE 's/^([A-Za-z0-9_.-]+)(:| ).*/\1/p')
ctest -N -L "$2" --show-only=json-v1 | TARGETS="$targets" python3 -c '
import json, os, sys
known = set(os.environ["TARGETS"].split())
names = set()
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or []
    for cand in ([os.path.basename(cmd[0])] if cmd else []) + [t["name"]]:
        if cand in known:
            names.add(cand)
            break
print(" ".join(sorted(names)))
'
