#!/usr/bin/env bash
# `make bench`: runs each subsystem's benchmark program from the build directory $1 and
# prints its lines. Each section skips (and says so) when its program was not built.
# Numbers are measured here, side by side, on this machine's disk and cores.
set -euo pipefail
BUILD="${1:-build}"

# store: fsynced single-write latency, list of 100 objects, watcher memory
if [ -x "$BUILD/src/store/store-bench" ]; then
	mkdir -p "$BUILD/store-bench-data"
	"$BUILD/src/store/store-bench" "$BUILD/store-bench-data"
else
	echo "bench: store-bench not built; skipping"
fi
