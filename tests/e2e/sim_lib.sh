# sim_lib.sh - shared by the kube32-sim end-to-end scripts (cluster, ctrl, devices); source it.
#
# sim_wait_ready LOG PID WHO: waits up to 10 s for "kube32-sim: ready" in LOG while PID lives;
# on failure prints WHO's FAIL line with the log and exits 1.
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
