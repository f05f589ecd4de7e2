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
	-I"$ROOT/src/bench" -isystem "$OUT/sysinc"
	-DMBEDTLS_USER_CONFIG_FILE=\"$ROOT/src/platform/baremetal/mbedtls_baremetal.h\")
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
# When the third-party sources were fetched (thirdparty below), their own headers are used
# instead, so kube32 and the libraries are compiled against the same configuration.
sysinc() {
	mkdir -p "$OUT/sysinc"
	for h in cjson http_parser.h mbedtls psa zlib.h zconf.h; do
		[ -e "/usr/include/$h" ] && ln -sfn "/usr/include/$h" "$OUT/sysinc/$h"
	done
	if [ "$TP_OK" = 1 ]; then
		rm -rf "$OUT/sysinc/cjson"
		mkdir -p "$OUT/sysinc/cjson"
		ln -sfn "$TP/src/cjson/cJSON.h" "$OUT/sysinc/cjson/cJSON.h"
		ln -sfn "$TP/src/http-parser/http_parser.h" "$OUT/sysinc/http_parser.h"
		ln -sfn "$TP/src/mbedtls/include/mbedtls" "$OUT/sysinc/mbedtls"
		ln -sfn "$TP/src/mbedtls/include/psa" "$OUT/sysinc/psa"
	fi
}

# Third-party libraries for Arm. Debian ships cJSON, http-parser and mbedTLS for the host
# only, so their source packages (the same versions as the installed -dev packages, whose
# headers the portable code is compiled against) are fetched with `apt-get source` through a
# private apt state below OUT (the system's apt configuration is not touched), unpacked with
# dpkg-source (Debian's patches applied) and cross-compiled with the images' flags into
# OUT/thirdparty/lib/libtp_<package>.a. Nothing of them is kept in the tree. zlib is not
# needed: the boards build with K32_HTTP_GZIP=0. mbedTLS is built with
# src/platform/baremetal/mbedtls_baremetal.h (no sockets, files or OS timing on the board).
# Without the network the images link with the third-party symbols left unresolved (the size
# table says so); under CI=true that fails the build.
TP="$(realpath -m "$OUT")/thirdparty"
TP_PACKAGES="cjson:libcjson-dev http-parser:libhttp-parser-dev mbedtls:libmbedtls-dev"
TP_CONFIG="-DMBEDTLS_USER_CONFIG_FILE=\"$ROOT/src/platform/baremetal/mbedtls_baremetal.h\""
TP_OK=0
tp_sources() { # package dir -> the library's C sources
	case $1 in
	cjson) echo "$2/cJSON.c" ;;
	http-parser) echo "$2/http_parser.c" ;;
	mbedtls) find "$2/library" -name '*.c' | sort ;;
	esac
}
tp_fail() {
	echo "mcu: third-party sources unavailable: $*" >&2
	if [ "${CI:-}" = true ]; then
		echo "mcu: FAILED under CI=true: the images must link whole (cJSON, http-parser, mbedTLS)" >&2
		exit 1
	fi
	echo "mcu: the worker and control-plane images link with their symbols unresolved" >&2
}
thirdparty() {
	local want=() pkg dev ver
	for pkg in $TP_PACKAGES; do
		dev=${pkg#*:}
		ver=$(dpkg-query -W -f='${source:Version}' "$dev" 2>/dev/null) ||
			{ tp_fail "$dev is not installed (scripts/deps.sh)"; return 0; }
		want+=("${pkg%%:*}=$ver")
	done
	local stamp="$TP/lib/.versions" key
	# rebuilt when a version or the board's mbedTLS configuration changes
	key="${want[*]} $(sha1sum src/platform/baremetal/mbedtls_baremetal.h | cut -c1-12)"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
		TP_OK=1
		return 0
	fi
	echo "mcu: third-party: apt-get source ${want[*]} (cross-compiled into $TP)" >&2
	rm -rf "$TP"
	mkdir -p "$TP/apt/lists/partial" "$TP/apt/cache/archives/partial" "$TP/src" "$TP/obj" "$TP/lib"
	# the system's Debian mirror and suites, as deb-src lines
	local uri suites
	uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
	suites=$(sed -n 's/^Suites: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
	echo "deb-src ${uri:-http://deb.debian.org/debian} ${suites:-bookworm bookworm-updates} main" \
		>"$TP/apt/sources.list"
	local apt=(-o Dir::Etc::SourceList="$TP/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$TP/apt/lists" -o Dir::Cache="$TP/apt/cache"
		-o APT::Sandbox::User="$(id -un)" -qq)
	if ! timeout 300 apt-get "${apt[@]}" update >"$TP/apt.log" 2>&1 ||
		! (cd "$TP/src" && timeout 300 apt-get "${apt[@]}" source --download-only "${want[@]}") \
			>>"$TP/apt.log" 2>&1; then
		tp_fail "apt-get source failed (no network or no deb-src?): $(tail -1 "$TP/apt.log")"
		return 0
	fi
	local dsc dir
	: >"$TP/jobs"
	for dsc in "$TP"/src/*.dsc; do
		pkg=$(basename "$dsc" | cut -d_ -f1)
		dir="$TP/src/$pkg"
		# --no-check: the .dsc came through apt, which checked it against the signed index
		dpkg-source --no-check -x "$dsc" "$dir" >>"$TP/apt.log" 2>&1 ||
			{ tp_fail "dpkg-source -x $dsc failed"; return 0; }
		local inc="-I$dir"
		[ -d "$dir/include" ] && inc="-I$dir/include"
		for f in $(tp_sources "$pkg" "$dir"); do
			local o
			o="$TP/obj/$pkg/$(basename "$f" .c).o"
			mkdir -p "$(dirname "$o")"
			echo "$f $o $inc" >>"$TP/jobs"
		done
	done
	# the images' target and size flags; the projects' own warnings, not kube32's -Werror
	export TP_CFLAGS="${CPU[*]} --specs=nano.specs -Os -std=gnu11 -ffunction-sections
		-fdata-sections -fstack-usage -fcallgraph-info=su $TP_CONFIG"
	export CC
	xargs -P "$JOBS" -L 1 sh -c '$CC $TP_CFLAGS $2 -w -c "$0" -o "$1"' <"$TP/jobs" ||
		{ tp_fail "cross-compiling them failed"; return 0; }
	for d in "$TP"/obj/*/; do
		pkg=$(basename "$d")
		find "$d" -name '*.o' | sort | xargs arm-none-eabi-ar rcs "$TP/lib/libtp_$pkg.a"
	done
	echo "$key" >"$stamp"
	TP_OK=1
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

# link_image board name main.c libs... -> OUT/<board>/<name>.elf, with the third-party
# libraries built by thirdparty(); without them their symbols are left unresolved and listed.
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
		# the pods as read-only data: _binary_<name>_wasm_start/_end
		local w
		for w in "$BENCH_WASM" "$DRIVERS_DIR/bme688.wasm" "$DRIVERS_DIR/miniscale.wasm" \
			"$DRIVERS_DIR/rfid.wasm"; do
			local base
			base=$(basename "$w" .wasm)
			(cd "$(dirname "$w")" && arm-none-eabi-objcopy -I binary -O elf32-littlearm -B arm \
				--rename-section .data=.rodata."$base"_wasm,alloc,load,readonly,data,contents \
				"$base.wasm" "$ROOT/$bo/${base}_wasm.o")
			extra+=("$bo/${base}_wasm.o")
		done
		# the driver run (mcu_drivers.c), the same file the host side compiles
		$CC ${MCU_CFLAGS} -DK32_BOARD_"$up" -c src/platform/baremetal/mcu_drivers.c \
			-o "$bo/mcu_drivers.o"
		extra+=("$bo/mcu_drivers.o")
	fi
	local libs=()
	for l in "$@"; do libs+=("$bo/lib/libk32_$l.a"); done
	local ram
	ram=$(board_value "$b" K32_BOARD_SRAM_BYTES)
	local heap
	heap=$(board_value "$b" K32_BOARD_HEAP_PLANNED_BYTES)
	local unresolved=()
	if [ "$name" != bench ]; then
		if [ "$TP_OK" = 1 ]; then
			for l in "$TP"/lib/libtp_*.a; do libs+=("$l"); done
		else
			unresolved=(-Wl,--unresolved-symbols=ignore-all)
		fi
	fi
	# -u _printf_float: newlib-nano's printf leaves %f out unless asked, and the readings of
	# the hw host functions ("%.*f") and cJSON's numbers ("%1.15g") need it (test-mcu found
	# every numeric driver reading empty without it); ESP-IDF's default newlib has it too
	$CC "${CPU[@]}" --specs=nano.specs --specs=rdimon.specs -nostartfiles -u _printf_float \
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
	worker) echo "kubelet kclient kmeta wasm kobj http hw console bench platform base" ;;
	cplane) echo "cplane ctrl kclient api kmeta store http hw kubelet wasm kobj console bench platform base" ;;
	bench) echo "bench hw wasm platform base" ;;
	esac
}

BENCH_WASM=${BENCH_WASM:-build/apps/bench/bench.wasm}
DRIVERS_DIR=${DRIVERS_DIR:-build/apps/drivers}
# the pods the bench image carries (bench and the three drivers) come from the host build;
# they need clang and wasm-ld (scripts/deps.sh)
need_bench_wasm() {
	local t missing=()
	[ -f "$BENCH_WASM" ] || missing+=(bench_wasm)
	for t in bme688 miniscale rfid; do
		[ -f "$DRIVERS_DIR/$t.wasm" ] || missing+=("${t}_wasm")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "mcu: building the pods the bench image carries (cmake --build build --target ${missing[*]})" >&2
	[ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j "$JOBS" --target "${missing[@]}" >/dev/null
}

# size_table -> OUT/size.md (Markdown) and the budget check's verdicts on stderr
size_table() {
	python3 "$ROOT/scripts/mcu_size.py" --out "$OUT" --boards "$BOARDS" \
		--budget-cmd "$0 board-value" --thirdparty "$TP" "$@"
}

# The cardputer's RAM at the pods stage, measured: kube32-sim built with the board's limits
# (-DK32_BOARD_CARDPUTER; a host build, so pointers and size_t are twice the board's and the
# figure bounds the board's from above; host-sized task stacks, K32_BOARD_HOST_STACKS, which
# are not heap), its boot report with the three driver pods running (--boot-devices). The
# node heap's peak (boot to pods, the module loader's scratch included) must fit the node
# heap the board header plans (K32_CARDPUTER_NODE_HEAP_BYTES), and the worker image's static
# RAM + pod pool + interpreter stack + planned task stacks + that peak must leave the system
# reserve (160 KiB for ESP-IDF, Wi-Fi, lwIP and one TLS session). OUT/ram.md has the figures.
# MCU_NODE_HEAP_MAX_OVERRIDE (budget-selftest) lowers the planned node heap to prove it fails.
ram_measure() {
	local hc="$OUT/host-cardputer"
	local flags="-DK32_BOARD_CARDPUTER -DK32_BOARD_HOST_STACKS -DK32_KLET_WATCHER_STACK_BYTES=65536u"
	flags+=" -DK32_CTRL_INFORMER_STACK_BYTES=262144u -DK32_CPLANE_RELAY_STACK_BYTES=32768u"
	flags+=" -DK32_KLET_NODE_TASK_STACK=65536u"
	if [ ! -f "$hc/CMakeCache.txt" ] || ! grep -q -- "-DK32_BOARD_HOST_STACKS" "$hc/CMakeCache.txt"; then
		CC=cc cmake -S . -B "$hc" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS=$flags" >/dev/null
	fi
	cmake --build "$hc" -j "$JOBS" --target kube32-sim >/dev/null ||
		{ echo "mcu: FAILED: kube32-sim does not build with the cardputer's limits" >&2; exit 1; }
	rm -rf "$hc/boot"
	"$hc/cmd/kube32-sim/kube32-sim" --boot-report cardputer --boot-devices \
		--images "$DRIVERS_DIR" --data-dir "$hc/boot" >"$OUT/boot_cardputer.txt" 2>"$OUT/boot_cardputer.err" || {
		cat "$OUT/boot_cardputer.txt" "$OUT/boot_cardputer.err" >&2
		echo "mcu: FAILED: the cardputer's boot report (three driver pods) did not complete" >&2
		exit 1
	}
	local static
	static=$(arm-none-eabi-size -B "$OUT/cardputer/worker.elf" | awk 'NR==2 {print $2 + $3}')
	python3 - "$OUT" "$static" \
		"$(board_value cardputer K32_CARDPUTER_SRAM_BYTES)" \
		"$(board_value cardputer K32_CARDPUTER_SYSTEM_RESERVE_BYTES)" \
		"$(board_value cardputer K32_CARDPUTER_POD_POOL_BYTES)" \
		"$(board_value cardputer K32_CARDPUTER_INTERP_STACK_BYTES)" \
		"$(board_value cardputer K32_CARDPUTER_TASK_STACKS_BYTES)" \
		"${MCU_NODE_HEAP_MAX_OVERRIDE:-$(board_value cardputer K32_CARDPUTER_NODE_HEAP_BYTES)}" <<'PY'
import re, sys
out, static, sram, reserve, pool, interp, stacks, heap_max = sys.argv[1], *map(int, sys.argv[2:])
rep = open(out + "/boot_cardputer.txt").read()
st = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in
      re.finditer(r"stage=(\w+) .*node_heap=(\d+) node_heap_peak=(\d+)", rep)}
end = re.search(r"K32_BOOT_END .*pods=(\d+) .*pool_used=(\d+) .*ptr_bytes=(\d+)", rep)
if "pods" not in st or "kubelet" not in st or not end or end.group(1) != "3":
    sys.exit("mcu: FAILED: no kubelet/pods stage with 3 pods in " + out + "/boot_cardputer.txt")
peak = st["pods"][1]
left = sram - static - pool - interp - stacks - peak
rows = [("static RAM of the worker image (.data + .bss, Cortex-M4F)", static),
        ("pod pool reserved at boot", pool), ("interpreter stack", interp),
        ("other task stacks (planned)", stacks),
        ("node heap at the kubelet stage", st["kubelet"][0]),
        ("node heap at the pods stage (3 driver pods)", st["pods"][0]),
        ("node heap peak, boot to pods (counted below)", peak),
        ("left for ESP-IDF, Wi-Fi, lwIP and one TLS session", left)]
md = ["# cardputer RAM at the pods stage (scripts/mcu.sh ram_measure)", "",
      "Node heap from `kube32-sim --boot-report cardputer --boot-devices` built with the "
      "board's limits on a %d-bit host (an upper bound of the board's 32-bit figure); "
      "the three driver pods hold %d B of the pool." % (8 * int(end.group(3)), int(end.group(2))),
      "", "| | bytes |", "| --- | ---: |"] + ["| %s | %d |" % r for r in rows]
md.append("| required: at least | %d (%.1f KiB) |" % (reserve, reserve / 1024))
open(out + "/ram.md", "w").write("\n".join(md) + "\n")
print("mcu: cardputer RAM: static %d + pool %d + interpreter stack %d + task stacks %d + node "
      "heap peak %d (pods stage %d, three drivers) leave %d B (%.1f KiB) of %d; reserve %d" %
      (static, pool, interp, stacks, peak, st["pods"][0], left, left / 1024, sram, reserve),
      file=sys.stderr)
bad = []
if peak > heap_max:
    bad.append("the node heap's peak %d B is over the planned K32_CARDPUTER_NODE_HEAP_BYTES=%d"
               % (peak, heap_max))
if left < reserve:
    bad.append("%d B left, under the %d B system reserve" % (left, reserve))
for b in bad:
    print("mcu: RAM OVER BUDGET (cardputer): " + b + "; find the growth with the boot "
          "report's stages, shrink it or lower the board's limits (include/k32/boards/)",
          file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

case $MODE in
board-value) # internal: scripts/mcu.sh board-value BOARD MACRO
	board_value "$2" "$3"
	exit 0 ;;
build)
	start=$(date +%s)
	thirdparty
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
	case " $BOARDS " in *" cardputer "*) ram_measure ;; esac
	# the host build without zlib (-DK32_HTTP_GZIP=OFF, what the boards compile in) must not
	# rot: the control-plane server built that way, and linked without zlib
	echo "mcu: host build with -DK32_HTTP_GZIP=OFF (kube32-server and http_test without zlib)" >&2
	[ -f "$OUT/host-nogzip/CMakeCache.txt" ] ||
		CC=cc cmake -S . -B "$OUT/host-nogzip" -DCMAKE_BUILD_TYPE=Release -DK32_HTTP_GZIP=OFF >/dev/null
	cmake --build "$OUT/host-nogzip" -j "$JOBS" --target kube32-server http_test >/dev/null ||
		{ echo "mcu: FAILED: kube32-server or http_test does not build with -DK32_HTTP_GZIP=OFF" >&2; exit 1; }
	# and the HTTP unit tests pass there (answers plain, gzip refused with its reason)
	local_log="$(realpath -m "$OUT")/http_test_nogzip.log"
	(cd "$OUT/host-nogzip" && ctest -R '^http_test$' --output-on-failure >"$local_log" 2>&1) ||
		{ tail -30 "$OUT/http_test_nogzip.log" >&2; echo "mcu: FAILED: http_test without zlib" >&2; exit 1; }
	if readelf -d "$OUT/host-nogzip/cmd/kube32-server/kube32-server" | grep -q 'libz\.' ||
		nm "$OUT/host-nogzip/cmd/kube32-server/kube32-server" | grep -qE ' (deflate|inflate)(Init2_)?$'; then
		echo "mcu: FAILED: kube32-server built with -DK32_HTTP_GZIP=OFF still uses zlib" >&2
		exit 1
	fi
	echo "mcu: done in $(($(date +%s) - start)) s; table in $OUT/size.md" >&2
	;;
test)
	[ -f "$OUT/cortexm/bench.elf" ] || MCU_BOARDS=cortexm "$0" build "$OUT"
	need_bench_wasm
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
	# the host's driver readings: mcu_drivers.c natively, against the host build's libraries
	cmake --build build -j "$JOBS" --target k32_hw k32_wasm_goto >/dev/null
	cc -O2 -std=c11 -D_DEFAULT_SOURCE -I include -I src -o "$OUT/host_drivers" \
		src/platform/baremetal/mcu_drivers.c src/platform/baremetal/mcu_drivers_host.c \
		-Wl,--start-group build/src/hw/libk32_hw.a build/src/wasm/libk32_wasm_goto.a \
		build/src/kmeta/libk32_kmeta.a build/src/platform/libk32_platform.a \
		build/src/base/libk32_base.a -Wl,--end-group -lcjson -lpthread -lm
	"$OUT/host_drivers" "$DRIVERS_DIR" >"$OUT/host_drivers.txt" || {
		cat "$OUT/host_drivers.txt" >&2
		echo "mcu: test-mcu FAILED: the driver pods did not run on the host" >&2
		exit 1
	}
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
	python3 "$ROOT/scripts/mcu_size.py" --compare "$OUT/qemu_bench.txt" "$OUT/host_kernels.txt" \
		--drivers "$OUT/host_drivers.txt"
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
	# and the stack check: a task stack below its worst static path must fail it
	if MCU_TASK_STACK_OVERRIDE=256 size_table --md "$OUT/selftest.md" 2>"$OUT/selftest3.err"; then
		echo "mcu: budget-selftest FAILED: the size check passed a task whose stack is too small" >&2
		exit 1
	fi
	grep -q "worst static stack path" "$OUT/selftest3.err" || { cat "$OUT/selftest3.err" >&2; exit 1; }
	# and the measured RAM: a planned node heap below the boot report's peak must fail it
	if [ -f "$OUT/cardputer/worker.elf" ]; then
		if MCU_NODE_HEAP_MAX_OVERRIDE=1024 ram_measure 2>"$OUT/selftest4.err"; then
			echo "mcu: budget-selftest FAILED: the RAM check passed a node heap over its plan" >&2
			exit 1
		fi
		grep -q "RAM OVER BUDGET" "$OUT/selftest4.err" || { cat "$OUT/selftest4.err" >&2; exit 1; }
	else
		echo "mcu: budget-selftest: no cardputer worker image (MCU_BOARDS): RAM check not self-tested" >&2
	fi
	echo "mcu: budget-selftest passed (the linker and the size check refuse an image that outgrows its board, a task whose worst stack path outgrows its stack, and a measured node heap over its plan)"
	;;
*)
	echo "usage: scripts/mcu.sh build|test|budget-selftest [OUT]" >&2
	exit 2 ;;
esac
