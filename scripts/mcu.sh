#!/usr/bin/env bash
# The board-sized build (issue 13): every portable library cross-compiled for a Cortex-M4F
# (arm-none-eabi-gcc from Debian, newlib-nano, -Os, the project's warnings, -Werror) once per
# board profile (include/k32/boards), images linked with --gc-sections against the bare-metal
# platform port (src/platform/baremetal), and a size table checked against each board's RAM
# plan. Usage:
#   scripts/mcu.sh build [OUT]        make mcu: libraries, images, OUT/size.md, budget check
#   scripts/mcu.sh test [OUT]         make test-mcu: the bench image under qemu-system-arm,
#                                     checksums compared with the host build's
#   scripts/mcu.sh budget-selftest    an image made to outgrow its board must fail the check
# Environment: MCU_BOARDS (default "cardputer devkit cortexm"), JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=${1:-build}
OUT=${2:-build-mcu}
BOARDS=${MCU_BOARDS:-cardputer devkit cortexm}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
CC=arm-none-eabi-gcc
CPU=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
# the project's flags (CMakeLists.txt) plus the board build's. -D__int64_t_defined=1: Debian's
# arm-none-eabi GCC brings its own <stdint.h>, which does not set the macro newlib's
# <inttypes.h> tests before it defines PRId64/PRIu64/PRIx64 (the 32-bit ones are there).
CFLAGS=("${CPU[@]}" --specs=nano.specs -Os -std=c11 -Wall -Wextra -Werror -D_DEFAULT_SOURCE
	-D__int64_t_defined=1
	-ffunction-sections -fdata-sections -fstack-usage -fcallgraph-info=su -I"$ROOT/include" -I"$ROOT/src"
	-I"$ROOT/src/bench" -isystem "$OUT/sysinc")
# the subsystems of CMakeLists.txt's K32_SUBSYSTEMS but the simulator's wiring (compiled too,
# below, for -Werror; never linked into a board image)
mapfile -t SUBSYSTEMS < <(sed -n 's/^set(K32_SUBSYSTEMS \(.*\))$/\1/p' CMakeLists.txt | tr ' ' '\n' | grep -v '^sim$')
[ ${#SUBSYSTEMS[@]} -gt 3 ] || { echo "mcu: no K32_SUBSYSTEMS in CMakeLists.txt" >&2; exit 1; }

# one build per output directory at a time (two would share its job lists)
if [ "$MODE" = build ] || [ "$MODE" = budget-selftest ]; then
	mkdir -p "$OUT"
	exec 9>"$OUT/.lock"
	flock -n 9 || { echo "mcu: another scripts/mcu.sh is using $OUT" >&2; exit 1; }
fi

command -v $CC >/dev/null || { echo "mcu: $CC missing (scripts/deps.sh installs gcc-arm-none-eabi)" >&2; exit 1; }

# The third-party headers the portable code includes (cJSON, http-parser, mbedTLS, zlib) come
# from Debian's -dev packages; only they are put on the cross include path, never the host's
# libc headers.
sysinc() {
	mkdir -p "$OUT/sysinc"
	for h in cjson http_parser.h mbedtls psa zlib.h zconf.h; do
		[ -e "/usr/include/$h" ] && ln -sfn "/usr/include/$h" "$OUT/sysinc/$h"
	done
}

# Library sources of a subsystem: what its CMakeLists puts in its libraries (tests, fuzz
# harnesses, benchmarks' mains, host-only tools and the posix port left out).
lib_sources() {
	find "src/$1" -name '*.c' | sort | grep -vE '_test\.c$|_fuzz\.c$|_bench\.c$|/posix/|/baremetal/(mcu_|startup_)|bench_wasm\.c$|console_stdio\.c$|bench_md\.c$|wrt_exec\.c$'
}

extra_flags() { # per-subsystem flags of the host build (src/*/CMakeLists.txt)
	case $1 in
	src/wasm/wrt_exec_*) echo "-Wconversion -fno-tree-loop-distribute-patterns" ;;
	src/wasm/*) echo "-Wconversion" ;;
	src/kobj/*) echo "-Wconversion -Wshadow" ;;
	src/cplane/*) echo "-DCPLANE_HAVE_CTRL=1" ;; # the controllers are part of the build
	esac
}

compile_board() { # board -> OUT/<board>/lib/libk32_<sub>.a
	local b=$1 up
	up=$(tr '[:lower:]' '[:upper:]' <<<"$b")
	local bo="$OUT/$b"
	mkdir -p "$bo/obj" "$bo/lib"
	: >"$bo/jobs"
	for sub in "${SUBSYSTEMS[@]}" sim; do
		[ -d "src/$sub" ] || continue
		for f in $(lib_sources "$sub"); do
			local o="$bo/obj/${f#src/}"
			o=${o%.c}.o
			mkdir -p "$(dirname "$o")"
			echo "$f $o $(extra_flags "$f")" >>"$bo/jobs"
		done
	done
	export MCU_CFLAGS="${CFLAGS[*]} -DK32_BOARD_$up"
	export CC
	# one compiler per job; the first error stops the build (xargs exits 123 on failure)
	sed -i 's/ *$//' "$bo/jobs" # xargs -L joins a line that ends in a blank with the next
	# a job writes only below OUT/<board>/obj (never over a source, whatever the job line says)
	export MCU_OBJDIR="$bo/obj/"
	xargs -P "$JOBS" -L 1 sh -c 'case "$1" in "$MCU_OBJDIR"*.o) ;; *) echo "mcu: bad job: $*" >&2; exit 255 ;; esac
		$CC $MCU_CFLAGS $2 $3 -c "$0" -o "$1"' <"$bo/jobs"
	for sub in "${SUBSYSTEMS[@]}" sim; do
		[ -d "$bo/obj/$sub" ] || continue
		rm -f "$bo/lib/libk32_$sub.a"
		find "$bo/obj/$sub" -name '*.o' | sort | xargs arm-none-eabi-ar rcs "$bo/lib/libk32_$sub.a"
	done
}

board_value() { # board macro -> its value in bytes (the board header's expression, evaluated)
	local up
	up=$(tr '[:lower:]' '[:upper:]' <<<"$1")
	printf '#include "k32/k32_config.h"\nK32_VALUE=%s\n' "$2" |
		$CC -E -P -I"$ROOT/include" -DK32_BOARD_"$up" -xc - | grep '^K32_VALUE=' | cut -d= -f2- |
		sed -E 's/([0-9]+)[uU]?[lL]*/\1/g' | python3 -c 'import sys; print(int(eval(sys.stdin.read())))'
}

# link_image board name main.c libs... -> OUT/<board>/<name>.elf; third-party symbols that
# have no Arm build in Debian (cJSON, http-parser, zlib, mbedTLS) are left unresolved and
# listed: the figures are kube32's own code and data.
link_image() {
	local b=$1 name=$2 main=$3
	shift 3
	local bo="$OUT/$b" up
	up=$(tr '[:lower:]' '[:upper:]' <<<"$b")
	local objs=("$bo/obj/platform/baremetal/k32_platform_baremetal.o")
	$CC ${MCU_CFLAGS} -DK32_BOARD_"$up" -c src/platform/baremetal/startup_cortexm.c -o "$bo/startup_$name.o"
	$CC ${MCU_CFLAGS} -DK32_BOARD_"$up" -c "$main" -o "$bo/main_$name.o"
	local extra=()
	if [ "$name" = bench ]; then
		(cd "$(dirname "$BENCH_WASM")" && arm-none-eabi-objcopy -I binary -O elf32-littlearm \
			-B arm --rename-section .data=.rodata.bench_wasm,alloc,load,readonly,data,contents \
			bench.wasm "$ROOT/$bo/bench_wasm.o")
		extra+=("$bo/bench_wasm.o")
	fi
	local libs=()
	for l in "$@"; do libs+=("$bo/lib/libk32_$l.a"); done
	local ram
	ram=$(board_value "$b" K32_BOARD_SRAM_BYTES)
	local heap
	heap=$(board_value "$b" K32_BOARD_HEAP_PLANNED_BYTES)
	local unresolved=()
	[ "$name" != bench ] && unresolved=(-Wl,--unresolved-symbols=ignore-all)
	$CC "${CPU[@]}" --specs=nano.specs --specs=rdimon.specs -nostartfiles \
		-T src/platform/baremetal/cortexm.ld -Wl,--defsym=K32_RAM_BYTES="$ram" \
		-Wl,--defsym=K32_HEAP_MIN_BYTES="${MCU_HEAP_MIN:-$heap}" -Wl,--gc-sections \
		-Wl,-Map="$bo/$name.map" "${unresolved[@]}" -o "$bo/$name.elf" "$bo/startup_$name.o" \
		"$bo/main_$name.o" "${extra[@]}" "${objs[@]}" -Wl,--start-group "${libs[@]}" -lm -lc \
		-lrdimon_nano -Wl,--end-group
	arm-none-eabi-nm -u "$bo/$name.elf" | awk '{print $2}' >"$bo/$name.undefined"
}

# The images each board links: the worker on the cardputer, the control plane on the devkit,
# the emulator's bench image on the cortexm board.
board_images() {
	case $1 in
	cardputer) echo "worker" ;;
	devkit) echo "cplane" ;;
	cortexm) echo "bench" ;;
	esac
}
image_main() { echo "src/platform/baremetal/mcu_$1_main.c"; }
image_libs() {
	case $1 in
	worker) echo "kubelet kmeta wasm kobj http hw console bench platform base" ;;
	cplane) echo "cplane ctrl kclient api kmeta store http hw kubelet wasm kobj console bench platform base" ;;
	bench) echo "bench wasm platform base" ;;
	esac
}

BENCH_WASM=${BENCH_WASM:-build/apps/bench/bench.wasm}
need_bench_wasm() {
	if [ ! -f "$BENCH_WASM" ]; then
		echo "mcu: $BENCH_WASM missing; building it (cmake --build build --target bench_wasm)" >&2
		[ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
		cmake --build build --target bench_wasm >/dev/null
	fi
}

# size_table -> OUT/size.md (Markdown) and the budget check's verdicts on stderr
size_table() {
	python3 "$ROOT/scripts/mcu_size.py" --out "$OUT" --boards "$BOARDS" \
		--budget-cmd "$0 board-value" "$@"
}

case $MODE in
board-value) # internal: scripts/mcu.sh board-value BOARD MACRO
	board_value "$2" "$3"
	exit 0 ;;
build)
	start=$(date +%s)
	sysinc
	need_bench_wasm
	for b in $BOARDS; do
		echo "mcu: $b: compiling every portable library (-Os, -Werror)" >&2
		compile_board "$b"
		export MCU_CFLAGS="${CFLAGS[*]}"
		for img in $(board_images "$b"); do
			# shellcheck disable=SC2046
			link_image "$b" "$img" "$(image_main "$img")" $(image_libs "$img")
		done
	done
	size_table
	echo "mcu: done in $(($(date +%s) - start)) s; table in $OUT/size.md" >&2
	;;
test)
	[ -f "$OUT/cortexm/bench.elf" ] || MCU_BOARDS=cortexm "$0" build "$OUT"
	command -v qemu-system-arm >/dev/null || { echo "mcu: qemu-system-arm missing (scripts/deps.sh)" >&2; exit 1; }
	# the host's checksums: the same kernels compiled natively
	cc -O2 -std=c11 -I src/bench -o "$OUT/host_kernels" -x c - src/bench/bench_kernels.c <<'HOST'
#include <stdio.h>
#include "bench_kernels.h"
int main(void)
{
	for (unsigned k = 0; k < BENCH_KERNEL_COUNT; k++)
		printf("%s 0x%08x\n", bench_kernel_name(k), bench_run(k, bench_default_n(k), 1));
	return 0;
}
HOST
	"$OUT/host_kernels" >"$OUT/host_kernels.txt"
	# icount shift=0: one instruction per virtual nanosecond, so a microsecond of the
	# emulated clock is 1000 instructions
	timeout 300 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none \
		-serial none -semihosting-config enable=on,target=native -icount shift=0 \
		-kernel "$OUT/cortexm/bench.elf" >"$OUT/qemu_bench.txt" 2>&1 || {
		cat "$OUT/qemu_bench.txt" >&2
		echo "mcu: test-mcu FAILED: the bench image did not exit 0 under QEMU" >&2
		exit 1
	}
	cat "$OUT/qemu_bench.txt"
	python3 "$ROOT/scripts/mcu_size.py" --compare "$OUT/qemu_bench.txt" "$OUT/host_kernels.txt"
	;;
budget-selftest)
	# the cortexm bench image linked with a planned heap that leaves no room: must fail
	sysinc
	need_bench_wasm
	export MCU_BOARDS=cortexm
	BOARDS=cortexm
	[ -f "$OUT/cortexm/lib/libk32_wasm.a" ] || compile_board cortexm
	export MCU_CFLAGS="${CFLAGS[*]}"
	if MCU_HEAP_MIN=$((600 * 1024)) link_image cortexm bench "$(image_main bench)" $(image_libs bench) 2>"$OUT/selftest.err"; then
		echo "mcu: budget-selftest FAILED: an image outgrowing its board linked" >&2
		exit 1
	fi
	grep -q "outgrow the board's RAM" "$OUT/selftest.err" || { cat "$OUT/selftest.err" >&2; exit 1; }
	# and the size check: a static RAM budget below the image's must fail it
	link_image cortexm bench "$(image_main bench)" $(image_libs bench)
	if MCU_STATIC_RAM_MAX_OVERRIDE=1024 size_table --md "$OUT/selftest.md" 2>"$OUT/selftest2.err"; then
		echo "mcu: budget-selftest FAILED: the size check passed an image over its budget" >&2
		exit 1
	fi
	grep -q "OVER BUDGET" "$OUT/selftest2.err" || { cat "$OUT/selftest2.err" >&2; exit 1; }
	echo "mcu: budget-selftest passed (the linker and the size check both refuse an image that outgrows its board)"
	;;
*)
	echo "usage: scripts/mcu.sh build|test|budget-selftest [OUT]" >&2
	exit 2 ;;
esac
