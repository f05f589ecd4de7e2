#!/usr/bin/env bash
# scripts/run.sh BUILD_DIR - what `make run` calls: starts kube32-sim with a demo cluster
# (a devkit board and a cardputer worker) whose image directory holds the example pods,
# applies the example Deployment of the hello pod (apps/examples) and the cardputer's three
# Devices (apps/drivers/devices-cardputer.yaml: their driver pods run on cardputer-1 over
# its simulated I2C devices) once the controllers run, and prints the kubectl line to use. The cluster lives in var/ (kubeconfig:
# var/kubeconfig, boards: var/boards.conf) and keeps its objects across runs; Ctrl-C stops it.
set -euo pipefail
BUILD=${1:-build}
shift || true
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIM="$BUILD/cmd/kube32-sim/kube32-sim"
if [ ! -x "$SIM" ]; then
	echo "run.sh: $SIM not built (run make first)" >&2
	exit 1
fi
VAR="$ROOT/var"
mkdir -p "$VAR/data" "$VAR/images"
# Every board's "SD card": the example pods under their file names.
found=0
for m in "$BUILD"/apps/*/*.wasm; do
	[ -e "$m" ] || continue
	cp -f "$m" "$VAR/images/"
	found=1
done
if [ "$found" = 0 ]; then
	echo "run.sh: no example pods under $BUILD/apps (clang and wasm-ld are needed to build them)" >&2
fi
KC="$VAR/kubeconfig"
# The boards: var/boards.conf (written once; edit it and run again for another cluster)
CONF="$VAR/boards.conf"
if [ ! -s "$CONF" ]; then
	cat >"$CONF" <<'CONF'
# kube32-sim's boards for `make run` (one group a line: PROFILE [count=N] [name=NAME];
# profiles devkit, cardputer, host; host-pool=BYTES, host-stack=BYTES). See
# docs/controllers.md. The first board's pod server is on port 7000, the next on 7001, ...
devkit
cardputer
CONF
fi
"$SIM" --data-dir "$VAR/data" --images "$VAR/images" --kubeconfig "$KC" \
	--config "$CONF" --pod-port 7000 "$@" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null' INT TERM
# wait for the kubeconfig and the nodes
for _ in $(seq 1 100); do
	[ -s "$KC" ] && break
	kill -0 $PID 2>/dev/null || { wait $PID; exit 1; }
	sleep 0.1
done
if command -v kubectl >/dev/null 2>&1 && [ -s "$KC" ]; then
	for _ in $(seq 1 50); do
		KUBECONFIG="$KC" kubectl get nodes >/dev/null 2>&1 && break
		sleep 0.1
	done
	KUBECONFIG="$KC" kubectl apply -f "$ROOT/apps/examples/hello-deployment.yaml" >/dev/null 2>&1 &&
		echo "run.sh: applied apps/examples/hello-deployment.yaml (2 hello pods)" >&2 || true
	KUBECONFIG="$KC" kubectl apply -f "$ROOT/apps/drivers/devices-cardputer.yaml" >/dev/null 2>&1 &&
		echo "run.sh: applied apps/drivers/devices-cardputer.yaml (Devices envpro, scale, tag on cardputer-1)" >&2 || true
fi
cat >&2 <<MSG

kube32 is running. In another terminal:

  KUBECONFIG=$KC kubectl get nodes,pods -o wide
  KUBECONFIG=$KC kubectl logs deploy/hello
  curl -H 'X-Kube32-Pod: default/<hello pod name>' http://127.0.0.1:7000/   (7001: the cardputer)
  KUBECONFIG=$KC kubectl get devices -w

Change the cardputer's simulated sensors while it runs (here on stdin, or over HTTP with
the cluster's admin token: a board's /console, /stats and /containerLogs answer 401 without):

  cardputer-1 K32_CMD:hw set envpro temperature_c 30.5
  TOKEN=\$(sed -n 's/^ *token: //p' $KC)
  curl -H "Authorization: Bearer \$TOKEN" --data 'K32_CMD:rfid place tag 5A3C910E' http://127.0.0.1:7001/console
  curl -H "Authorization: Bearer \$TOKEN" --data 'K32_CMD:hw set scale weight_g 250' http://127.0.0.1:7001/console
  curl -H "Authorization: Bearer \$TOKEN" --data 'K32_CMD:hw list' http://127.0.0.1:7001/console

Ctrl-C stops the cluster (its objects stay in var/data).
MSG
wait $PID
