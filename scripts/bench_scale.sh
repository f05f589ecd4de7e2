#!/usr/bin/env bash
# `scripts/bench.sh BUILD_DIR scale` (issue 15): fleet scale, printed as Markdown lines for
# docs/controllers.md ("Fleet scale"):
#   - BOARDS_LIST (10 100 1000) cardputer boards in one kube32-sim process: seconds from
#     start to all Ready, RSS, OS threads, API connections, and the process's idle CPU over
#     IDLE_S (20) seconds once all are Ready;
#   - on the largest fleet, PODS_LIST (100 1000 10000) pods through 10 Deployments: seconds
#     from apply to all Running and from delete to all gone (a run that does not finish in
#     POD_TIMEOUT_S (600) says how far it got);
#   - JOIN_ROUNDS (20) rounds of two kube32-sim --join processes of 50 boards started
#     together against kube32-server: crashes (must be 0) and seconds to all Ready;
#   - fsyncs per write with 1 and 8 writers (src/store/store-bench).
# Takes ~15 minutes at the defaults; every figure comes with the command that made it.
set -uo pipefail
build=${1:-build}
SIM=$build/cmd/kube32-sim/kube32-sim
SERVER=$build/cmd/kube32-server/kube32-server
KUBECTL=${KUBECTL:-kubectl}
BOARDS_LIST=${BOARDS_LIST:-"10 100 1000"}
PODS_LIST=${PODS_LIST:-"100 1000 10000"}
IDLE_S=${IDLE_S:-20}
POD_TIMEOUT_S=${POD_TIMEOUT_S:-600}
JOIN_ROUNDS=${JOIN_ROUNDS:-20}
for b in "$SIM" "$SERVER"; do
	[ -x "$b" ] || { echo "bench scale: $b is not built" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/kube32-scale.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/images"
cp "$build"/apps/examples/*.wasm "$WORK/images/"
HZ=$(getconf CLK_TCK)

field() { sed -n "s/^$2:[[:space:]]*\([0-9]*\).*/\1/p" "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now() { date +%s.%N; }
since() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }
count() { # count KUBECONFIG ARGS... AWK-CONDITION
	local kc=$1 cond=$2
	shift 2
	"$KUBECTL" --kubeconfig "$kc" "$@" --no-headers 2>/dev/null | awk "$cond { n++ } END { print n + 0 }"
}
wait_count() { # wait_count WANT SECONDS KUBECONFIG COND ARGS...: 0 when reached
	local want=$1 secs=$2 kc=$3 cond=$4 n=0 t0
	shift 4
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
		n=$(count "$kc" "$cond" "$@")
		[ "$n" -eq "$want" ] && return 0
		sleep 1
	done
	echo "$n" >"$WORK/last_count"
	return 1
}

echo "### Boards in one process"
echo
echo "| boards | all Ready (s) | RSS (MiB) | per board (KiB) | OS threads | API connections | idle CPU (% of a core) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
LAST_BOARDS=
for n in $BOARDS_LIST; do
	d=$WORK/b$n
	mkdir -p "$d"
	t0=$(now)
	"$SIM" --data-dir "$d/data" --port 0 --port-file "$d/port" --images "$WORK/images" \
		--boards "cardputer:$n" --pod-port 0 >"$d/sim.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	kc=$d/data/admin.kubeconfig
	for _ in $(seq 600); do
		[ -s "$kc" ] && break
		sleep 0.1
	done
	if ! wait_count "$n" 120 "$kc" '$2 == "Ready"' get nodes; then
		echo "| $n | not all Ready in 120 s ($(cat "$WORK/last_count") were) | | | | | |"
		kill -9 "$pid"
		continue
	fi
	ready=$(since "$t0")
	sleep 5 # registration's aftermath (first status patches) settles
	c0=$(cpu_ticks "$pid")
	sleep "$IDLE_S"
	c1=$(cpu_ticks "$pid")
	idle=$(echo "scale=2; ($c1 - $c0) * 100 / $HZ / $IDLE_S" | bc)
	rss=$(($(field "$pid" VmRSS) / 1024))
	thr=$(field "$pid" Threads)
	conns=$(ss -tnH state established "( dport = :$(cat "$d/port") )" 2>/dev/null | wc -l)
	echo "| $n | $ready | $rss | $((rss * 1024 / n)) | $thr | $conns | $idle |"
	if [ "$n" = "$(echo "$BOARDS_LIST" | awk '{ print $NF }')" ]; then
		LAST_BOARDS=$n
		LAST_PID=$pid
		LAST_KC=$kc
	else
		kill -TERM "$pid"
		wait "$pid" 2>/dev/null
	fi
done
echo
echo "Command: \`kube32-sim --boards cardputer:N --port 0 --pod-port 0\`, then \`kubectl get nodes\` until all are Ready; RSS and threads from /proc, idle CPU over ${IDLE_S} s (utime+stime)."
echo

if [ -n "$LAST_BOARDS" ]; then
	echo "### Pods through Deployments ($LAST_BOARDS boards, one process)"
	echo
	echo "| pods | apply -> all Running (s) | delete -> all gone (s) |"
	echo "|---:|---:|---:|"
	for p in $PODS_LIST; do
		per=$((p / 10))
		t0=$(now)
		for i in $(seq 10); do
			"$KUBECTL" --kubeconfig "$LAST_KC" create deployment "d$i" --image=hello.wasm \
				--replicas="$per" >/dev/null
		done
		if wait_count "$p" "$POD_TIMEOUT_S" "$LAST_KC" '$3 == "Running"' get pods; then
			up=$(since "$t0")
		else
			up="not all in ${POD_TIMEOUT_S} s ($(cat "$WORK/last_count") Running)"
		fi
		t0=$(now)
		for i in $(seq 10); do
			"$KUBECTL" --kubeconfig "$LAST_KC" delete deployment "d$i" --wait=false >/dev/null
		done
		if wait_count 0 "$POD_TIMEOUT_S" "$LAST_KC" '1' get pods; then
			down=$(since "$t0")
		else
			down="not all in ${POD_TIMEOUT_S} s ($(cat "$WORK/last_count") left)"
		fi
		echo "| $p | $up | $down |"
		[[ $up == not* || $down == not* ]] && break
	done
	echo
	echo "Command: 10 x \`kubectl create deployment dI --image=hello.wasm --replicas=PODS/10\`, \`kubectl get pods\` each second until all Running; then \`kubectl delete deployment\` until none is left."
	echo
	kill -TERM "$LAST_PID"
	wait "$LAST_PID" 2>/dev/null
fi

echo "### Two --join processes of 50 boards, started together $JOIN_ROUNDS times"
echo
s=$WORK/server
"$SERVER" --data-dir "$s" --port 0 --port-file "$WORK/sport" >"$WORK/server.log" 2>&1 &
spid=$!
PIDS+=("$spid")
for _ in $(seq 100); do
	[ -s "$WORK/sport" ] && break
	sleep 0.1
done
tok=$(sed -n 's/^ *token: //p' "$s/admin.kubeconfig")
crashes=0
worst=0
for r in $(seq "$JOIN_ROUNDS"); do
	jp=()
	t0=$(now)
	for side in a b; do
		for i in $(seq 50); do echo "cardputer name=j$side$r-$i"; done >"$WORK/j$side.conf"
		"$SIM" --join "https://127.0.0.1:$(cat "$WORK/sport")" --token "$tok" \
			--ca-file "$s/pki/ca.crt" --config "$WORK/j$side.conf" --pod-port 0 \
			--images "$WORK/images" >"$WORK/j$side$r.log" 2>&1 &
		jp+=($!)
		PIDS+=($!)
	done
	wait_count 100 120 "$s/admin.kubeconfig" "\$1 ~ /^j[ab]$r-/ && \$2 == \"Ready\"" get nodes ||
		crashes=$((crashes + 1))
	t=$(since "$t0")
	[ "$(echo "$t > $worst" | bc)" = 1 ] && worst=$t
	for p in "${jp[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p"
			wait "$p" || crashes=$((crashes + 1))
		else
			crashes=$((crashes + 1))
		fi
	done
done
kill -TERM "$spid"
wait "$spid" 2>/dev/null
echo "$JOIN_ROUNDS rounds: $crashes crashes or boards missing, all 100 Ready within $worst s at worst."
echo
echo "Command: kube32-server --port 0; twice \`kube32-sim --join https://127.0.0.1:PORT --token T --ca-file CA --config FILE\` (50 boards named per round) at once; SIGTERM both once all are Ready."
echo

echo "### fsyncs per write"
echo
mkdir -p "$WORK/store"
"$build/src/store/store-bench" "$WORK/store" | grep -i "writer" | sed 's/^/    /'
echo
echo "Command: \`src/store/store-bench DIR\` (group commit lines)."
