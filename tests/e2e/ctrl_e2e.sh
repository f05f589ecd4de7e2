#!/usr/bin/env bash
# End-to-end of the scheduler and controllers (issue 6, control-plane half; src/ctrl):
# kube32-sim with a cardputer and a host board on free loopback ports, driven by the real
# kubectl: a Deployment's rollout status, scale up and down, a rolling update and
# `rollout undo`, FailedScheduling naming the shortfall, hardware placement, a DaemonSet, a
# Job to completion, a CronJob (a Job made from it by hand runs; deleting it collects it), namespace deletion, --cascade=orphan and adoption, and a worker process
# killed so that its pods come back on another node.
#
#   ctrl_e2e.sh /path/to/kube32-sim /path/to/dir/with/example/pods
#
# Exit 0: all checks passed; 1: a check failed; 77: kube32-sim, kubectl or the example pods
# are missing (skipped; under CI=true that is a failure).
set -u

SIM=${1:?usage: ctrl_e2e.sh /path/to/kube32-sim PODS_DIR}
. "$(dirname "$0")/sim_lib.sh"
PODS=${2:?usage: ctrl_e2e.sh /path/to/kube32-sim PODS_DIR}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}

skip() { sim_skip ctrl-e2e "$@"; }
[ -x "$SIM" ] || skip kube32-sim "expected at $SIM (build cmd/kube32-sim)"
[ -x "$KUBECTL" ] || skip kubectl "expected at $KUBECTL (set KUBECTL=...)"
for m in hello countdown; do
	[ -s "$PODS/$m.wasm" ] || skip "$m.wasm" "not built in $PODS (clang and lld build apps/examples)"
done

sim_workdir ctrl "$PODS"
cp "$WORK/images/hello.wasm" "$WORK/images/hello-v2.wasm" # a second "version"
SIM_PID=
JOIN_PID=

"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards cardputer:1,host:1 --pod-port 0 --node-grace 15 --pod-eviction 2 \
	>"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" ctrl-e2e
PORT=$(cat "$WORK/port")
echo "ctrl-e2e: kube32-sim pid $SIM_PID on https://127.0.0.1:$PORT"

k() { "$KUBECTL" "$@"; }
export -f k
export KUBECTL

eventually nodes-ready 'cardputer-1 +Ready.*host-1 +Ready|host-1 +Ready.*cardputer-1 +Ready' 20 \
	bash -c 'k get nodes --no-headers | tr "\n" " "'

# ---- Deployment: rollout status, scale, rolling update, undo -----------------------------------
cat >"$WORK/web.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: hello.wasm
        resources:
          limits: {memory: 16Ki}
EOF
check apply-deployment 'deployment.apps/web created' k apply -f "$WORK/web.yaml"
check rollout-status 'successfully rolled out' k rollout status deployment/web --timeout=60s
check deployment-ready '^web +3/3 +3 +3' k get deployment web --no-headers
check rs-hash 'web-[a-z0-9]+ +3 +3 +3' k get rs --no-headers
check pods-owned '^ReplicaSet$' bash -c \
	'k get pods -l app=web -o jsonpath="{range .items[*]}{.metadata.ownerReferences[0].kind}{\"\n\"}{end}" | sort -u'
check scale-up 'deployment.apps/web scaled' k scale deployment/web --replicas=5
check scale-up-rollout 'successfully rolled out' k rollout status deployment/web --timeout=60s
eventually scale-up-pods '^5$' 30 bash -c 'k get pods -l app=web --no-headers | grep -c Running'
check scale-down 'deployment.apps/web scaled' k scale deployment/web --replicas=2
eventually scale-down-pods '^2$' 30 bash -c 'k get pods -l app=web --no-headers | grep -v Terminating | grep -c Running'
check set-image 'image updated' k set image deployment/web main=hello-v2.wasm
check update-rollout 'successfully rolled out' k rollout status deployment/web --timeout=60s
check update-image 'hello-v2.wasm' k get deployment web -o 'jsonpath={.spec.template.spec.containers[0].image}'
check revision-2 '^2$' k get deployment web -o 'jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision}'
check history '1 +<none>.*2 +<none>' bash -c 'k rollout history deployment/web | tr "\n" " "'
check undo 'rolled back' k rollout undo deployment/web
check undo-rollout 'successfully rolled out' k rollout status deployment/web --timeout=60s
check undo-image '^hello.wasm$' k get deployment web -o 'jsonpath={.spec.template.spec.containers[0].image}'
check undo-revision '^3$' k get deployment web -o 'jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision}'
check undo-no-new-rs '^2$' bash -c 'k get rs --no-headers | grep -c "^web-"'
check conditions 'Available=True/MinimumReplicasAvailable Progressing=True/NewReplicaSetAvailable' k get deployment web \
	-o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason} {end}'

# ---- scheduling: shortfall and hardware ----------------------------------------------------------
cat >"$WORK/big.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  nodeSelector: {kube32.io/board: cardputer}
  containers:
  - name: main
    image: hello.wasm
    resources:
      limits: {memory: 96Ki}
EOF
# the board label may not exist: fall back to a pod that no node can hold
if ! k get nodes -l kube32.io/board=cardputer --no-headers 2>/dev/null | grep -q cardputer; then
	sed -i 's/nodeSelector: {kube32.io\/board: cardputer}/nodeSelector: {}/; s/96Ki/512Mi/' "$WORK/big.yaml"
fi
check create-big 'pod/big created' k apply -f "$WORK/big.yaml"
eventually big-pending 'Pending' 10 k get pod big --no-headers
eventually failed-scheduling '0/2 nodes are available: .*Insufficient memory.*Details: .*pod needs [0-9]+ bytes' 20 \
	k get events --field-selector reason=FailedScheduling,involvedObject.name=big -o 'jsonpath={.items[*].message}'
check pod-scheduled-false 'False Unschedulable' k get pod big \
	-o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
cat >"$WORK/hw.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: needs-bme688
  annotations: {kube32.io/hardware: "i2c:bme688"}
spec:
  containers:
  - name: main
    image: hello.wasm
    resources:
      limits: {memory: 8Ki}
EOF
check create-hw 'created' k apply -f "$WORK/hw.yaml"
eventually hw-placed '^cardputer-1$' 20 k get pod needs-bme688 -o 'jsonpath={.spec.nodeName}'

# ---- DaemonSet and Job ------------------------------------------------------------------------------
cat >"$WORK/ds.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: main
        image: hello.wasm
        resources:
          limits: {memory: 8Ki}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: count
spec:
  completions: 2
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: countdown.wasm
EOF
check apply-ds-job 'daemonset.apps/agent created' k apply -f "$WORK/ds.yaml"
check ds-rollout 'successfully rolled out' k rollout status daemonset/agent --timeout=60s
check ds-per-node '^2 2 2$' k get ds agent \
	-o 'jsonpath={.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady}'
check ds-nodes '^cardputer-1 host-1 $' bash -c \
	'k get pods -l app=agent -o jsonpath="{range .items[*]}{.spec.nodeName}{\"\n\"}{end}" | sort | tr "\n" " "'
# DaemonSet history (ControllerRevisions): an update, its history, and an undo
check ds-revisions '^agent-[a-z0-9]+ +daemonset.apps/agent +1 ' k get controllerrevisions --no-headers
check ds-set-image 'image updated' k set image daemonset/agent main=hello-v2.wasm
check ds-update-rollout 'successfully rolled out' k rollout status daemonset/agent --timeout=90s
check ds-history '^1 +<none> *2 +<none> *$' bash -c 'k rollout history daemonset/agent | grep -E "^[0-9]" | tr "\n" " "'
check ds-history-revision 'hello-v2.wasm' k rollout history daemonset/agent --revision=2
check ds-undo 'rolled back' k rollout undo daemonset/agent
check ds-undo-rollout 'successfully rolled out' k rollout status daemonset/agent --timeout=90s
check ds-undo-image '^hello.wasm$' k get ds agent -o 'jsonpath={.spec.template.spec.containers[0].image}'
# the restored template is revision 1 renumbered as 3, as upstream: 2 and 3 remain
check ds-history-after-undo '^2 +<none> *3 +<none> *$' bash -c 'k rollout history daemonset/agent | grep -E "^[0-9]" | tr "\n" " "'
eventually ds-pods-restored '^hello.wasm hello.wasm $' 60 bash -c \
	'k get pods -l app=agent --field-selector=status.phase=Running -o jsonpath="{range .items[*]}{.spec.containers[0].image}{\"\n\"}{end}" | sort | tr "\n" " "'
check job-complete 'condition met' k wait --for=condition=complete job/count --timeout=60s
check job-status '^2 ' k get job count -o 'jsonpath={.status.succeeded} {.status.active}'
check job-logs 'countdown: done' k logs job/count

# ---- CronJob: made, listed and explained; a bad schedule refused; a Job from it runs the module ----
check cronjob-create 'cronjob.batch/tick created' k create cronjob tick --image=countdown.wasm \
	--schedule='*/5 * * * *' --restart=Never
check cronjob-get '^tick +\*/5 \* \* \* \* +<none> +false +0 +<none>' k get cronjob tick --no-headers
check cronjob-bad-schedule 'spec.schedule: Invalid value: "61 \* \* \* \*": minute: "61" is outside 0-59' \
	k create cronjob bad --image=countdown.wasm --schedule='61 * * * *'
check cronjob-explain 'The schedule in Cron format' k explain cronjob.spec.schedule
check cronjob-manual 'job.batch/tick-now created' k create job tick-now --from=cronjob/tick
check cronjob-manual-done 'condition met' k wait --for=condition=complete job/tick-now --timeout=60s
check cronjob-manual-owner '^CronJob tick$' k get job tick-now \
	-o 'jsonpath={.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}'
check cronjob-delete 'cronjob.batch "tick" deleted' k delete cronjob tick
eventually cronjob-jobs-collected 'No resources found|^$' 30 k get job tick-now --ignore-not-found

# ---- namespace deletion ------------------------------------------------------------------------------
check ns-create 'created' k create namespace scratch
check ns-deploy 'created' k -n scratch create deployment tmp --image=hello.wasm --replicas=2
eventually ns-pods '^2$' 30 bash -c 'k -n scratch get pods --no-headers | grep -c Running'
check ns-delete 'deleted' k delete namespace scratch --timeout=60s
check ns-gone 'NotFound' k get namespace scratch
check ns-empty 'No resources found' k -n scratch get pods,rs,deploy

# ---- --cascade=orphan and adoption ------------------------------------------------------------------
check orphan-delete 'deleted' k delete deployment web --cascade=orphan
check orphan-rs-stays 'web-[a-z0-9]+ +2 +2' k get rs --no-headers
check orphan-no-owner '^[^u]*$' bash -c 'k get rs -o jsonpath="{.items[*].metadata.ownerReferences}"'
check reapply 'created' k apply -f "$WORK/web.yaml"
check reapply-rollout 'successfully rolled out' k rollout status deployment/web --timeout=60s
check adopted '^Deployment' bash -c \
	'k get rs -o jsonpath="{range .items[?(@.spec.replicas==3)]}{.metadata.ownerReferences[0].kind}{\"\n\"}{end}"'

# ---- a worker process dies: NotReady, eviction, pods elsewhere -------------------------------------
TOKEN=$(grep -v '^#' "$DATA/tokens" | head -1 | cut -d, -f1)
mkdir -p "$WORK/join"
"$SIM" --join "https://127.0.0.1:$PORT" --token "$TOKEN" --ca-file "$DATA/pki/ca.crt" \
	--node-name worker-1 --boards host:1 --images "$WORK/images" --pod-port 0 \
	>"$WORK/join.log" 2>&1 &
JOIN_PID=$!
disown "$JOIN_PID" # its SIGKILL below is the test, not news
eventually worker-ready 'worker-1 +Ready' 20 k get nodes --no-headers
k cordon cardputer-1 >/dev/null
k cordon host-1 >/dev/null
check mover-create 'created' k create deployment mover --image=hello.wasm --replicas=2
check mover-rollout 'successfully rolled out' k rollout status deployment/mover --timeout=60s
check mover-on-worker '^worker-1 worker-1 $' bash -c \
	'k get pods -l app=mover -o jsonpath="{range .items[*]}{.spec.nodeName}{\"\n\"}{end}" | tr "\n" " "'
k uncordon cardputer-1 >/dev/null
k uncordon host-1 >/dev/null
kill -9 "$JOIN_PID"
JOIN_PID=
eventually worker-notready 'worker-1 +(NotReady|Unknown)' 40 k get nodes --no-headers
check worker-taint 'node.kubernetes.io/unreachable' k get node worker-1 -o 'jsonpath={.spec.taints[*].key}'
eventually mover-moved '^(cardputer-1|host-1) (cardputer-1|host-1) $' 60 bash -c \
	'k get pods -l app=mover --field-selector=status.phase=Running -o jsonpath="{range .items[*]}{.spec.nodeName}{\"\n\"}{end}" | tr "\n" " "'
check eviction-event 'TaintManagerEviction' k get events --field-selector reason=TaintManagerEviction
check mover-rollout-again 'successfully rolled out' k rollout status deployment/mover --timeout=60s

sim_stop "$SIM_PID"
SIM_PID=
sim_summary ctrl-e2e "$WORK/sim.log"
