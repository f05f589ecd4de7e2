#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer) and runs each
# for FUZZ_SECONDS (default 20) on a scratch copy of its seed corpus, so the tree is never
# written. A crash, leak, hang or sanitizer report fails the run and leaves the reproducer in
# the scratch directory (its path is printed). CI runs this short; for a long campaign:
#   FUZZ_SECONDS=600 make fuzz
# Usage: scripts/fuzz.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
secs=${FUZZ_SECONDS:-20}
spec=../shared/testdata/wasm-spec

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DK32_FUZZ=ON \
	$(command -v ninja >/dev/null && echo -G Ninja) >/dev/null
# Build only the fuzz targets (named *_fuzz) and what they need, not the whole tree.
mapfile -t targets < <(cmake --build "$build" --target help | sed -nE 's/^([A-Za-z0-9_.-]+_fuzz)(:| ).*/\1/p' | sort -u)
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no fuzz target is defined" >&2; exit 1; }
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}"

mapfile -t fuzzers < <(find "$build" -type f -executable -name '*_fuzz' | sort)
[ ${#fuzzers[@]} -gt 0 ] || { echo "fuzz: no fuzz target was built" >&2; exit 1; }
scratch=$(mktemp -d /tmp/k32-fuzz.XXXXXX)
# Targets run FUZZ_JOBS at a time (default: one per core), each for the full FUZZ_SECONDS, so
# CI's two cores give every target the same fuzzing time in half the wall time.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

# Seeds live in tests/fuzz/<name>/corpus, or under the module's folder for targets named
# <module>_<part> (store_log -> tests/fuzz/store/corpus); the wasm target also gets the spec
# suite's modules.
seed_dirs() {
	local name=$1 d out=()
	for d in tests/fuzz/"$name"/corpus tests/fuzz/"${name%%_*}"/corpus; do
		if [ -d "$d" ] && [[ " ${out[*]:-} " != *" $d "* ]]; then
			out+=("$d")
		fi
	done
	if [ "$name" = wasm ] && [ -d "$spec" ]; then
		out+=("$spec")
	fi
	echo "${out[*]:-}"
}

# Runs one target; its verdict is the file $work.ok or $work.failed.
run_one() {
	local f=$1 name work seeds
	name=$(basename "$f" _fuzz)
	work="$scratch/$name"
	mkdir -p "$work"
	read -r -a seeds <<<"$(seed_dirs "$name")"
	if ASAN_OPTIONS=detect_leaks=1 "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" "$work" "${seeds[@]}" >"$work.log" 2>&1; then
		touch "$work.ok"
	else
		touch "$work.failed"
	fi
}

if [ ! -d "$spec" ] && [ "${CI:-}" = true ]; then
	echo "fuzz: $spec is missing; failing because CI=true" >&2
	exit 1
fi
echo "fuzz: ${#fuzzers[@]} targets, ${secs}s each, $jobs at a time"
running=0
for f in "${fuzzers[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_one "$f" &
	running=$((running + 1))
done
wait

failed=0
for f in "${fuzzers[@]}"; do
	name=$(basename "$f" _fuzz)
	work="$scratch/$name"
	echo "== $name: seeds: $(seed_dirs "$name")"
	if [ -e "$work.ok" ]; then
		grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$work.log" | tr '\n' ' '
		echo
	else
		echo "fuzz: $name FAILED; log $work.log, reproducer in $work/" >&2
		tail -30 "$work.log" >&2
		failed=1
	fi
done
[ "$failed" -eq 0 ] && rm -rf "$scratch"
exit "$failed"
