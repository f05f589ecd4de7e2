#!/usr/bin/env bash
# End-to-end of the cluster (issue 6, node half): start kube32-sim with two boards (a
# cardputer and a host board) on free loopback ports, then with the real kubectl: nodes
# Ready, a pod pinned by nodeName Running, `kubectl logs` (plain, -f, --previous), the pod's
# HTTP handler through the node's pod server (curl with X-Kube32-Pod), `kubectl top` (pods,
# nodes: metrics.k8s.io from the kubelets' pool accounting), a Deployment through
# the scheduler and controllers (when built: rollout, scale, rolling update and undo, a
# DaemonSet, a Job), a trapping pod in CrashLoopBackOff with its trap message (and its
# kubelet Events through events.k8s.io/v1, the same store as core/v1), a
# run-to-completion module, graceful deletion, a board joining
# from another process (--join) whose pod keeps running while the control plane restarts
# (nothing lost) and that goes NotReady when killed (its Deployment pod then comes back on
# another board), and a clean SIGTERM stop.
#
# Then the same control plane as kube32-server --controllers (src/cplane): a board joins it
# from kube32-sim --join, a Deployment is scheduled onto it, and `kubectl logs -f` and
# `kubectl top` work through it.
#
#   cluster_e2e.sh /path/to/kube32-sim /path/to/dir/with/example/pods [/path/to/kube32-server]
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl, curl or the example pods
# missing (skipped; under CI=true that is a failure).
set -u

SIM=${1:?usage: cluster_e2e.sh /path/to/kube32-sim PODS_DIR}
. "$(dirname "$0")/sim_lib.sh"
PODS=${2:?usage: cluster_e2e.sh /path/to/kube32-sim PODS_DIR [KUBE32_SERVER]}
SERVER=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KUBECTL=${KUBECTL:-/usr/bin/kubectl}

missing() { sim_skip cluster-e2e "$@"; }
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
command -v curl >/dev/null || missing curl "install the Debian package curl"
for m in hello crashy countdown; do
	[ -s "$PODS/$m.wasm" ] || missing "$m.wasm" "not built in $PODS (clang and lld build apps/examples)"
done

sim_workdir cluster "$PODS"
cp "$PODS/hello.wasm" "$WORK/images/hello-v2.wasm" # a "new version" for the rolling update
SIM_PIDS="SIM_PID JOIN_PID SRV_PID SJOIN_PID"
SIM_PID=
JOIN_PID=
SRV_PID=
SJOIN_PID=

"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards cardputer:1,host:1 --pod-port 0 --node-grace 4 --pod-eviction 3 \
	>"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" cluster-e2e
PORT=$(cat "$WORK/port")
CTRL=0
grep -q "scheduler and controllers running" "$WORK/sim.log" && CTRL=1
echo "cluster-e2e: kube32-sim pid $SIM_PID on https://127.0.0.1:$PORT (controllers: $CTRL)"
# the node endpoints (/console, /stats, /containerLogs) take the cluster's credentials
ADMIN_TOKEN=$(sed -n 's/^ *token: //p' "$KUBECONFIG")
nodecurl() { curl -s -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }
export ADMIN_TOKEN
export -f nodecurl

k() { "$KUBECTL" "$@"; }
export -f k
export KUBECTL
podport() { k get node "$1" -o 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'; }
podcurl() { # podcurl NODE NS/POD PATH
	curl -s -w ' HTTP %{http_code}' -H "X-Kube32-Pod: $2" "http://127.0.0.1:$(podport "$1")$3" |
		tr '\n' ' '
}
export -f podport podcurl

# ---- nodes ------------------------------------------------------------------------------------
eventually node-cardputer-ready 'cardputer-1 +Ready' 20 k get nodes --no-headers
eventually node-host-ready 'host-1 +Ready' 20 k get nodes --no-headers
check node-capacity '^81920 8$' k get node cardputer-1 -o 'jsonpath={.status.capacity.memory} {.status.capacity.pods}'
check node-hardware 'i2c:bme688,i2c:miniscale,i2c:rfid' k get node cardputer-1 -o 'jsonpath={.metadata.annotations.kube32\.io/hardware}'
check node-wide 'host-1 +Ready .*v1\.32\.0-kube32 +127\.0\.0\.1' k get nodes -o wide
check lease 'host-1' k get lease -n kube-node-lease

# ---- a pinned pod ------------------------------------------------------------------------------
cat >"$WORK/pinned.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: hello-pinned
spec:
  nodeName: host-1
  containers:
  - name: main
    image: hello.wasm
    resources:
      limits: {memory: 24Ki}
EOF
check apply-pinned 'pod/hello-pinned created' k apply -f "$WORK/pinned.yaml"
check wait-pinned 'condition met' k wait --for=condition=Ready pod/hello-pinned --timeout=60s
check pinned-running 'hello-pinned +1/1 +Running +0 .* host-1' k get pod hello-pinned -o wide
check logs 'hello from kube32: k32_init' k logs hello-pinned
check logs-timestamps '^20[0-9-]+T[0-9:]+Z hello from kube32' k logs --timestamps hello-pinned
check logs-follow 'tick 1' timeout 3 "$KUBECTL" logs -f hello-pinned
# --tail=0: only lines logged after the request, so only a stream shows any
check logs-follow-new 'tick [0-9]+' timeout 4 "$KUBECTL" logs -f --tail=0 hello-pinned
check pod-http 'hello from kube32: ticks=[0-9]+ path=/hi\?x=1.* HTTP 200' podcurl host-1 default/hello-pinned '/hi?x=1'
check pod-http-404 'is not on node host-1.* HTTP 404' podcurl host-1 default/nosuch /
check pod-http-wrong-node 'HTTP 404' podcurl cardputer-1 default/hello-pinned /
check node-stats '"name":"hello-pinned","container":"main","state":"running"' nodecurl "http://127.0.0.1:$(podport host-1)/stats"
check console-pods 'K32_POD default/hello-pinned state=running' nodecurl -X POST --data 'K32_CMD:PODS' "http://127.0.0.1:$(podport host-1)/console"
check console-mem 'K32_MEM region=pod_pool size=81920' nodecurl -X POST --data 'K32_CMD:MEM' "http://127.0.0.1:$(podport cardputer-1)/console"
# each board its own kernel objects: the cardputer's region is its profile's 32 KiB
check console-mem-kobj 'K32_MEM region=kobj_region size=32768 used=[0-9]+ free=[0-9]+ scope=node' nodecurl -X POST --data 'K32_CMD:MEM' "http://127.0.0.1:$(podport cardputer-1)/console"
# without them: 401 (pod routes stay open, checked above)
check console-401 'HTTP 401' curl -s -o /dev/null -w 'HTTP %{http_code}' -X POST --data 'K32_CMD:PODS' "http://127.0.0.1:$(podport host-1)/console"
check stats-401 'HTTP 401' curl -s -o /dev/null -w 'HTTP %{http_code}' "http://127.0.0.1:$(podport host-1)/stats"
check logs-401 'HTTP 401' curl -s -o /dev/null -w 'HTTP %{http_code}' "http://127.0.0.1:$(podport host-1)/containerLogs/default/hello-pinned/main"
check stats-wrong-token 'HTTP 401' curl -s -o /dev/null -w 'HTTP %{http_code}' -H 'Authorization: Bearer nope' "http://127.0.0.1:$(podport host-1)/stats"
check top-pods 'hello-pinned +[0-9]+m +[0-9]+Mi' k top pods
check top-nodes 'host-1 +[0-9]+m +[0-9]+% +[0-9]+Mi +[0-9]+%' k top nodes
check metrics-pod-bytes '"memory":"([1-9][0-9]{4,}|[1-9][0-9]+Ki|[1-9][0-9]*Mi)"' k get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods/hello-pinned

# ---- a pod that traps ----------------------------------------------------------------------------
cat >"$WORK/crashy.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: crashy
spec:
  nodeName: cardputer-1
  containers:
  - name: main
    image: crashy.wasm
    resources:
      limits: {memory: 24Ki}
EOF
check apply-crashy 'pod/crashy created' k apply -f "$WORK/crashy.yaml"
eventually crashloop 'crashy +0/1 +CrashLoopBackOff' 60 k get pod crashy --no-headers
check crash-describe 'Message: +out of bounds memory access' k describe pod crashy
check crash-events 'Warning +BackOff .*kubelet' k describe pod crashy
# one Event store (issue 16): the kubelet's core/v1 Events through events.k8s.io/v1, in its
# shape, found by its own field names
check crash-events-v1 'Warning +BackOff +pod/crashy' k get events.v1.events.k8s.io \
	--field-selector regarding.name=crashy,reason=BackOff
check crash-events-v1-fields '^events.k8s.io/v1 kubelet .*crashy' k get events.v1.events.k8s.io \
	--field-selector regarding.name=crashy,reason=BackOff \
	-o 'jsonpath={.items[0].apiVersion} {.items[0].reportingController} {.items[0].note}'
check crash-previous 'Error: out of bounds memory access' k logs crashy --previous
check crash-exit-code '^1$' k get pod crashy -o 'jsonpath={.status.containerStatuses[0].lastState.terminated.exitCode}'

# ---- a Job ----------------------------------------------------------------------------------------
cat >"$WORK/job.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: countdown
spec:
  nodeName: host-1
  restartPolicy: Never
  containers:
  - name: main
    image: countdown.wasm
EOF
check apply-countdown 'pod/countdown created' k apply -f "$WORK/job.yaml"
eventually countdown-succeeded 'countdown +0/1 +(Completed|Succeeded)' 20 k get pod countdown --no-headers
check countdown-logs 'countdown: done' k logs countdown
check missing-image-apply 'pod/ghost created' k run ghost --image=ghost.wasm --overrides='{"spec":{"nodeName":"host-1"}}'
eventually missing-image 'ghost +0/1 +(ErrImagePull|ImagePullBackOff)' 20 k get pod ghost --no-headers
check missing-image-msg "not found: no file ghost.wasm in node host-1's image directory, no ConfigMap ghost.wasm" k get pod ghost -o 'jsonpath={.status.containerStatuses[0].state.waiting.message}'

# ---- through the scheduler and controllers --------------------------------------------------------
if [ "$CTRL" = 1 ]; then
	check apply-deployment 'deployment.apps/hello created' k apply -f "$ROOT/apps/examples/hello-deployment.yaml"
	check rollout 'successfully rolled out' k rollout status deployment/hello --timeout=60s
	eventually deploy-pods '^2$' 60 bash -c "\"\$KUBECTL\" get pods -l app=hello --no-headers | grep -c ' Running '"
	DPOD=$(k get pods -l app=hello -o 'jsonpath={.items[0].metadata.name}')
	DNODE=$(k get pods -l app=hello -o 'jsonpath={.items[0].spec.nodeName}')
	check deploy-pod-http 'hello from kube32.* HTTP 200' podcurl "$DNODE" "default/$DPOD" /
	check deploy-logs 'hello from kube32: k32_init' k logs deploy/hello
	check scale 'deployment.apps/hello scaled' k scale deployment/hello --replicas=3
	eventually scaled-pods '^3$' 60 bash -c "\"\$KUBECTL\" get pods -l app=hello --no-headers | grep -c ' Running '"
	# a pod too big for the cardputer's 80 KiB pool stays Pending with the shortfall
	cat >"$WORK/big.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: too-big
spec:
  nodeSelector: {kube32.io/board: cardputer}
  containers:
  - name: main
    image: hello.wasm
    resources:
      limits: {memory: 100Ki}
EOF
	check apply-big 'pod/too-big created' k apply -f "$WORK/big.yaml"
	eventually big-pending 'FailedScheduling' 20 k get events --field-selector involvedObject.name=too-big
	check big-still-pending 'too-big +0/1 +Pending' k get pod too-big --no-headers
	# a rolling update to a new module version, then back
	check set-image 'deployment.apps/hello image updated' k set image deployment/hello main=hello-v2.wasm
	check rollout-v2 'successfully rolled out' k rollout status deployment/hello --timeout=60s
	eventually v2-pods '^3$' 30 bash -c "\"\$KUBECTL\" get pods -l app=hello -o jsonpath='{range .items[*]}{.spec.containers[0].image}{\" \"}{.status.phase}{\"\\n\"}{end}' | grep -c '^hello-v2.wasm Running'"
	check rollout-undo 'rolled back' k rollout undo deployment/hello
	check rollout-v1 'successfully rolled out' k rollout status deployment/hello --timeout=60s
	# a DaemonSet: one pod on each matching node
	cat >"$WORK/ds.yaml" <<'EOF2'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: hello-ds
spec:
  selector:
    matchLabels: {app: hello-ds}
  template:
    metadata:
      labels: {app: hello-ds}
    spec:
      nodeSelector: {kube32.io/board: host}
      containers:
      - name: main
        image: hello.wasm
        resources:
          limits: {memory: 24Ki}
EOF2
	check apply-ds 'daemonset.apps/hello-ds created' k apply -f "$WORK/ds.yaml"
	eventually ds-pod 'hello-ds-[a-z0-9]+ +1/1 +Running .* host-1' 30 k get pods -l app=hello-ds -o wide --no-headers
	check ds-one-pod '^1$' bash -c "\"\$KUBECTL\" get pods -l app=hello-ds --no-headers | wc -l | tr -d ' '"
	# a Job of a run-to-completion module
	cat >"$WORK/job-ctrl.yaml" <<'EOF2'
apiVersion: batch/v1
kind: Job
metadata:
  name: countdown-job
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: countdown.wasm
EOF2
	check apply-job 'job.batch/countdown-job created' k apply -f "$WORK/job-ctrl.yaml"
	check job-complete 'condition met' k wait --for=condition=complete job/countdown-job --timeout=60s
	check job-logs 'countdown: done' k logs job/countdown-job
else
	echo "cluster-e2e: no controllers in this build: Deployment checks skipped"
fi

# ---- a board in another process ---------------------------------------------------------------------
"$SIM" --join "https://127.0.0.1:$PORT" --token "$ADMIN_TOKEN" --ca-file "$DATA/pki/ca.crt" \
	--boards host:1 --node-name remote-1 --pod-port 0 --images "$WORK/images" \
	>"$WORK/join.log" 2>&1 &
JOIN_PID=$!
eventually remote-ready 'remote-1 +Ready' 20 k get node remote-1 --no-headers
check remote-pod 'pod/hello-remote created' k run hello-remote --image=hello.wasm --overrides='{"spec":{"nodeName":"remote-1"}}'
check remote-wait 'condition met' k wait --for=condition=Ready pod/hello-remote --timeout=30s
check remote-logs 'hello from kube32: k32_init' k logs hello-remote
# logs -f of a board in another process: the control plane relays new lines as they come
check remote-logs-follow 'tick [0-9]+' timeout 4 "$KUBECTL" logs -f --tail=0 hello-remote
check remote-http 'hello from kube32.* HTTP 200' podcurl remote-1 default/hello-remote /

# ---- restart the control plane: nothing is lost, the remote board's pod keeps running -------------
sleep 1
TICKS0=$(podcurl remote-1 default/hello-remote / | sed -n 's/.*ticks=\([0-9]*\).*/\1/p')
STARTED0=$(k get pod hello-remote -o 'jsonpath={.status.containerStatuses[0].state.running.startedAt}')
kill -TERM "$SIM_PID"
wait "$SIM_PID" 2>/dev/null
"$SIM" --data-dir "$DATA" --port "$PORT" --images "$WORK/images" \
	--boards cardputer:1,host:1 --pod-port 0 --node-grace 4 --pod-eviction 3 \
	>"$WORK/sim2.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do
	grep -q "kube32-sim: ready" "$WORK/sim2.log" 2>/dev/null && break
	kill -0 "$SIM_PID" 2>/dev/null || break
	sleep 0.1
done
check restart-ready 'kube32-sim: ready' cat "$WORK/sim2.log"
check restart-kept-pods 'hello-remote' k get pods
check restart-remote-running 'hello-remote +1/1 +Running +0 ' k get pod hello-remote --no-headers
sleep 2
TICKS1=$(podcurl remote-1 default/hello-remote / | sed -n 's/.*ticks=\([0-9]*\).*/\1/p')
STARTED1=$(k get pod hello-remote -o 'jsonpath={.status.containerStatuses[0].state.running.startedAt}')
if [ -n "$TICKS0" ] && [ -n "$TICKS1" ] && [ "$TICKS1" -gt "$TICKS0" ] && [ "$STARTED0" = "$STARTED1" ]; then
	sim_pass "restart-remote-kept-running (ticks $TICKS0 -> $TICKS1, started $STARTED1)"
else
	sim_fail restart-remote-kept-running "ticks $TICKS0 -> $TICKS1, startedAt $STARTED0 -> $STARTED1"
fi
check restart-pinned 'condition met' k wait --for=condition=Ready pod/hello-pinned --timeout=60s
eventually restart-remote-lease 'remote-1 +Ready' 20 k get node remote-1 --no-headers

if [ "$CTRL" = 1 ]; then
	# a Deployment pod that lives on remote-1 (the other boards cordoned while it lands)
	check cordon 'cordoned' k cordon host-1 cardputer-1
	check roam-create 'deployment.apps/roam created' k create deployment roam --image=hello.wasm
	eventually roam-on-remote 'Running +remote-1' 30 k get pods -l app=roam -o 'jsonpath={.items[0].status.phase} {.items[0].spec.nodeName}'
	check uncordon 'uncordoned' k uncordon host-1 cardputer-1
fi
disown "$JOIN_PID" 2>/dev/null # no "Killed" notice from the shell
kill -9 "$JOIN_PID"
for _ in $(seq 50); do
	kill -0 "$JOIN_PID" 2>/dev/null || break
	sleep 0.1
done
JOIN_PID=
if [ "$CTRL" = 1 ]; then
	eventually remote-notready 'remote-1 +(NotReady|Unknown)' 30 k get node remote-1 --no-headers
	# its Deployment pod is evicted and comes back on a live board
	eventually roam-moved 'Running +(host-1|cardputer-1)' 60 k get pods -l app=roam -o 'jsonpath={range .items[*]}{.status.phase} {.spec.nodeName}{"\n"}{end}'
fi

# ---- deletion --------------------------------------------------------------------------------------------
check delete-pinned 'pod "hello-pinned" deleted' k delete pod hello-pinned --timeout=30s
check pinned-gone 'NotFound' k get pod hello-pinned
check pod-http-gone 'HTTP 404' podcurl host-1 default/hello-pinned /

# ---- stop ---------------------------------------------------------------------------------------------------
sim_stop "$SIM_PID"
SIM_PID=

# ---- kube32-server: the same control plane on its own, a board joining it ------------------------
if [ -n "$SERVER" ]; then
	SDATA=$WORK/server
	"$SERVER" --controllers --data-dir "$SDATA" --port 0 --port-file "$WORK/sport" \
		>"$WORK/server.log" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 100); do
		[ -s "$WORK/sport" ] && break
		sleep 0.1
	done
	export SKC=$SDATA/admin.kubeconfig
	ks() { "$KUBECTL" --kubeconfig "$SKC" "$@"; }
	export -f ks
	check server-controllers 'scheduler and controllers running' cat "$WORK/server.log"
	STOKEN=$(sed -n 's/^ *token: //p' "$SKC")
	# its board from a board file (kube32-sim --config)
	printf '# the joining board\nhost name=sworker-1\nhost-pool=2Mi\n' >"$WORK/boards.conf"
	"$SIM" --join "https://127.0.0.1:$(cat "$WORK/sport")" --token "$STOKEN" \
		--ca-file "$SDATA/pki/ca.crt" --config "$WORK/boards.conf" --pod-port 0 \
		--images "$WORK/images" >"$WORK/sjoin.log" 2>&1 &
	SJOIN_PID=$!
	eventually server-node-ready 'sworker-1 +Ready' 20 ks get nodes --no-headers
	check server-board-file '^2097152$' ks get node sworker-1 -o 'jsonpath={.status.capacity.memory}'
	printf 'host count=x\n' >"$WORK/bad.conf"
	check board-file-error 'line 1: count=x: expected count=1..1024' "$SIM" --config "$WORK/bad.conf"
	check server-deploy 'deployment.apps/shello created' ks create deployment shello --image=hello.wasm
	check server-rollout 'successfully rolled out' ks rollout status deployment/shello --timeout=60s
	check server-pod-on-board 'sworker-1' ks get pods -l app=shello -o 'jsonpath={.items[0].spec.nodeName}'
	check server-logs-follow 'tick [0-9]+' timeout 4 "$KUBECTL" --kubeconfig "$SKC" logs -f --tail=0 deploy/shello
	eventually server-top 'shello-[a-z0-9-]+ +[0-9]+m +[0-9]+Mi' 30 ks top pods --no-headers
	disown "$SJOIN_PID" 2>/dev/null
	kill -9 "$SJOIN_PID"
	SJOIN_PID=
	kill -TERM "$SRV_PID"
	rc=0
	wait "$SRV_PID" || rc=$?
	SRV_PID=
	check server-sigterm "^0$" echo "$rc"
else
	echo "cluster-e2e: no kube32-server given: its checks skipped"
fi

sim_summary cluster-e2e "$WORK/sim.log"
