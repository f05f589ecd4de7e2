#!/usr/bin/env bash
# versions_e2e.sh - module versions with the real kubectl (issue 17): kube32-sim with one
# host board and an empty image directory; ConfigMap ticker.wasm holds two versions under
# keys v1 (hello.wasm) and v2 (events.wasm), made with `kubectl create configmap
# --from-file=KEY=FILE`. A Deployment of ticker.wasm:v1 runs hello; `kubectl set image` to
# :v2 rolls it to events (rollout status completes, the new pod's log is events'); to :v9 (a
# tag that does not exist) the new pod waits in ErrImagePull whose message names the keys
# there are, while the v2 pod keeps running; `kubectl rollout undo` goes back to v2 and
# `rollout undo --to-revision=1` to v1 (hello's log again). An image by digest
# (@sha256 of events.wasm) runs, a wrong digest is ErrImagePull.
#
#   versions_e2e.sh /path/to/kube32-sim /path/to/apps/examples (build dir with the .wasm)
#
# Exit 0 passed, 1 failed, 77 skipped (kubectl or the example pods missing; under CI=true a
# failure).
set -u
SIM=${1:?usage: versions_e2e.sh KUBE32_SIM EXAMPLES_DIR}
EX=${2:?usage: versions_e2e.sh KUBE32_SIM EXAMPLES_DIR}
WHO=versions-e2e
. "$(dirname "$0")/sim_lib.sh"
command -v kubectl >/dev/null || sim_skip $WHO kubectl "put the real kubectl on PATH"
for m in hello events; do
	[ -s "$EX/$m.wasm" ] || sim_skip $WHO "$m.wasm" "not built in $EX (clang and lld)"
done

WORK=$(mktemp -d /tmp/kube32-versions.XXXXXX)
DATA=$WORK/data
export HOME=$WORK/home
export KUBECONFIG=$DATA/admin.kubeconfig
mkdir -p "$HOME" "$DATA" "$WORK/images"
SIM_PID=
trap 'kill -9 $SIM_PID 2>/dev/null; [ "${KEEP:-}" = 1 ] || rm -rf "$WORK"' EXIT
# the image directory is empty: every version comes from the module store
"$SIM" --data-dir "$DATA" --port 0 --images "$WORK/images" --boards host:1 --pod-port 0 \
	</dev/null >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" $WHO

check "configmap with two versions" "configmap/ticker.wasm created" \
	kubectl create configmap ticker.wasm --from-file=v1="$EX/hello.wasm" \
	--from-file=v2="$EX/events.wasm"
cat >"$WORK/ticker.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ticker
spec:
  replicas: 1
  selector:
    matchLabels:
      app: ticker
  template:
    metadata:
      labels:
        app: ticker
    spec:
      containers:
      - name: ticker
        image: ticker.wasm:v1
        resources:
          limits:
            memory: 64Ki
YAML
check "deployment ticker.wasm:v1" "deployment.apps/ticker created" \
	kubectl apply -f "$WORK/ticker.yaml"
eventually "rollout v1 completes" "successfully rolled out" 60 \
	kubectl rollout status deploy/ticker --timeout=5s
pod_log() {
	local p
	p=$(kubectl get pods -l app=ticker --field-selector=status.phase=Running \
		-o jsonpath='{range .items[*]}{.metadata.name} {.spec.containers[0].image}{"\n"}{end}' |
		awk -v img="$1" '$2 == img {print $1; exit}')
	[ -n "$p" ] && kubectl logs "$p"
}
export -f pod_log # eventually runs its command in a new bash
eventually "v1 runs hello" "hello from kube32" 30 pod_log ticker.wasm:v1

check "set image :v2" "image updated" kubectl set image deploy/ticker 'ticker=ticker.wasm:v2'
eventually "rollout v2 completes" "successfully rolled out" 60 \
	kubectl rollout status deploy/ticker --timeout=5s
eventually "v2 runs events" "events: timer and channel armed" 30 pod_log ticker.wasm:v2
eventually "only v2 pods left" "^ticker.wasm:v2$" 30 \
	kubectl get pods -l app=ticker -o 'jsonpath={range .items[*]}{.spec.containers[0].image}{"\n"}{end}'

check "set image :v9 (no such tag)" "image updated" kubectl set image deploy/ticker 'ticker=ticker.wasm:v9'
eventually "v9 pod waits in ErrImagePull naming the keys" \
	"ErrImagePull|ImagePullBackOff.*ConfigMap default/ticker.wasm has no key v9 \(the tag\); its keys: v1, v2" 60 \
	kubectl get pods -l app=ticker -o 'jsonpath={range .items[*]}{.status.containerStatuses[0].state.waiting.reason} {.status.containerStatuses[0].state.waiting.message}{"\n"}{end}'
eventually "the v2 pod keeps running meanwhile" "ticker.wasm:v2 Running" 10 \
	kubectl get pods -l app=ticker -o 'jsonpath={range .items[*]}{.spec.containers[0].image} {.status.phase}{"\n"}{end}'

check "rollout undo" "rolled back" kubectl rollout undo deploy/ticker
eventually "undo: back to v2, rollout completes" "successfully rolled out" 60 \
	kubectl rollout status deploy/ticker --timeout=5s
check "undo: the template is v2" "^ticker.wasm:v2$" \
	kubectl get deploy/ticker -o 'jsonpath={.spec.template.spec.containers[0].image}'
check "rollout undo --to-revision=1" "rolled back" kubectl rollout undo deploy/ticker --to-revision=1
eventually "undo to 1: rollout completes" "successfully rolled out" 60 \
	kubectl rollout status deploy/ticker --timeout=5s
eventually "v1 again runs hello" "hello from kube32" 30 pod_log ticker.wasm:v1

# by digest
SHA=$(sha256sum "$EX/events.wasm" | cut -d' ' -f1)
check "pod by digest" "pod/bydigest created" kubectl run bydigest --image="ticker.wasm@sha256:$SHA"
eventually "the digest's module runs" "events: timer and channel armed" 30 kubectl logs bydigest
check "pod by a wrong digest" "pod/baddigest created" \
	kubectl run baddigest --image="ticker.wasm:v1@sha256:$SHA"
eventually "a wrong digest is ErrImagePull" "ErrImagePull|ImagePullBackOff" 30 \
	kubectl get pod baddigest -o 'jsonpath={.status.containerStatuses[0].state.waiting.reason}'
check "its message says which digest the key has" "key v1 is sha256:[0-9a-f]{12}\.\.\., not the image's sha256:${SHA:0:12}" \
	kubectl get pod baddigest -o 'jsonpath={.status.containerStatuses[0].state.waiting.message}'

sim_stop "$SIM_PID"
SIM_PID=
sim_summary $WHO "$WORK/sim.log"
