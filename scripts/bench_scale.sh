#!/usr/bin/env bash
# `scripts/bench.sh BUILD_DIR scale` (issue 15): fleet scale, printed as Markdown lines for
# docs/controllers.md ("Fleet scale"):
#   - BOARDS_LIST (10 100 1000) cardputer boards in one kube32-sim process: seconds from
#     start to all Ready, RSS, OS threads, API connections, and the process's idle CPU over
#     IDLE_S (20) seconds once all are Ready;
#   - PODS_LIST (100 1000 10000) pods through 10 Deployments on PODS_BOARDS (1000) boards of
#     PODS_PROFILE (devkit) in PODS_SHAPE (sim: one kube32-sim; join:K: kube32-server and K
#     --join processes): seconds from apply to all Running and from delete to all gone (a
#     run that does not finish in POD_TIMEOUT_S (600) says how far it got), the most nodes
#     seen not Ready meanwhile and the writes refused; then the controllers' CPU for one pod
#     change at each size (src/ctrl/ctrl-scale-bench);
#   - JOIN_ROUNDS (20) rounds of two kube32-sim --join processes of 50 boards started
#     together against kube32-server: crashes (must be 0) and seconds to all Ready;
#   - fsyncs per write with 1 and 8 writers (src/store/store-bench).
# Takes ~15 minutes at the defaults; every figure comes with the command that made it.
set -uo pipefail
build=${1:-build}
SIM=$build/cmd/kube32-sim/kube32-sim
SERVER=$build/cmd/kube32-server/kube32-server
KUBECTL=${KUBECTL:-kubectl}
BOARDS_LIST=${BOARDS_LIST-"10 100 1000"} # set and empty: no boards part
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
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null
done
echo
echo "Command: \`kube32-sim --boards cardputer:N --port 0 --pod-port 0\`, then \`kubectl get nodes\` until all are Ready; RSS and threads from /proc, idle CPU over ${IDLE_S} s (utime+stime)."
echo

# ---- pods through Deployments (pods10k) ----
# PODS_BOARDS boards of PODS_PROFILE (a cardputer holds 8 pods, K32_CARDPUTER_MAX_PODS, so
# 10 a board needs devkit, 16, or host) carry PODS_LIST pods in 10 Deployments. PODS_SHAPE:
#   sim      one kube32-sim --boards PROFILE:PODS_BOARDS (the control plane inside it)
#   join:K   kube32-server plus K kube32-sim --join processes of PODS_BOARDS/K boards each
#            (the shape to use until one process holds PODS_BOARDS boards)
# Besides the times: the most nodes seen not Ready while the pods came and went (must be 0)
# and the writes the controllers saw refused (WARN "refused" in the logs; must be 0).
PODS_BOARDS=${PODS_BOARDS:-1000}
PODS_PROFILE=${PODS_PROFILE:-devkit}
PODS_SHAPE=${PODS_SHAPE:-sim}
pods_fleet() { # starts the fleet; sets PODS_KC and PODS_LOGS; 0 when all Ready in 300 s
	local d=$WORK/pods
	mkdir -p "$d"
	PODS_LOGS=()
	if [ "$PODS_SHAPE" = sim ]; then
		"$SIM" --data-dir "$d/data" --port 0 --port-file "$d/port" --images "$WORK/images" \
			--boards "$PODS_PROFILE:$PODS_BOARDS" --pod-port 0 >"$d/sim.log" 2>&1 &
		PIDS+=($!)
		PODS_LOGS+=("$d/sim.log")
		PODS_KC=$d/data/admin.kubeconfig
	else
		local k=${PODS_SHAPE#join:}
		"$SERVER" --data-dir "$d/server" --port 0 --port-file "$d/sport" >"$d/server.log" 2>&1 &
		PIDS+=($!)
		PODS_LOGS+=("$d/server.log")
		PODS_KC=$d/server/admin.kubeconfig
		for _ in $(seq 100); do
			[ -s "$d/sport" ] && [ -s "$PODS_KC" ] && break
			sleep 0.1
		done
		local tok
		tok=$(sed -n 's/^ *token: //p' "$PODS_KC")
		for j in $(seq "$k"); do
			for i in $(seq $((PODS_BOARDS / k))); do echo "$PODS_PROFILE name=p$j-$i"; done >"$d/j$j.conf"
			"$SIM" --join "https://127.0.0.1:$(cat "$d/sport")" --token "$tok" \
				--ca-file "$d/server/pki/ca.crt" --config "$d/j$j.conf" --pod-port 0 \
				--images "$WORK/images" >"$d/join$j.log" 2>&1 &
			PIDS+=($!)
			PODS_LOGS+=("$d/join$j.log")
		done
	fi
	for _ in $(seq 600); do
		[ -s "$PODS_KC" ] && break
		sleep 0.1
	done
	wait_count "$PODS_BOARDS" 300 "$PODS_KC" '$2 == "Ready"' get nodes
}
# wait_pods WANT COND SECONDS: polls pods, tracking the most nodes not Ready; 0 when reached
wait_pods() {
	local want=$1 cond=$2 secs=$3 n t0 bad
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
		bad=$(count "$PODS_KC" '$2 != "Ready"' get nodes)
		[ "$bad" -gt "$NOT_READY_MAX" ] && NOT_READY_MAX=$bad
		n=$(count "$PODS_KC" "$cond" get pods -A)
		[ "$n" -eq "$want" ] && return 0
		sleep 2
	done
	echo "$n" >"$WORK/last_count"
	return 1
}
echo "### Pods through Deployments ($PODS_BOARDS $PODS_PROFILE boards, shape $PODS_SHAPE)"
echo
if ! pods_fleet; then
	echo "Not all $PODS_BOARDS boards Ready in 300 s ($(cat "$WORK/last_count") were): no pod figures."
else
	echo "| pods | apply -> all Running (s) | delete -> all gone (s) | most nodes not Ready | writes refused |"
	echo "|---:|---:|---:|---:|---:|"
	for p in $PODS_LIST; do
		per=$((p / 10))
		NOT_READY_MAX=0
		refused0=$(cat "${PODS_LOGS[@]}" | grep -c "refused")
		t0=$(now)
		for i in $(seq 10); do
			"$KUBECTL" --kubeconfig "$PODS_KC" create deployment "d$i" --image=hello.wasm \
				--replicas="$per" >/dev/null
		done
		if wait_pods "$p" '$4 == "Running"' "$POD_TIMEOUT_S"; then
			up=$(since "$t0")
		else
			up="not all in ${POD_TIMEOUT_S} s ($(cat "$WORK/last_count") Running)"
		fi
		t0=$(now)
		for i in $(seq 10); do
			"$KUBECTL" --kubeconfig "$PODS_KC" delete deployment "d$i" --wait=false >/dev/null
		done
		if wait_pods 0 '1' "$POD_TIMEOUT_S"; then
			down=$(since "$t0")
		else
			down="not all in ${POD_TIMEOUT_S} s ($(cat "$WORK/last_count") left)"
		fi
		refused=$(($(cat "${PODS_LOGS[@]}" | grep -c "refused") - refused0))
		echo "| $p | $up | $down | $NOT_READY_MAX | $refused |"
		[[ $up == not* || $down == not* ]] && break
	done
	if grep -q "refused" "${PODS_LOGS[@]}"; then
		echo
		echo "Refused writes (count, message without the object's name):"
		grep -h "refused" "${PODS_LOGS[@]}" | sed -e 's/^.*ctrl: //' -e 's,/[a-z0-9.-]*-[a-z0-9]\{5\}\b,/NAME,g' |
			sort | uniq -c | sort -rn | head -5 | sed 's/^/    /'
	fi
fi
echo
echo "Command: PODS_SHAPE=$PODS_SHAPE PODS_BOARDS=$PODS_BOARDS PODS_PROFILE=$PODS_PROFILE; 10 x \`kubectl create deployment dI --image=hello.wasm --replicas=PODS/10\`, \`kubectl get pods -A\` every 2 s until all Running; then \`kubectl delete deployment\` until none is left; \`kubectl get nodes\` at each poll."
echo
for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill -TERM "${PIDS[$i]}" 2>/dev/null; done
for _ in $(seq 100); do # 10 s for them to stop, then kill
	alive=0
	for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ "$alive" = 0 ] && break
	sleep 0.1
done
for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && echo "(pid $p did not stop on SIGTERM in 10 s)" && kill -9 "$p"; done
wait 2>/dev/null
PIDS=()

echo "### Controller CPU for one pod change"
echo
for p in $PODS_LIST; do
	nodes=$((p / 10 > 10 ? p / 10 : 10))
	"$build/src/ctrl/ctrl-scale-bench" "$p" 5 --nodes "$nodes" 2>/dev/null | sed 's/^/    /'
done
echo
echo "Command: \`src/ctrl/ctrl-scale-bench PODS 5 --nodes PODS/10\` (10 pods a node, as the fleet's 10 a board). Instructions: the same under \`valgrind --tool=callgrind --instr-atstart=no\` (docs/controllers.md)."
echo

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
