#!/usr/bin/env bash
# kube32-cli end to end: start kube32-sim with one host board on free loopback ports, deploy
# hello.wasm under a name that is not in the board's image directory (so the kubelet must
# fetch it from the ConfigMap module store), wait for the pod to be Running (curl with the
# kubeconfig's token), `console <node> TASKS` (K32_TASK lines), `logs`, the pod server's
# /containerLogs?follow=true stream, events.wasm (apps/examples/events.c: k32_event driven by a
# kobj timer, a channel fed by POST and user packets) through the pod server, `logs -f` (new
# lines as they come; it ends when the pod is deleted), `delete` (pod and module), `get
# pods|nodes|modules`, `top pods|nodes`, `--dry-run` YAML, and bad inputs with their
# messages. The sim is stopped by its PID.
#
#   cli_test.sh /path/to/kube32-cli /path/to/kube32-sim /path/to/hello.wasm [events.wasm]
#               [init_fail.wasm]
#
# deploy's wait is checked on each path: Ready (hello), a pod that cannot start (memory limit
# below the module's), a crash in k32_init (init_fail.wasm: never Ready, reported with the
# pod's last exit), --timeout on a pod no node runs, --no-wait, and a redeploy (update).
#
# Exit 0: all checks passed; 1: a check failed; 77: kube32-sim, curl or hello.wasm missing
# (skipped; under CI=true that is a failure). Without events.wasm its checks are skipped
# (a failure under CI=true).
set -u

CLI=${1:?usage: cli_test.sh KUBE32_CLI KUBE32_SIM HELLO_WASM}
SIM=${2:?usage: cli_test.sh KUBE32_CLI KUBE32_SIM HELLO_WASM}
HELLO=${3:?usage: cli_test.sh KUBE32_CLI KUBE32_SIM HELLO_WASM}
EVENTS=${4:-}
INIT_FAIL=${5:-}

missing() {
	echo "cli-test: $1 is missing: $2" >&2
	if [ "${CI:-}" = "true" ]; then
		echo "cli-test: FAIL (CI=true requires it)" >&2
		exit 1
	fi
	echo "cli-test: SKIPPED" >&2
	exit 77
}
[ -x "$SIM" ] || missing kube32-sim "expected at $SIM"
command -v curl >/dev/null || missing curl "install the Debian package curl"
[ -s "$HELLO" ] || missing hello.wasm "not built at $HELLO (clang and lld build apps/examples)"

WORK=$(mktemp -d /tmp/kube32-cli.XXXXXX)
DATA=$WORK/data
KC=$DATA/admin.kubeconfig
mkdir -p "$DATA" "$WORK/images"
SIM_PID=
cleanup() {
	[ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null
	if [ "${KEEP:-}" != "1" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# the image directory is empty: the pod's module can only come from the ConfigMap
"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards host:1 --pod-port 0 >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do
	grep -q "kube32-sim: ready" "$WORK/sim.log" 2>/dev/null && [ -s "$KC" ] && break
	kill -0 "$SIM_PID" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "kube32-sim: ready" "$WORK/sim.log" || [ ! -s "$KC" ]; then
	echo "cli-test: FAIL: kube32-sim did not start:" >&2
	cat "$WORK/sim.log" >&2
	exit 1
fi
PORT=$(cat "$WORK/port")
API=https://127.0.0.1:$PORT
TOKEN=$(sed -n 's/^ *token: *//p' "$KC" | head -1)
sed -n 's/^ *certificate-authority-data: *//p' "$KC" | head -1 | base64 -d >"$WORK/ca.crt"
api() { curl -sS --cacert "$WORK/ca.crt" -H "Authorization: Bearer $TOKEN" "$API$1"; }

PASS=0
FAIL=0
ok() {
	echo "cli-test: ok: $1"
	PASS=$((PASS + 1))
}
bad() {
	echo "cli-test: FAIL: $1" >&2
	FAIL=$((FAIL + 1))
}

# the node
NODE=
for _ in $(seq 50); do
	NODE=$(api /api/v1/nodes | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["metadata"]["name"])' 2>/dev/null)
	[ -n "$NODE" ] && break
	sleep 0.1
done
[ -n "$NODE" ] && ok "node $NODE registered" || bad "no node registered"

# deploy through the module store
NAME=clihello
[ ! -e "$WORK/images/$NAME.wasm" ] || bad "$NAME.wasm is in the image dir"
if OUT=$("$CLI" deploy "$HELLO" --name "$NAME" --node "$NODE" --memory 64Ki --budget off \
	--kubeconfig "$KC" 2>&1); then
	ok "deploy: $(echo "$OUT" | tr '\n' ' ')"
else
	bad "deploy exited non-zero: $OUT"
fi
CM=$(api "/api/v1/namespaces/default/configmaps/$NAME.wasm")
echo "$CM" | python3 -c "import json,sys,base64; d=json.load(sys.stdin); b=base64.b64decode(d['binaryData']['$NAME.wasm']); sys.exit(0 if b==open('$HELLO','rb').read() else 1)" &&
	ok "ConfigMap $NAME.wasm holds the module bytes" || bad "ConfigMap $NAME.wasm: $CM"
PHASE=
for _ in $(seq 100); do
	PHASE=$(api "/api/v1/namespaces/default/pods/$NAME" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status",{}).get("phase",""))' 2>/dev/null)
	[ "$PHASE" = Running ] && break
	sleep 0.1
done
if [ "$PHASE" = Running ]; then
	ok "pod $NAME Running from the ConfigMap module"
else
	bad "pod $NAME is '$PHASE', not Running: $(api "/api/v1/namespaces/default/pods/$NAME")"
fi
POD=$(api "/api/v1/namespaces/default/pods/$NAME")
echo "$POD" | grep -q '"memory":"64Ki"' && echo "$POD" | grep -q '"kube32.io/execution-budget":"off"' &&
	ok "pod has the memory limit and the budget annotation" || bad "pod spec: $POD"

# deploying again replaces the ConfigMap and rolls the pod (a new uid) to the new module
uid() { api "/api/v1/namespaces/default/pods/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])' 2>/dev/null; }
UID1=$(uid "$NAME")
OUT=$("$CLI" deploy "$HELLO" --name "$NAME" --node "$NODE" --memory 64Ki --kubeconfig "$KC" 2>&1)
RC=$?
UID2=$(uid "$NAME")
[ $RC -eq 0 ] && echo "$OUT" | grep -q "configmap/$NAME.wasm replaced" &&
	echo "$OUT" | grep -q "pod/$NAME replaced" && echo "$OUT" | grep -q "pod/$NAME running and ready on $NODE" &&
	[ -n "$UID2" ] && [ "$UID1" != "$UID2" ] &&
	ok "redeploy: ConfigMap replaced, pod rolled ($UID1 -> $UID2) and Running" ||
	bad "redeploy (rc $RC, uid $UID1 -> $UID2): $OUT"

# deploy waits: a pod that cannot start is reported with its reason and exit 1
OUT=$("$CLI" deploy "$HELLO" --name clitiny --node "$NODE" --memory 1Ki --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -eq 1 ] && echo "$OUT" | grep -q "pod/clitiny did not start on $NODE: CreateContainerError: ConfigMap default/clitiny.wasm needs [0-9]* bytes of linear memory, the limit is 1024: raise resources.limits.memory to at least [0-9]*$" &&
	ok "deploy of a pod that cannot start: exit 1, $(echo "$OUT" | grep 'did not start')" ||
	bad "deploy --memory 1Ki (rc $RC): $OUT"
# --no-wait returns once created
OUT=$("$CLI" --kubeconfig "$KC" deploy "$HELLO" --name clitiny --node "$NODE" --memory 1Ki --no-wait 2>&1)
RC=$?
[ $RC -eq 0 ] && echo "$OUT" | grep -q "pod/clitiny replaced" && ! echo "$OUT" | grep -q "did not start" &&
	ok "deploy --no-wait (global --kubeconfig first): exit 0 without waiting" ||
	bad "deploy --no-wait (rc $RC): $OUT"
"$CLI" delete clitiny --kubeconfig "$KC" >/dev/null 2>&1
# a module whose k32_init fails never becomes Ready: deploy reports the crash, exit 1
if [ -s "$INIT_FAIL" ]; then
	OUT=$("$CLI" deploy "$INIT_FAIL" --name cliinit --node "$NODE" --kubeconfig "$KC" 2>&1)
	RC=$?
	[ $RC -eq 1 ] && echo "$OUT" | grep -q "pod/cliinit did not start on $NODE: .*k32_init returned -5" &&
		! echo "$OUT" | grep -q "running and ready" &&
		ok "deploy of a pod whose k32_init fails: exit 1, $(echo "$OUT" | grep 'did not start')" ||
		bad "deploy init_fail.wasm (rc $RC): $OUT"
	"$CLI" delete cliinit --kubeconfig "$KC" >/dev/null 2>&1
elif [ "${CI:-}" = true ]; then
	bad "init_fail.wasm missing (CI=true)"
fi
# --timeout: a pod bound to a node that does not exist is never Ready
OUT=$("$CLI" deploy "$HELLO" --name cliwait --node ghost-node --timeout 1s --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -eq 1 ] && echo "$OUT" | grep -q "pod/cliwait is not ready after 1.0 s: still Pending on ghost-node" &&
	ok "deploy --timeout 1s: exit 1, $(echo "$OUT" | grep 'not ready')" ||
	bad "deploy --timeout 1s (rc $RC): $OUT"
curl -sS --cacert "$WORK/ca.crt" -H "Authorization: Bearer $TOKEN" -X DELETE \
	"$API/api/v1/namespaces/default/pods/cliwait?gracePeriodSeconds=0" >/dev/null
check_bad_early() { # the usage error names the flag
	OUT=$("$CLI" deploy "$HELLO" --name x --timeout soon --kubeconfig "$KC" 2>&1)
	[ $? -eq 2 ] && echo "$OUT" | grep -q -- "--timeout soon: expected a duration" &&
		ok "deploy --timeout soon -> usage: $OUT" || bad "deploy --timeout soon: $OUT"
}
check_bad_early
# a module ConfigMap made by hand (no kube32.io/module label) is listed too
api_post() { curl -sS --cacert "$WORK/ca.crt" -H "Authorization: Bearer $TOKEN" -X POST \
	-H 'Content-Type: application/json' -d "$2" "$API$1"; }
api_post /api/v1/namespaces/default/configmaps \
	'{"metadata":{"name":"byhand.wasm"},"binaryData":{"byhand.wasm":"AGFzbQEAAAA="}}' >/dev/null
api_post /api/v1/namespaces/default/configmaps '{"metadata":{"name":"settings"},"data":{"a":"b"}}' >/dev/null
api_post /api/v1/namespaces/default/configmaps \
	'{"metadata":{"name":"tagged.wasm"},"binaryData":{"v1":"AGFzbQEAAAA=","v2":"AGFzbQEAAAA="}}' >/dev/null
OUT=$("$CLI" --kubeconfig "$KC" get modules 2>&1)
echo "$OUT" | grep -Eq '^byhand\.wasm +- +8 +-$' && echo "$OUT" | grep -Eq '^tagged\.wasm +- +- +v1,v2$' && echo "$OUT" | grep -q "^$NAME.wasm" &&
	! echo "$OUT" | grep -q settings && ok "get modules lists the hand-made module, not other ConfigMaps" ||
	bad "get modules: $OUT"
# status: the board with its pool and pod server, the pod with its endpoint
OUT=$("$CLI" status --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -eq 0 ] && echo "$OUT" | grep -Eq "^$NODE +Ready +host +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+/[0-9]+ +127\.0\.0\.1:[0-9]+" &&
	echo "$OUT" | grep -q "curl -H 'X-Kube32-Pod: default/$NAME' http://127.0.0.1:" &&
	ok "status: board, pool used/free, pod endpoint" || bad "status (rc $RC): $OUT"

# console
OUT=$("$CLI" console "$NODE" TASKS --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -eq 0 ] && echo "$OUT" | grep -q '^K32_TASK' && ok "console TASKS: $(echo "$OUT" | grep -c '^K32_TASK') K32_TASK lines" ||
	bad "console TASKS (rc $RC): $OUT"
OUT=$("$CLI" console "$NODE" PODS --kubeconfig "$KC" 2>&1)
echo "$OUT" | grep -q "$NAME" && ok "console PODS lists $NAME" || bad "console PODS: $OUT"
OUT=$("$CLI" console "$NODE" MEM --kubeconfig "$KC" 2>&1)
echo "$OUT" | python3 -c '
import re, sys
lines = sys.stdin.read().splitlines()
mem = {}
for l in lines:
    m = re.match(r"K32_MEM region=(\S+) size=(\d+) used=(\d+) free=(\S+)", l)
    if m:
        mem[m[1]] = m.groups()[1:]
assert set(mem) == {"pod_pool", "kobj_region", "heap"}, lines
size, used, free = mem["pod_pool"]
assert int(size) > 0 and int(free) == int(size) - int(used), mem
assert lines[-1] == "K32_END MEM count=3", lines
' && ok "console MEM: free bytes of pod_pool, kobj_region and heap" || bad "console MEM: $OUT"
OUT=$("$CLI" console no-such-node TASKS --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -ne 0 ] && echo "$OUT" | grep -q 'HTTP 404' && ok "console on an unknown node: $OUT" ||
	bad "console unknown node (rc $RC): $OUT"

# logs through the control plane's pods/log
OUT=$("$CLI" logs "$NAME" --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -eq 0 ] && echo "$OUT" | grep -q 'hello from kube32: k32_init' && ok "logs $NAME: $(echo "$OUT" | head -1)" ||
	bad "logs (rc $RC): $OUT"
OUT=$("$CLI" logs "$NAME" --tail 1 --kubeconfig "$KC" 2>&1)
[ "$(echo "$OUT" | wc -l)" -eq 1 ] && ok "logs --tail 1: one line" || bad "logs --tail 1: $OUT"
check_logs_404=$("$CLI" logs no-such-pod --kubeconfig "$KC" 2>&1)
[ $? -ne 0 ] && echo "$check_logs_404" | grep -q 'HTTP 404' && ok "logs of an unknown pod: $check_logs_404" ||
	bad "logs unknown pod: $check_logs_404"

# the pod server of the node (from its Node status, as `console` finds it)
PODPORT=$(api "/api/v1/nodes/$NODE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])' 2>/dev/null)
pod() { # NAME ARGS... : curl to the pod NAME through the pod server
	local n=$1
	shift
	curl -sS -H "X-Kube32-Pod: default/$n" "$@"
}

# /containerLogs?follow=true: the lines so far, then it keeps streaming (hello logs a line
# every 10 ticks) until the client goes (curl's --max-time ends it: exit 28)
OUT=$(curl -sS -N --max-time 2 -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PODPORT/containerLogs/default/$NAME/c?follow=true" 2>/dev/null)
RC=$?
[ $RC -eq 28 ] && echo "$OUT" | grep -q 'hello from kube32: k32_init' &&
	ok "containerLogs follow=true streams until the client leaves: $(echo "$OUT" | head -1)" ||
	bad "containerLogs follow=true (curl rc $RC, expected 28 = still streaming): $OUT"
# the node's endpoints want the cluster's credentials (the kubeconfig's token)
CODE=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PODPORT/containerLogs/default/$NAME/c")
[ "$CODE" = 401 ] && ok "containerLogs without the token: 401" || bad "containerLogs without the token: HTTP $CODE"

# events: a pod with no k32_tick, driven by k32_event (apps/examples/events.c)
if [ -s "$EVENTS" ]; then
	EV=clievents
	OUT=$("$CLI" deploy "$EVENTS" --name "$EV" --node "$NODE" --memory 24Ki --kubeconfig "$KC" 2>&1) ||
		bad "deploy $EV: $OUT"
	for _ in $(seq 100); do
		api "/api/v1/namespaces/default/pods/$EV" | grep -q '"phase":"Running"' && break
		sleep 0.1
	done
	OUT=$(pod "$EV" --data 'hi-from-e2e' "http://127.0.0.1:$PODPORT/")
	[ "$OUT" = sent ] && ok "events: POST / wrote into the pod's channel" || bad "events POST /: $OUT"
	OUT=$(pod "$EV" --data 'pkt-e2e' "http://127.0.0.1:$PODPORT/queue")
	[ "$OUT" = queued ] && ok "events: POST /queue queued a user packet" || bad "events POST /queue: $OUT"
	LOGS=
	for _ in $(seq 50); do
		LOGS=$("$CLI" logs "$EV" --kubeconfig "$KC" 2>&1)
		echo "$LOGS" | grep -q 'got: hi-from-e2e' && echo "$LOGS" | grep -q 'user packet: pkt-e2e' && break
		sleep 0.1
	done
	echo "$LOGS" | grep -q 'got: hi-from-e2e' && echo "$LOGS" | grep -q 'user packet: pkt-e2e' &&
		ok "events: k32_event got the channel message and the user packet" || bad "events logs: $LOGS"
	OUT=
	for _ in $(seq 60); do # the timer fires every 2 s
		OUT=$(pod "$EV" "http://127.0.0.1:$PODPORT/")
		echo "$OUT" | grep -Eq 'timers=[1-9][0-9]* messages=1 user=1' && break
		sleep 0.1
	done
	echo "$OUT" | grep -Eq 'timers=[1-9][0-9]* messages=1 user=1' &&
		ok "events: the kobj timer fired on its own thread and reached k32_event: $OUT" ||
		bad "events counters: $OUT"
	STATS=$(curl -sS -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PODPORT/stats")
	echo "$STATS" | python3 -c "
import json, sys
p = [p for p in json.load(sys.stdin)['pods'] if p['name'] == '$EV'][0]
assert p['events']['delivered'] >= 3 and p['events']['overBudget'] == 0, p
" && ok "events: /stats counts the handler's calls" || bad "events /stats: $STATS"

	# logs -f: streams new lines as they come, and ends by itself when the pod goes
	"$CLI" logs -f "$EV" --kubeconfig "$KC" >"$WORK/follow.out" 2>&1 &
	FOLLOW_PID=$!
	sleep 0.5
	pod "$EV" --data 'after-follow' "http://127.0.0.1:$PODPORT/" >/dev/null
	for _ in $(seq 50); do
		grep -q 'got: after-follow' "$WORK/follow.out" && break
		sleep 0.1
	done
	grep -q 'got: hi-from-e2e' "$WORK/follow.out" && grep -q 'got: after-follow' "$WORK/follow.out" &&
		ok "logs -f: the old lines, then a new one as it came" || bad "logs -f: $(cat "$WORK/follow.out")"

	# delete: the pod (its stop event logs on the way out) and its module ConfigMap
	OUT=$("$CLI" delete "$EV" --kubeconfig "$KC" 2>&1)
	RC=$?
	[ $RC -eq 0 ] && echo "$OUT" | grep -q "pod/$EV deleted" && echo "$OUT" | grep -q "configmap/$EV.wasm deleted" &&
		ok "delete $EV: $(echo "$OUT" | tr '\n' ' ')" || bad "delete $EV (rc $RC): $OUT"
	api "/api/v1/namespaces/default/pods/$EV" | grep -q '"code":404' &&
		api "/api/v1/namespaces/default/configmaps/$EV.wasm" | grep -q '"code":404' &&
		ok "delete: pod and module are gone from the API" || bad "delete left something behind"
	ENDED=
	for _ in $(seq 50); do
		kill -0 "$FOLLOW_PID" 2>/dev/null || { ENDED=1; break; }
		sleep 0.1
	done
	if [ -n "$ENDED" ]; then
		wait "$FOLLOW_PID"
		ok "logs -f ended by itself when the pod was deleted (rc $?)"
	else
		kill "$FOLLOW_PID" 2>/dev/null
		bad "logs -f still running after the pod was deleted"
	fi
else
	[ "${CI:-}" = "true" ] && bad "events.wasm not given (CI=true requires it)" ||
		echo "cli-test: events.wasm not given: its checks are skipped"
fi

# get, top
OUT=$("$CLI" get pods --kubeconfig "$KC" 2>&1)
RC=$?
[ $RC -eq 0 ] && echo "$OUT" | head -1 | grep -Eq '^NAME +READY +STATUS +RESTARTS +NODE +IMAGE$' &&
	echo "$OUT" | grep -Eq "^$NAME +1/1 +Running +0 +$NODE +$NAME.wasm$" &&
	ok "get pods: $(echo "$OUT" | grep "^$NAME")" || bad "get pods (rc $RC): $OUT"
OUT=$("$CLI" get po -A --kubeconfig "$KC" 2>&1)
echo "$OUT" | grep -Eq "^default +$NAME +1/1 +Running" && ok "get po -A has the NAMESPACE column" ||
	bad "get po -A: $OUT"
OUT=$("$CLI" get pod "$NAME" --kubeconfig "$KC" 2>&1)
[ "$(echo "$OUT" | wc -l)" -eq 2 ] && echo "$OUT" | grep -q "^$NAME " && ok "get pod $NAME: one row" ||
	bad "get pod $NAME: $OUT"
OUT=$("$CLI" get nodes --kubeconfig "$KC" 2>&1)
echo "$OUT" | grep -Eq "^$NODE +Ready +host +[0-9]+ +1/[0-9]+ +-$" && ok "get nodes: $(echo "$OUT" | grep "^$NODE")" ||
	bad "get nodes: $OUT"
OUT=$("$CLI" get modules --kubeconfig "$KC" 2>&1)
echo "$OUT" | grep -Eq "^$NAME.wasm +$NAME +$(stat -c %s "$HELLO") +-$" &&
	ok "get modules: $(echo "$OUT" | grep "^$NAME")" || bad "get modules (hello.wasm is $(stat -c %s "$HELLO") bytes): $OUT"
OUT=$("$CLI" get pods -n empty-ns --kubeconfig "$KC" 2>&1)
[ $? -eq 0 ] && echo "$OUT" | grep -q 'No resources found in empty-ns namespace.' &&
	ok "get pods in an empty namespace: $OUT" || bad "get pods -n empty-ns: $OUT"
OUT=$("$CLI" get pod no-such-pod --kubeconfig "$KC" 2>&1)
[ $? -eq 1 ] && echo "$OUT" | grep -q 'HTTP 404' && ok "get an unknown pod -> rc 1: $OUT" ||
	bad "get unknown pod: $OUT"
OUT=$("$CLI" top pods --kubeconfig "$KC" 2>&1)
echo "$OUT" | grep -Eq "^$NAME +[0-9.]+m +[1-9][0-9]+$" && ok "top pods: $(echo "$OUT" | grep "^$NAME")" ||
	bad "top pods: $OUT"
OUT=$("$CLI" top nodes --kubeconfig "$KC" 2>&1)
echo "$OUT" | grep -Eq "^$NODE +[0-9.]+m +[1-9][0-9]+$" && ok "top nodes: $(echo "$OUT" | grep "^$NODE")" ||
	bad "top nodes: $OUT"
OUT=$("$CLI" delete no-such-pod --kubeconfig "$KC" 2>&1)
[ $? -eq 1 ] && echo "$OUT" | grep -q 'HTTP 404' && ok "delete an unknown pod -> rc 1: $OUT" ||
	bad "delete unknown pod: $OUT"

# --dry-run prints YAML and uploads nothing
OUT=$("$CLI" deploy "$HELLO" --name dry --memory 24Ki --hardware i2c:bme688 --budget 5000 --dry-run 2>&1)
RC=$?
if python3 -c 'import yaml' 2>/dev/null; then
	echo "$OUT" | python3 -c '
import sys, yaml
d = yaml.safe_load(sys.stdin)
c = d["spec"]["containers"][0]
assert d["kind"] == "Pod" and d["metadata"]["name"] == "dry", d
assert c["image"] == "dry.wasm" and c["resources"]["limits"]["memory"] == "24Ki", c
a = d["metadata"]["annotations"]
assert a["kube32.io/hardware"] == "i2c:bme688" and a["kube32.io/execution-budget"] == "5000", a
' && [ $RC -eq 0 ] && ok "--dry-run YAML parses with the manifest's fields" || bad "--dry-run (rc $RC): $OUT"
else
	[ $RC -eq 0 ] && echo "$OUT" | grep -q 'image: dry.wasm' && ok "--dry-run YAML (grep)" || bad "--dry-run: $OUT"
fi
api /api/v1/namespaces/default/configmaps/dry.wasm | grep -q '"code":404' &&
	ok "--dry-run uploaded nothing" || bad "--dry-run created dry.wasm"

# bad inputs
printf 'not wasm' >"$WORK/bad.wasm"
check_bad() { # DESCRIPTION EXPECTED_TEXT ARGS...
	local what=$1 want=$2
	shift 2
	OUT=$("$CLI" "$@" 2>&1)
	RC=$?
	[ $RC -ne 0 ] && echo "$OUT" | grep -q -- "$want" && ok "$what -> rc $RC: $OUT" ||
		bad "$what (rc $RC, expected '$want'): $OUT"
}
check_bad "not a Wasm module" "is not a Wasm module" deploy "$WORK/bad.wasm" --name x --kubeconfig "$KC"
check_bad "missing file" "cannot read" deploy "$WORK/none.wasm" --name x --kubeconfig "$KC"
check_bad "bad quantity" "is not a quantity" deploy "$HELLO" --name x --memory 12Qi --kubeconfig "$KC"
check_bad "bad hardware" "expected none or i2c" deploy "$HELLO" --name x --hardware spi:x --kubeconfig "$KC"
check_bad "missing --name" "--name is required" deploy "$HELLO"
sed "s/:$PORT/:1/" "$KC" >"$WORK/dead.kubeconfig"
check_bad "unreachable server" "failed" deploy "$HELLO" --name x --kubeconfig "$WORK/dead.kubeconfig"
check_bad "bad namespace" "lower-case" deploy "$HELLO" --name x --namespace Bad_NS --kubeconfig "$KC"
check_bad "get an unknown kind" "unknown kind deployments" get deployments --kubeconfig "$KC"
check_bad "logs -f --previous" "do not go together" logs "$NAME" -f -p --kubeconfig "$KC"
check_bad "top of modules" "expected pods or nodes" top modules --kubeconfig "$KC"
check_bad "unknown command" "unknown command frobnicate" frobnicate
"$CLI" --help | grep -q 'kube32-cli deploy' && ok "--help" || bad "--help"

echo "cli-test: $PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
