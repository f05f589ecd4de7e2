#!/usr/bin/env bash
# Fleet scale (issue 15), CI-sized:
#  1. one kube32-sim process holds SCALE_BOARDS (200) cardputer boards: all Ready within
#     SCALE_READY_S (120 s), its OS threads at most SCALE_MAX_THREADS (64: the boards' tasks
#     share a pool, k32_platform.h task_share_threads) and its RSS at most SCALE_MAX_RSS_MIB
#     (600 MiB); each board holds at most two connections to the API server;
#  2. two kube32-sim --join processes of SCALE_JOIN_BOARDS (25) boards each start together
#     SCALE_JOIN_ROUNDS (1; CI time: the 20 rounds of 50 + 50 are scripts/bench_scale.sh's)
#     times against kube32-server: every board registers, neither process crashes, both
#     stop cleanly on SIGTERM;
#  3. a --join process started while its control plane is down stays up, says once per
#     board that it cannot register (not once per retry), and registers when the server
#     comes back on the same port.
# `scripts/bench.sh build scale` runs the full-size figures (1,000 boards, 20 join rounds of
# 50 + 50).
#
#   scale_e2e.sh /path/to/kube32-sim /path/to/kube32-server PODS_DIR
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl or the pods missing.
set -u

SIM=${1:?usage: scale_e2e.sh KUBE32_SIM KUBE32_SERVER PODS_DIR}
SERVER=${2:?usage: scale_e2e.sh KUBE32_SIM KUBE32_SERVER PODS_DIR}
PODS=${3:?usage: scale_e2e.sh KUBE32_SIM KUBE32_SERVER PODS_DIR}
. "$(dirname "$0")/sim_lib.sh"
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
BOARDS=${SCALE_BOARDS:-200}
READY_S=${SCALE_READY_S:-120}
MAX_THREADS=${SCALE_MAX_THREADS:-64}
MAX_RSS_MIB=${SCALE_MAX_RSS_MIB:-600}
JOIN_BOARDS=${SCALE_JOIN_BOARDS:-25}
JOIN_ROUNDS=${SCALE_JOIN_ROUNDS:-1}

[ -x "$KUBECTL" ] || sim_skip scale-e2e kubectl "expected at $KUBECTL (set KUBECTL=...)"
[ -s "$PODS/hello.wasm" ] || sim_skip scale-e2e hello.wasm "not built in $PODS"

sim_workdir scale "$PODS"
SIM_PIDS="SIM_PID SRV_PID J1_PID J2_PID LATE_PID"
SIM_PID=
SRV_PID=
J1_PID=
J2_PID=
LATE_PID=

proc_field() { sed -n "s/^$2:[[:space:]]*\([0-9]*\).*/\1/p" "/proc/$1/status"; }
# nodes whose Ready condition is True, among those matching a name pattern
ready_count() {
	"$KUBECTL" --kubeconfig "$1" get nodes --no-headers 2>/dev/null |
		awk -v re="$2" '$1 ~ re && $2 == "Ready" { n++ } END { print n + 0 }'
}
# waits up to $3 s for $4 nodes matching $2 Ready; prints the seconds it took
wait_ready() {
	local kc=$1 re=$2 secs=$3 want=$4 t0 n
	t0=$(date +%s.%N)
	for _ in $(seq $((secs * 2))); do
		n=$(ready_count "$kc" "$re")
		[ "$n" -ge "$want" ] && break
		sleep 0.5
	done
	echo "$n $(echo "$(date +%s.%N) - $t0" | bc)"
}

# ---- 1: SCALE_BOARDS boards in one process -------------------------------------------------
T0=$(date +%s.%N)
"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards "cardputer:$BOARDS" --pod-port 0 >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 600); do
	grep -q "kube32-sim: ready" "$WORK/sim.log" 2>/dev/null && break
	kill -0 "$SIM_PID" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "kube32-sim: ready" "$WORK/sim.log"; then
	sim_fail sim-start "$(tail -5 "$WORK/sim.log")"
	sim_summary scale-e2e "$WORK/sim.log"
fi
read -r N _ < <(wait_ready "$KUBECONFIG" '^cardputer-' "$READY_S" "$BOARDS")
T_READY=$(echo "$(date +%s.%N) - $T0" | bc)
if [ "$N" -eq "$BOARDS" ]; then
	sim_pass "all-$BOARDS-ready"
else
	sim_fail "all-$BOARDS-ready" "$N of $BOARDS Ready after $READY_S s"
fi
THREADS=$(proc_field "$SIM_PID" Threads)
RSS_KB=$(proc_field "$SIM_PID" VmRSS)
echo "scale-e2e: $BOARDS boards: all Ready ${T_READY} s after start, RSS $((RSS_KB / 1024)) MiB, $THREADS threads"
if [ "$THREADS" -le "$MAX_THREADS" ]; then sim_pass threads; else
	sim_fail threads "$THREADS OS threads > $MAX_THREADS"; fi
if grep -q __asan_init "$SIM"; then
	# ASan's shadow memory and quarantine inflate RSS ~10x: the plain build checks the bound
	echo "scale-e2e: AddressSanitizer build: the RSS bound is checked by the plain build only"
elif [ "$((RSS_KB / 1024))" -le "$MAX_RSS_MIB" ]; then sim_pass rss; else
	sim_fail rss "$((RSS_KB / 1024)) MiB > $MAX_RSS_MIB MiB"; fi
# connections to the API server: each board one for requests and one for its watch (the
# process's own clients: the controllers' informers and the kubectl of this script)
PORT=$(cat "$WORK/port")
CONNS=$(ss -tnH state established "( dport = :$PORT )" 2>/dev/null | wc -l)
if [ "$CONNS" -le $((BOARDS * 2 + 40)) ]; then sim_pass connections; else
	sim_fail connections "$CONNS connections to the API server for $BOARDS boards"; fi
echo "scale-e2e: $CONNS client connections to the API server"
# a Deployment lands on the fleet
"$KUBECTL" create deployment fleet --image=hello.wasm --replicas=20 >/dev/null
eventually deploy-20-running '^20$' 60 bash -c \
	"$KUBECTL get pods -l app=fleet --no-headers | grep -c ' Running '"
sim_stop "$SIM_PID"
SIM_PID=

# ---- 2: two --join processes start together, again and again --------------------------------
SDATA=$WORK/server
"$SERVER" --data-dir "$SDATA" --port 0 --port-file "$WORK/sport" >"$WORK/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do
	[ -s "$WORK/sport" ] && break
	sleep 0.1
done
SPORT=$(cat "$WORK/sport")
SKC=$SDATA/admin.kubeconfig
STOKEN=$(sed -n 's/^ *token: //p' "$SKC")
join() { # join NAME-PREFIX COUNT LOG
	local i
	for i in $(seq "$2"); do echo "cardputer name=$1-$i"; done >"$WORK/$1.conf"
	"$SIM" --join "https://127.0.0.1:$SPORT" --token "$STOKEN" --ca-file "$SDATA/pki/ca.crt" \
		--config "$WORK/$1.conf" --pod-port 0 --images "$WORK/images" >"$3" 2>&1 &
}
CRASHED=0
for r in $(seq "$JOIN_ROUNDS"); do
	join "ja$r" "$JOIN_BOARDS" "$WORK/ja$r.log"
	J1_PID=$!
	join "jb$r" "$JOIN_BOARDS" "$WORK/jb$r.log"
	J2_PID=$!
	read -r N T < <(wait_ready "$SKC" "^j[ab]$r-" 60 $((JOIN_BOARDS * 2)))
	echo "scale-e2e: join round $r: $N of $((JOIN_BOARDS * 2)) boards Ready in $T s"
	[ "$N" -eq $((JOIN_BOARDS * 2)) ] || CRASHED=$((CRASHED + 1))
	for p in "$J1_PID" "$J2_PID"; do
		if ! kill -0 "$p" 2>/dev/null; then
			CRASHED=$((CRASHED + 1))
			continue
		fi
		kill -TERM "$p"
		rc=0
		wait "$p" || rc=$?
		[ "$rc" -eq 0 ] || CRASHED=$((CRASHED + 1))
	done
	J1_PID=
	J2_PID=
done
if [ "$CRASHED" -eq 0 ]; then sim_pass "join-${JOIN_ROUNDS}x2x$JOIN_BOARDS"; else
	sim_fail "join-${JOIN_ROUNDS}x2x$JOIN_BOARDS" "$CRASHED failures (see $WORK/j*.log)"; fi

# ---- 3: a join before its control plane is up ------------------------------------------------
kill -TERM "$SRV_PID"
wait "$SRV_PID"
SRV_PID=
join late 5 "$WORK/late.log"
LATE_PID=$!
sleep 4 # attempts at 0, ~0.5, ~1.5, ~3.5 s
if kill -0 "$LATE_PID" 2>/dev/null; then sim_pass late-join-waits; else
	sim_fail late-join-waits "$(tail -3 "$WORK/late.log")"; fi
WARNS=$(grep -c "cannot register with" "$WORK/late.log")
if [ "$WARNS" -eq 5 ]; then sim_pass late-join-logs-once; else
	sim_fail late-join-logs-once "$WARNS 'cannot register' lines for 5 boards"; fi
"$SERVER" --data-dir "$SDATA" --port "$SPORT" >"$WORK/server2.log" 2>&1 &
SRV_PID=$!
read -r N T < <(wait_ready "$SKC" "^late-" 40 5)
if [ "$N" -eq 5 ]; then sim_pass late-join-registers; else
	sim_fail late-join-registers "$N of 5 Ready; $(tail -3 "$WORK/late.log")"; fi
echo "scale-e2e: late join: registered $T s after the server came back"
kill -TERM "$LATE_PID"
wait "$LATE_PID"
LATE_PID=
sim_stop "$SRV_PID"
SRV_PID=

sim_summary scale-e2e "$WORK/sim.log"
