# sim_lib.sh - shared by the kube32-sim end-to-end scripts (cluster, ctrl, devices); source it.
#
# sim_skip WHO WHAT HOW: a prerequisite is missing: prints why and exits 77 (skipped), or 1
#   under CI=true (CI never passes by skipping).
# sim_workdir NAME PODS_DIR: sets WORK (a fresh /tmp/kube32-NAME.XXXXXX), DATA (WORK/data),
#   HOME and KUBECONFIG (exported), copies PODS_DIR/*.wasm into WORK/images and, at exit,
#   kills the processes whose pids are in the variables SIM_PIDS names ("SIM_PID JOIN_PID"
#   unless the script sets it) and removes WORK (KEEP=1 keeps it).
# sim_wait_ready LOG PID WHO: waits up to 10 s for "kube32-sim: ready" in LOG while PID lives;
#   on failure prints WHO's FAIL line with the log and exits 1.
# sim_pass NAME / sim_fail NAME [DETAIL]: count a check in PASS / FAIL (FAILED lists the names).
# check NAME REGEX CMD...: runs CMD once (60 s at most); passes if its output matches REGEX.
# eventually NAME REGEX SECONDS CMD...: reruns CMD every 0.2 s until its output matches.
#   Both leave CMD's output in OUT and print "ok   NAME" or a FAIL line with the output.
# sim_stop PID: SIGTERM, then up to 10 s for PID to exit; counts check "sigterm-stop" (exit
#   status 0 within the time).
# sim_summary WHO [LOG]: prints "WHO: N passed, M failed"; with failures, their names and the
#   tail of LOG, and exits 1; else exits 0.
PASS=0
FAIL=0
FAILED=()
OUT=

sim_skip() {
	local who=$1 what=$2 how=$3
	echo "$who: $what is missing: $how" >&2
	if [ "${CI:-}" = "true" ]; then
		echo "$who: FAIL (CI=true requires it)" >&2
		exit 1
	fi
	echo "$who: SKIPPED" >&2
	exit 77
}

SIM_PIDS="SIM_PID JOIN_PID"

sim_workdir() {
	WORK=$(mktemp -d "/tmp/kube32-$1.XXXXXX")
	DATA=$WORK/data
	export HOME=$WORK/home
	export KUBECONFIG=$DATA/admin.kubeconfig
	mkdir -p "$HOME" "$DATA" "$WORK/images"
	cp "$2"/*.wasm "$WORK/images/"
	trap sim_cleanup EXIT
}

sim_cleanup() {
	local v
	for v in $SIM_PIDS; do
		[ -n "${!v:-}" ] && kill -9 "${!v}" 2>/dev/null
	done
	if [ "${KEEP:-}" != "1" ]; then rm -rf "$WORK"; fi
}

sim_wait_ready() {
	local log=$1 pid=$2 who=$3
	for _ in $(seq 100); do
		grep -q "kube32-sim: ready" "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "kube32-sim: ready" "$log" 2>/dev/null && return 0
	echo "$who: FAIL: kube32-sim did not start:" >&2
	cat "$log" >&2
	exit 1
}

sim_pass() {
	PASS=$((PASS + 1))
	echo "ok   $1"
}

sim_fail() {
	FAIL=$((FAIL + 1))
	FAILED+=("$1")
	echo "FAIL $1${2:+: $2}" >&2
}

eventually() {
	local name=$1 re=$2 secs=$3
	shift 3
	local end=$((SECONDS + secs))
	while :; do
		OUT=$(timeout 60 bash -c '"$@"' check "$@" 2>&1)
		if grep -Eq -- "$re" <<<"$OUT"; then
			sim_pass "$name"
			return 0
		fi
		[ $SECONDS -ge $end ] && break
		sleep 0.2
	done
	if [ "$secs" = 0 ]; then
		sim_fail "$name" "expected /$re/ from: $*"
	else
		sim_fail "$name" "never matched /$re/ in ${secs}s: $*"
	fi
	sed 's/^/     | /' <<<"$OUT" | head -20 >&2
	return 1
}

check() {
	eventually "$1" "$2" 0 "${@:3}"
}

sim_stop() {
	local pid=$1 rc
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		sim_fail sigterm-stop "kube32-sim still running 10 s after SIGTERM"
		return 1
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" = 0 ]; then
		sim_pass sigterm-stop
	else
		sim_fail sigterm-stop "exit status $rc"
	fi
}

sim_summary() {
	local who=$1 log=${2:-}
	echo "$who: $PASS passed, $FAIL failed"
	if [ "$FAIL" -ne 0 ]; then
		echo "$who: failed: ${FAILED[*]}" >&2
		if [ -n "$log" ] && [ -f "$log" ]; then
			echo "$who: $(basename "$log") (tail):" >&2
			tail -30 "$log" >&2
		fi
		exit 1
	fi
	exit 0
}
