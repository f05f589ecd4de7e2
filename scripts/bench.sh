#!/usr/bin/env bash
# `make bench`: measures kube32 on this machine and regenerates docs/benchmarks.md.
#
#   scripts/bench.sh BUILD_DIR          every part of the page, the other benchmarks, then the page
#   scripts/bench.sh BUILD_DIR PART     one part (each takes at most a few minutes):
#       setup wasm sim ops stack memory boot cpu api footprint kobj console  (the page's parts)
#       others                          the benchmarks below that are not on the page
#       scale                           fleet scale (scripts/bench_scale.sh, ~15 min): boards
#                                       per process, pods through Deployments, --join rounds
#       page                            rewrite docs/benchmarks.md from the parts run so far
#
# The page's parts are run by scripts/bench_page.py, which writes each part's Markdown to
# BUILD_DIR/bench-out/PART.md; `page` assembles them in the reference page's order. Figures
# are only meaningful as ratios measured side by side in one run (the machine is shared and
# noisy). BENCH_CPU_SECONDS shortens the 60 s CPU windows for a quick run (the page uses 60).
set -euo pipefail
build=${1:-build}
part=${2:-all}
here=$(cd "$(dirname "$0")" && pwd)
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

others() {
	# One line per benchmark.

	# Control plane store: fsynced single-write latency, list of 100 objects, watcher memory.
	mkdir -p "$build/store-bench-data"
	bench src/store/store-bench "$build/store-bench-data"

	# Controllers: pod created -> bound by the scheduler, ReplicaSet scaled -> its pod bound.
	bench src/ctrl/ctrl-bench 50

	# HTTP layer (GET latency, 500 streams, wake latency, TLS cost) and the API layer
	# in-process (list/get/patch without sockets).
	bench src/http/http-bench "$build/http-bench-data"
	bench src/api/api-bench 2000

	# Driver pods: CPU per tick of bme688/miniscale/rfid as Wasm over the simulated devices, rfid 5 Hz cost.
	bench apps/drivers/drivers-bench 2000
	[ -x "$build/cmd/kube32-server/kube32-server" ] && echo "== bench_api.py --tls --runs 3 (API server over HTTPS, issue 5)" && python3 "$here/../tests/e2e/bench_api.py" "$build/cmd/kube32-server/kube32-server" --tls --runs 3 --idle-s 0 && ran=$((ran + 1))

	if [ "$ran" -eq 0 ]; then
		echo "bench: none of the other benchmarks is built yet; nothing was measured"
	fi
}

page_parts="setup wasm sim ops stack memory boot cpu api footprint kobj console"
case "$part" in
all)
	failed=
	for p in $page_parts; do
		echo "== bench part $p"
		python3 "$here/bench_page.py" "$build" "$p" || failed="$failed $p"
		echo
	done
	others
	python3 "$here/bench_page.py" "$build" page
	if [ -n "$failed" ]; then
		echo "bench: these parts failed:$failed (the page says so where they left no output)" >&2
		exit 1
	fi
	;;
others)
	others
	;;
scale)
	bash "$here/bench_scale.sh" "$build"
	;;
*)
	python3 "$here/bench_page.py" "$build" "$part"
	;;
esac
