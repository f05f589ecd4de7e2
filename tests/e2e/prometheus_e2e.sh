#!/usr/bin/env bash
# End-to-end: Debian's real Prometheus scrapes kube32's /metrics, the API server's (HTTPS,
# bearer token, the cluster's CA) and a node's pod server, and a PromQL query answers.
#
#   prometheus_e2e.sh /path/to/kube32-sim PODS_DIR
#
# Starts kube32-sim with one host board and a pod, then prometheus on a free loopback port with
# a generated configuration and a temporary database; everything is stopped at the end.
# Exit 0: all checks passed; 1: a check failed; 77: prometheus, kubectl, curl or the example
# pod missing (skipped; under CI=true that is a failure).
set -u

SIM=${1:?usage: prometheus_e2e.sh /path/to/kube32-sim PODS_DIR}
PODS=${2:?usage: prometheus_e2e.sh /path/to/kube32-sim PODS_DIR}
. "$(dirname "$0")/sim_lib.sh"
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
PROM=${PROMETHEUS:-/usr/bin/prometheus}

missing() { sim_skip prometheus-e2e "$@"; }
[ -x "$PROM" ] || missing prometheus "install the Debian package prometheus (scripts/deps.sh does)"
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
command -v curl >/dev/null || missing curl "install the Debian package curl"
[ -s "$PODS/hello.wasm" ] || missing hello.wasm "not built in $PODS (clang and lld build apps/examples)"

sim_workdir prometheus "$PODS"
SIM_PIDS="SIM_PID PROM_PID"
SIM_PID=
PROM_PID=
"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards host:1 --pod-port 0 >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" prometheus-e2e
PORT=$(cat "$WORK/port")
k() { "$KUBECTL" "$@"; }
export -f k
export KUBECTL

eventually node-ready 'host-1 +Ready' 20 k get nodes --no-headers
check pod-created '^pod/hello created$' k run hello --image=hello.wasm
eventually pod-running 'hello +1/1 +Running' 30 k get pod hello --no-headers
PODPORT=$(k get node host-1 -o 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}')
sed -n 's/^ *token: //p' "$KUBECONFIG" >"$WORK/token"

# a free loopback port for prometheus (it cannot report one it picked itself)
PROMPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: apiserver
    scheme: https
    authorization: {credentials_file: $WORK/token}
    tls_config: {ca_file: $DATA/pki/ca.crt}
    static_configs: [{targets: ['127.0.0.1:$PORT']}]
  - job_name: nodes
    authorization: {credentials_file: $WORK/token}
    static_configs: [{targets: ['127.0.0.1:$PODPORT']}]
EOF
"$PROM" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PROMPORT" --log.level=warn >"$WORK/prom.log" 2>&1 &
PROM_PID=$!

q() { curl -s --max-time 5 "http://127.0.0.1:$PROMPORT/api/v1/query" --data-urlencode "query=$1"; }
export -f q
export PROMPORT
eventually targets-up '"result":\[\{[^]]*"value":\[[0-9.]+,"2"\]' 30 q 'sum(up)'
eventually query-pod-count '"value":\[[0-9.]+,"1"\]' 20 q 'sum(kube32_node_pods)'
eventually query-pod-running '"pod":"hello".*"value":\[[0-9.]+,"1"\]' 20 q 'kube32_pod_running'
eventually query-apiserver-requests '"result":\[\{' 20 q 'apiserver_request_total{verb="LIST",resource="pods"}'
eventually query-store-revision '"value":\[[0-9.]+,"[1-9][0-9]*"\]' 20 q 'kube32_store_revision'
# the store is persistent here: its WAL fsyncs are counted in etcd's histogram
eventually query-wal-fsyncs '"value":\[[0-9.]+,"[1-9][0-9]*"\]' 20 q 'etcd_disk_wal_fsync_duration_seconds_count'

kill -TERM "$PROM_PID" 2>/dev/null
wait "$PROM_PID" 2>/dev/null
PROM_PID=
sim_stop "$SIM_PID"
SIM_PID=
sim_summary prometheus-e2e "$WORK/sim.log"
