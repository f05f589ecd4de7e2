#!/usr/bin/env bash
# `make bench`: runs each built benchmark in turn on this machine and prints its table.
# Figures are only meaningful as ratios measured side by side in one run (the machine is
# shared and noisy); each benchmark prints its own comparison rows.
# Usage: scripts/bench.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
ran=0

bench() { # bench RELATIVE_BINARY [ARGS...]
	local bin=$build/$1
	shift
	if [ -x "$bin" ]; then
		echo "== $(basename "$bin") $*"
		"$bin" "$@"
		echo
		ran=$((ran + 1))
	fi
}

# One line per benchmark, in the order of the benchmarks page.

# Wasm against native code: the six kernels, host call crossing, code size, op counts.
bench src/bench/wasm-bench --section kernels
bench src/bench/wasm-bench --section ops
bench src/bench/wasm-bench --section stack

# Control plane store: fsynced single-write latency, list of 100 objects, watcher memory.
mkdir -p "$build/store-bench-data"
bench src/store/store-bench "$build/store-bench-data"

# Kernel objects: the zircon-benchmarks list vs pipe/socketpair/eventfd/futex/condvar/pthread.
bench cmd/kube32-bench/kube32-bench micro

# Controllers: pod created -> bound by the scheduler, ReplicaSet scaled -> its pod bound.
bench src/ctrl/ctrl-bench 50

# Driver pods: CPU per tick of bme688/miniscale/rfid as Wasm over the simulated devices, rfid 5 Hz cost.
bench apps/drivers/drivers-bench 2000

if [ "$ran" -eq 0 ]; then
	echo "bench: no benchmark is built yet; nothing was measured"
fi
