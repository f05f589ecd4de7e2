#!/usr/bin/env bash
# End-to-end of Services (issue 16, items 3 and 6) with the real kubectl and curl: kube32-sim
# with two host boards; a Deployment (3 hello pods) + Service manifest applies whole; the
# endpoints controller's Endpoints and EndpointSlices list every pod at its node's pod
# server; curl through one node's pod server (X-Kube32-Service) is balanced round-robin over
# the three pods (each answers exactly 3 of 9), and through the other node's too (a pod on
# another board is reached by forwarding); a loop is refused; services/proxy (NAME and
# NAME:PORT) and pods/proxy answer; a hostile path reaches the pod encoded; kubectl
# cluster-info and describe svc work; kubectl port-forward pod/NAME and svc/NAME then curl
# through it (GET and POST): the newest kubectl over WebSocket (SPDY/3.1+portforward.k8s.io,
# no fallback: the API server's kube32_apiserver_portforward_tunnels_total{protocol} counts
# a WebSocket tunnel and no SPDY one) and kubectl 1.27 over plain SPDY (counted as such);
# the refusal of a WebSocket upgrade without that subprotocol names the node's real pod
# server (not 7000); scaling down and deleting the Service update and remove the endpoints.
#
#   services_e2e.sh /path/to/kube32-sim /path/to/dir/with/example/pods
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl, curl or hello.wasm missing
# (skipped; under CI=true that is a failure).
set -u

SIM=${1:?usage: services_e2e.sh /path/to/kube32-sim PODS_DIR}
. "$(dirname "$0")/sim_lib.sh"
PODS=${2:?usage: services_e2e.sh /path/to/kube32-sim PODS_DIR}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}

missing() { sim_skip services-e2e "$@"; }
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
command -v curl >/dev/null || missing curl "install the Debian package curl"
[ -s "$PODS/hello.wasm" ] || missing hello.wasm "not built in $PODS (clang and lld build apps/examples)"

sim_workdir services "$PODS"
SIM_PIDS="SIM_PID"
SIM_PID=
"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards host:2 --pod-port 0 >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" services-e2e
PORT=$(cat "$WORK/port")
grep -q "scheduler and controllers running" "$WORK/sim.log" ||
	missing controllers "kube32-sim was built without src/ctrl"

k() { "$KUBECTL" "$@"; }
export -f k
export KUBECTL
podport() { k get node "$1" -o 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'; }
export -f podport
eventually nodes-ready 'host-2 +Ready' 20 k get nodes --no-headers
P1=$(podport host-1)
P2=$(podport host-2)

cat >"$WORK/app.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: hello.wasm
        resources:
          limits: {memory: 24Ki}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - name: http
    port: 80
    targetPort: 8080
EOF

# ---- the manifest applies whole --------------------------------------------------------------
check apply-whole 'deployment.apps/web created service/web created rc=0' \
	bash -c '(k apply -f "$0" 2>&1; echo rc=$?) | tr "\n" " "' "$WORK/app.yaml"
eventually pods-running '^3$' 30 bash -c \
	'k get pods -l app=web --no-headers | grep -c " Running "'
check svc-table 'web +ClusterIP +<none> +<none> +80/TCP .*app=web' k get svc web -o wide
check svc-kubernetes "kubernetes +ClusterIP .*443/TCP" k get svc kubernetes
check ep-kubernetes "kubernetes +127\.0\.0\.1:$PORT" k get endpoints kubernetes
check get-all-svc 'service/web' k get all
eventually endpoints-3 '^3$' 20 bash -c \
	'k get endpoints web -o jsonpath="{range .subsets[*].addresses[*]}{.targetRef.name} {end}" | wc -w'
check endpoints-node "host-[12]" k get endpoints web -o 'jsonpath={.subsets[*].addresses[*].nodeName}'
check endpoints-ports "($P1|$P2)" k get endpoints web -o 'jsonpath={.subsets[*].ports[*].port}'
check slices-two '^2$' bash -c \
	'k get endpointslices -l kubernetes.io/service-name=web --no-headers | wc -l'
check slice-table "web-[0-9a-f]{8} +IPv4 +($P1|$P2) +127\.0\.0\.1" k get endpointslices
check describe-svc "Endpoints: +127\.0\.0\.1:($P1|$P2)" k describe svc web

# ---- round-robin through a node's pod server -------------------------------------------------
count_answers() { # count_answers PORT N: "<count> <ns/pod@node>" lines
	for _ in $(seq "$2"); do
		curl -s -D - -o /dev/null --max-time 10 -H 'X-Kube32-Service: default/web' \
			"http://127.0.0.1:$1/x" | tr -d '\r' | sed -n 's/^X-Kube32-Endpoint: //p'
	done | sort | uniq -c
}
export -f count_answers
OUT1=$(count_answers "$P1" 9)
echo "$OUT1" | sed 's/^/     /'
if [ "$(echo "$OUT1" | awk '$1 == 3' | wc -l)" = 3 ]; then sim_pass balanced-3x3; else
	sim_fail balanced-3x3 "expected each of 3 pods 3 times: $OUT1"; fi
OUT2=$(count_answers "$P2" 6)
if [ "$(echo "$OUT2" | grep -c '@host-1')" -ge 1 ] && [ "$(echo "$OUT2" | grep -c '@host-2')" -ge 1 ]; then
	sim_pass forwarded-across-boards
else
	sim_fail forwarded-across-boards "host-2's pod server reached: $OUT2"
fi
check svc-body 'hello from kube32: .*path=/abc' \
	curl -s -H 'X-Kube32-Service: default/web' "http://127.0.0.1:$P2/abc"
check svc-loop-508 'HTTP 508' curl -s -w ' HTTP %{http_code}' -H 'X-Kube32-Service: default/web' \
	-H 'X-Kube32-Forwarded-By: host-1' "http://127.0.0.1:$P1/"
check svc-none-503 'Service default/none has no ready endpoints.*HTTP 503' bash -c \
	'curl -s -w " HTTP %{http_code}" -H "X-Kube32-Service: default/none" "http://127.0.0.1:$0/" | tr "\n" " "' "$P1"
check svc-bad-header-404 'must be <namespace>/<name>.*HTTP 404' bash -c \
	'curl -s -w " HTTP %{http_code}" -H "X-Kube32-Service: web" "http://127.0.0.1:$0/" | tr "\n" " "' "$P1"

# ---- services/proxy and pods/proxy through the API server -------------------------------------
POD=$(k get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
check pods-proxy 'hello from kube32: .*path=/some/path\?x=1' \
	k get --raw "/api/v1/namespaces/default/pods/$POD/proxy/some/path?x=1"
check services-proxy 'hello from kube32: .*path=/p' \
	k get --raw /api/v1/namespaces/default/services/web/proxy/p
check services-proxy-port 'hello from kube32: .*path=/q' \
	k get --raw /api/v1/namespaces/default/services/web:http/proxy/q
check services-proxy-port-num 'hello from kube32: .*path=/q' \
	k get --raw /api/v1/namespaces/default/services/http:web:80/proxy/q
check services-proxy-bad-port 'no port "nope"' \
	k get --raw /api/v1/namespaces/default/services/web:nope/proxy/
check services-proxy-missing 'services "gone" not found' \
	k get --raw /api/v1/namespaces/default/services/gone/proxy/
# a CR LF in the decoded path reaches the pod encoded: no header is injected
check proxy-crlf-encoded 'path=/a%0D%0AX-Evil:%201' \
	k get --raw "/api/v1/namespaces/default/services/web/proxy/a%0d%0aX-Evil:%201"
check proxy-https-refused 'scheme "https" is not supported' \
	k get --raw /api/v1/namespaces/default/services/https:web:80/proxy/

# ---- cluster-info, port-forward ------------------------------------------------------------
check cluster-info "Kubernetes control plane.* is running at .*https://127\.0\.0\.1:$PORT" k cluster-info
# kubectl port-forward: the newest kubectl tunnels SPDY in WebSocket, kubectl 1.27 plain SPDY
KDIR=$(dirname "$(readlink -f "$KUBECTL")")
NEWEST=$(ls "$KDIR"/kubectl.1.* 2>/dev/null | sort -t. -k3 -n | tail -1)
NEWEST=${NEWEST:-$KUBECTL}
K27=$KDIR/kubectl.1.27
[ -x "$K27" ] || missing kubectl.1.27 "expected beside kubectl in $KDIR (gcloud SDK)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port_forward_curl() { # port_forward_curl KUBECTL NAME TARGET: curl through kubectl port-forward
	local lp pid out
	lp=$(free_port)
	"$1" port-forward "$3" "$lp:80" >"$WORK/pf-$2.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do grep -q "Forwarding from" "$WORK/pf-$2.log" && break; sleep 0.1; done
	out=$(curl -s --max-time 10 "http://127.0.0.1:$lp/pf/$2" 2>&1; echo " |";
		curl -s --max-time 10 -X POST -d 'x=1' "http://127.0.0.1:$lp/post/$2" 2>&1)
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "$out" | tr '\n' ' '
}
pf_count() { # pf_count spdy|websocket: tunnels the API server served over that protocol
	k get --raw /metrics | sed -n "s/^kube32_apiserver_portforward_tunnels_total{protocol=\"$1\"} //p"
}
export -f port_forward_curl free_port pf_count
export WORK
WS0=$(pf_count websocket)
SPDY0=$(pf_count spdy)
check port-forward-pod-websocket "path=/pf/pod .*path=/post/pod" port_forward_curl "$NEWEST" pod "pod/$POD"
check port-forward-svc-websocket "path=/pf/svc .*path=/post/svc" port_forward_curl "$NEWEST" svc svc/web
# served over WebSocket, twice, and never by the SPDY fallback
check port-forward-newest-used-websocket "^$((WS0 + 2)) $SPDY0\$" bash -c 'echo $(pf_count websocket) $(pf_count spdy)'
check port-forward-websocket-logged "port-forward to pod default/$POD .* over WebSocket \(SPDY/3\.1\+portforward\.k8s\.io\)" \
	grep -E "port-forward to pod default/$POD" "$WORK/sim.log"
check port-forward-pod-spdy-1.27 "path=/pf/pod27 .*path=/post/pod27" port_forward_curl "$K27" pod27 "pod/$POD"
check port-forward-1.27-used-spdy "^$((WS0 + 2)) $((SPDY0 + 1))\$" bash -c 'echo $(pf_count websocket) $(pf_count spdy)'
# a pod that is gone: kubectl's own check refuses before any tunnel
check port-forward-missing 'pods "gone" not found' bash -c 'timeout 20 "$KUBECTL" port-forward pod/gone 0:80 2>&1'
# the refusal of another upgrade (what kubectl 1.31+ asks for first) names the real pod server
NODE=$(k get pod "$POD" -o jsonpath='{.spec.nodeName}')
NPORT=$(podport "$NODE")
ADMIN_TOKEN=$(sed -n 's/^ *token: //p' "$KUBECONFIG")
check port-forward-refusal-names-endpoint "pod server http://127\.0\.0\.1:$NPORT with header X-Kube32-Pod: default/$POD" \
	curl -sk -X POST -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Upgrade: websocket' -H 'Connection: Upgrade' \
	"https://127.0.0.1:$PORT/api/v1/namespaces/default/pods/$POD/portforward"

# ---- scale and delete ------------------------------------------------------------------------
k scale deployment web --replicas=1 >/dev/null
eventually endpoints-scaled '^1$' 30 bash -c \
	'k get endpoints web -o jsonpath="{range .subsets[*].addresses[*]}{.targetRef.name} {end}" | wc -w'
k delete service web >/dev/null
eventually endpoints-gone 'NotFound' 20 bash -c 'k get endpoints web 2>&1'
eventually slices-gone '^0$' 20 bash -c \
	'k get endpointslices -l kubernetes.io/service-name=web --no-headers 2>/dev/null | wc -l'
check create-service 'service/made created' k create service clusterip made --tcp=80:8080
check create-service-table 'made +ClusterIP +<none> +<none> +80/TCP' k get svc made
check svc-type-refused 'spec.type: Unsupported value: "NodePort"' bash -c \
	'k create service nodeport np --tcp=80:8080 2>&1'

sim_stop "$SIM_PID"
SIM_PID=
sim_summary services-e2e "$WORK/sim.log"
