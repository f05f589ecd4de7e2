#!/usr/bin/env bash
# End-to-end of the controllers in their own process (issue 14): kube32-server serves the
# bare API (--no-controllers); a second kube32-server --controllers-only runs the scheduler
# and controllers against it over HTTPS (src/kclient), as kube-controller-manager and
# kube-scheduler do; a board joins from kube32-sim --join. With the real kubectl: a
# Deployment rolls out onto the board, the scheduler's Events arrive through the API, the
# controllers stop cleanly on SIGTERM (a scale then does nothing: the server runs none), a
# restarted controller process catches up from a fresh list, and a wrong token is refused
# with its reason.
#
#   remote_ctrl_e2e.sh /path/to/kube32-server /path/to/kube32-sim PODS_DIR
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl or hello.wasm missing (skipped;
# under CI=true that is a failure).
set -u

SERVER=${1:?usage: remote_ctrl_e2e.sh KUBE32_SERVER KUBE32_SIM PODS_DIR}
SIM=${2:?usage: remote_ctrl_e2e.sh KUBE32_SERVER KUBE32_SIM PODS_DIR}
PODS=${3:?usage: remote_ctrl_e2e.sh KUBE32_SERVER KUBE32_SIM PODS_DIR}
. "$(dirname "$0")/sim_lib.sh"
KUBECTL=${KUBECTL:-/usr/bin/kubectl}

missing() { sim_skip remote-ctrl-e2e "$@"; }
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
[ -s "$PODS/hello.wasm" ] || missing hello.wasm "not built in $PODS (clang and lld build apps/examples)"

sim_workdir remote-ctrl "$PODS"
SIM_PIDS="SRV_PID CTRL_PID JOIN_PID"
SRV_PID=
CTRL_PID=
JOIN_PID=

"$SERVER" --no-controllers --data-dir "$DATA" --port 0 --port-file "$WORK/port" \
	>"$WORK/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do
	[ -s "$WORK/port" ] && break
	sleep 0.1
done
[ -s "$WORK/port" ] || { cat "$WORK/server.log" >&2; echo "remote-ctrl-e2e: FAIL: no server" >&2; exit 1; }
URL="https://127.0.0.1:$(cat "$WORK/port")"
k() { "$KUBECTL" "$@"; }
export -f k
export KUBECTL
check server-bare 'no controllers' cat "$WORK/server.log"
sed -n 's/^ *token: //p' "$KUBECONFIG" >"$WORK/token"
start_ctrl() {
	"$SERVER" --controllers-only --server "$URL" --token-file "$WORK/token" \
		--ca-file "$DATA/pki/ca.crt" >>"$WORK/ctrl.log" 2>&1 &
	CTRL_PID=$!
}
start_ctrl
eventually ctrl-started 'scheduler and controllers running against https://' 10 cat "$WORK/ctrl.log"

printf '# the joining board\nhost name=rworker-1\nhost-pool=2Mi\n' >"$WORK/boards.conf"
"$SIM" --join "$URL" --token "$(cat "$WORK/token")" --ca-file "$DATA/pki/ca.crt" \
	--config "$WORK/boards.conf" --pod-port 0 --images "$WORK/images" \
	>"$WORK/join.log" 2>&1 &
JOIN_PID=$!
eventually node-ready 'rworker-1 +Ready' 20 k get nodes --no-headers

# a Deployment: the remote Deployment, ReplicaSet controllers and scheduler roll it out
check deploy 'deployment.apps/rhello created' k create deployment rhello --image=hello.wasm --replicas=2
check rollout 'successfully rolled out' k rollout status deployment/rhello --timeout=60s
check pods-on-board '^rworker-1 rworker-1$' k get pods -l app=rhello -o 'jsonpath={.items[*].spec.nodeName}'
check rs-owned 'Deployment' k get rs -l app=rhello -o 'jsonpath={.items[0].metadata.ownerReferences[0].kind}'
eventually sched-events 'Successfully assigned default/rhello-' 10 k get events --field-selector reason=Scheduled -o 'jsonpath={.items[*].message}'
check scale-up 'deployment.apps/rhello scaled' k scale deployment rhello --replicas=3
eventually scaled-up '^3$' 30 k get deployment rhello -o 'jsonpath={.status.readyReplicas}'

# the controllers stop on SIGTERM; the API server alone then changes nothing
kill -TERM "$CTRL_PID"
rc=0
for _ in $(seq 100); do
	kill -0 "$CTRL_PID" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$CTRL_PID" 2>/dev/null; then
	sim_fail ctrl-sigterm "controllers still running 10 s after SIGTERM"
else
	wait "$CTRL_PID" || rc=$?
	check ctrl-sigterm '^0$' echo "$rc"
fi
CTRL_PID=
check scale-down 'deployment.apps/rhello scaled' k scale deployment rhello --replicas=1
sleep 3
check no-controllers-no-change '^3$' bash -c "k get pods -l app=rhello --no-headers | grep -vc Terminating"
# a new controller process lists everything afresh and catches up
start_ctrl
eventually caught-up '^1$' 40 bash -c "k get pods -l app=rhello --no-headers | grep -vc Terminating"
check rollout-again 'successfully rolled out' k rollout status deployment/rhello --timeout=60s

# a wrong token: refused at start, with the reason
bad=$("$SERVER" --controllers-only --server "$URL" --token nope --ca-file "$DATA/pki/ca.crt" 2>&1)
check bad-token-refused 'HTTP 401.*--token' echo "$bad"
check bad-usage 'go together' bash -c "\"$SERVER\" --controllers-only 2>&1"

sim_stop "$CTRL_PID"
CTRL_PID=
kill -9 "$JOIN_PID" 2>/dev/null
JOIN_PID=
kill -TERM "$SRV_PID"
wait "$SRV_PID"
check server-sigterm '^0$' echo "$?"
SRV_PID=
sim_summary remote-ctrl-e2e "$WORK/ctrl.log"
