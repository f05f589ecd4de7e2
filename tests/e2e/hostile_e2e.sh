#!/usr/bin/env bash
# End-to-end of issue 11 (the node keeps its promises): on one simulated board, beside a
# neighbour pod (hello), three hostile pods each hold the interpreter inside one k32_tick:
#   sleeper     sleeps 10 ms at a time forever (one unit of gas per sleep)
#   spin-off    loops forever with kube32.io/execution-budget "off"
#   spin-huge   loops forever with a budget of 10^10 (K32_POD_GAS_MAX, the largest the API takes) units
# all with a call deadline of 5 s (kube32.io/call-deadline-ms 5000: each holds the
# interpreter 5 s per tick) while the node's grace is 4 s. With the real kubectl:
#   - the node stays Ready and its Lease renews (the node task never waits on pod code:
#     were the Lease on the interpreter task, 5 s holds would expire a 4 s grace);
#   - the neighbour answers every request;
#   - each hostile pod is stopped with reason DeadlineExceeded (status, Event, log) and
#     restarted;
#   - `kubectl delete` of each completes while it runs (the deletion interrupts its call);
#   - SIGTERM stops kube32-sim within 2 s while a hostile pod runs;
#   - with KUBE32_SERVER given: SIGTERM stops kube32-server --controllers within 2 s while a
#     kubectl watch is open on it.
#
#   hostile_e2e.sh /path/to/kube32-sim EXAMPLES_DIR HOSTILE_DIR [KUBE32_SERVER]
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl, curl or the pods missing
# (skipped; under CI=true that is a failure). Waits are bounds, not timing assertions, except
# the 2 s of SIGTERM, which is the promise itself.
set -u

SIM=${1:?usage: hostile_e2e.sh /path/to/kube32-sim EXAMPLES_DIR HOSTILE_DIR}
. "$(dirname "$0")/sim_lib.sh"
EXAMPLES=${2:?usage: hostile_e2e.sh /path/to/kube32-sim EXAMPLES_DIR HOSTILE_DIR}
HOSTILE=${3:?usage: hostile_e2e.sh /path/to/kube32-sim EXAMPLES_DIR HOSTILE_DIR}
SERVER=${4:-}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}

missing() { sim_skip hostile-e2e "$@"; }
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
command -v curl >/dev/null || missing curl "install the Debian package curl"
[ -s "$EXAMPLES/hello.wasm" ] || missing hello.wasm "not built in $EXAMPLES (clang and lld build apps/examples)"
for m in sleeper spinner; do
	[ -s "$HOSTILE/$m.wasm" ] || missing "$m.wasm" "not built in $HOSTILE (clang and lld build apps/hostile)"
done

sim_workdir hostile "$EXAMPLES"
cp "$HOSTILE"/sleeper.wasm "$HOSTILE"/spinner.wasm "$WORK/images/"
SIM_PIDS="SIM_PID SRV_PID WATCH_PID"
SIM_PID=
SRV_PID=
WATCH_PID=

"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards host:1 --pod-port 0 --node-grace 4 --pod-eviction 60 \
	>"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" hostile-e2e
echo "hostile-e2e: kube32-sim pid $SIM_PID on https://127.0.0.1:$(cat "$WORK/port")"

k() { "$KUBECTL" "$@"; }
export -f k
export KUBECTL
podport() { k get node host-1 -o 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'; }
# a pod request waits at most for the running call of another pod (its deadline, 5 s): the
# board has one interpreter task
podcurl() {
	curl -s --max-time 25 -w ' HTTP %{http_code}' -H "X-Kube32-Pod: default/$1" \
		"http://127.0.0.1:$(podport)$2" | tr '\n' ' '
}
export -f podport podcurl

eventually node-ready 'host-1 +Ready' 20 k get nodes --no-headers

# ---- the neighbour and the hostile pods ----------------------------------------------------
pod_yaml() { # NAME IMAGE [BUDGET]
	cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations:
    kube32.io/call-deadline-ms: "5000"
    kube32.io/tick-ms: "100"
EOF
	[ -n "${3:-}" ] && echo "    kube32.io/execution-budget: \"$3\""
	cat <<EOF
spec:
  nodeName: host-1
  containers:
  - name: main
    image: $2
    resources:
      limits: {memory: 24Ki}
EOF
}
cat >"$WORK/neighbour.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: neighbour
spec:
  nodeName: host-1
  containers:
  - name: main
    image: hello.wasm
    resources:
      limits: {memory: 24Ki}
EOF
check apply-neighbour 'pod/neighbour created' k apply -f "$WORK/neighbour.yaml"
check wait-neighbour 'condition met' k wait --for=condition=Ready pod/neighbour --timeout=60s
pod_yaml sleeper sleeper.wasm >"$WORK/sleeper.yaml"
pod_yaml spin-off spinner.wasm off >"$WORK/spin-off.yaml"
pod_yaml spin-huge spinner.wasm 10000000000 >"$WORK/spin-huge.yaml"
HOSTILE_PODS="sleeper spin-off spin-huge"
for p in $HOSTILE_PODS; do
	check "apply-$p" "pod/$p created" k apply -f "$WORK/$p.yaml"
done
eventually hostile-started 'tick starts' 30 k logs spin-off

# ---- while they run: the node, its Lease and the neighbour ---------------------------------
lease_time() { k get lease host-1 -n kube-node-lease -o 'jsonpath={.spec.renewTime}'; }
LEASE0=$(lease_time)
NOT_READY=0
ANSWERED=0
ASKED=0
END=$((SECONDS + 12)) # over two hostile holds of 5 s and three node graces
while [ $SECONDS -lt $END ]; do
	ASKED=$((ASKED + 1))
	R=$(podcurl neighbour "/req-$ASKED")
	if grep -q 'HTTP 200' <<<"$R"; then ANSWERED=$((ANSWERED + 1)); else echo "     | request $ASKED: $R" >&2; fi
	S=$(k get node host-1 --no-headers 2>&1)
	grep -Eq 'host-1 +Ready ' <<<"$S" || { NOT_READY=$((NOT_READY + 1)); echo "     | $S" >&2; }
	sleep 0.5
done
if [ "$ANSWERED" = "$ASKED" ]; then sim_pass neighbour-answers-every-request; else sim_fail neighbour-answers-every-request "$ANSWERED of $ASKED answered"; fi
if [ "$NOT_READY" = 0 ]; then sim_pass node-stays-ready; else sim_fail node-stays-ready "not Ready $NOT_READY times of $ASKED"; fi
LEASE1=$(lease_time)
if [ -n "$LEASE1" ] && [ "$LEASE1" != "$LEASE0" ]; then sim_pass lease-renews; else sim_fail lease-renews "renewTime stayed $LEASE0"; fi
check neighbour-no-restart '^0$' k get pod neighbour -o 'jsonpath={.status.containerStatuses[0].restartCount}'

# ---- each hostile pod is stopped with a clear reason ---------------------------------------
reason() { # the reason of the pod's last termination (current or previous container)
	k get pod "$1" -o 'jsonpath={.status.containerStatuses[0].state.terminated.reason} {.status.containerStatuses[0].lastState.terminated.reason}'
}
export -f reason
for p in $HOSTILE_PODS; do
	eventually "$p-deadline-exceeded" 'DeadlineExceeded' 40 reason "$p"
	check "$p-message" 'deadline exceeded: k32_tick ran past its deadline of 5000 ms' k get pod "$p" -o 'jsonpath={.status.containerStatuses[0].lastState.terminated.message}{.status.containerStatuses[0].state.terminated.message}'
	check "$p-event" 'DeadlineExceeded' k get events --field-selector "involvedObject.name=$p" -o 'jsonpath={.items[*].reason}'
	check "$p-log" 'DeadlineExceeded: deadline exceeded' k logs "$p" --previous
done

# ---- kubectl delete completes while they run (grace 30 s; the call is interrupted) --------
for p in $HOSTILE_PODS; do
	eventually "$p-running-again" 'Running' 40 k get pod "$p" -o 'jsonpath={.status.phase}'
	# inside its tick again (ticks every 100 ms, each holds for the 5 s deadline)
	sleep 0.5
	check "$p-delete" "pod \"$p\" deleted" timeout 20 "$KUBECTL" delete pod "$p" --timeout=20s
	check "$p-gone" 'NotFound' k get pod "$p"
done
check neighbour-after 'hello from kube32.* HTTP 200' podcurl neighbour /after

# ---- SIGTERM stops the simulator within 2 s while a pod spins ------------------------------
stop_within_2s() { # NAME PID: SIGTERM, then 2 s at most for a clean exit
	local name=$1 pid=$2 rc
	kill -TERM "$pid"
	for _ in $(seq 20); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		sim_fail "$name" "still running 2 s after SIGTERM"
		return 1
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" = 0 ]; then sim_pass "$name"; else sim_fail "$name" "exit status $rc"; fi
}
check apply-spin-again 'pod/spin-off created' k apply -f "$WORK/spin-off.yaml"
eventually spin-again-ticking 'tick starts' 30 k logs spin-off
sleep 0.5
stop_within_2s sigterm-sim-within-2s "$SIM_PID" && SIM_PID=

# ---- the same for kube32-server with a watch open ------------------------------------------
if [ -n "$SERVER" ]; then
	SDATA=$WORK/sdata
	mkdir -p "$SDATA"
	"$SERVER" --controllers --data-dir "$SDATA" --port 0 --port-file "$WORK/sport" \
		>"$WORK/server.log" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 100); do [ -s "$WORK/sport" ] && [ -s "$SDATA/admin.kubeconfig" ] && break; sleep 0.1; done
	KUBECONFIG=$SDATA/admin.kubeconfig "$KUBECTL" get namespaces -w >"$WORK/watch.log" 2>&1 &
	WATCH_PID=$!
	eventually server-watch-open "kube-system" 20 cat "$WORK/watch.log"
	stop_within_2s sigterm-server-within-2s "$SRV_PID" && SRV_PID=
fi

sim_summary hostile-e2e "$WORK/sim.log"
