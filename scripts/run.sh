#!/usr/bin/env bash
# scripts/run.sh BUILD_DIR - what `make run` calls: starts kube32-sim with a demo cluster
# (a devkit board and a cardputer worker) whose image directory holds the example pods,
# applies the example Deployment of the hello pod (apps/examples) and the cardputer's three
# Devices (apps/drivers/devices-cardputer.yaml: their driver pods run on cardputer-1 over
# its simulated I2C devices) once the controllers run, and prints the kubectl line to use. The cluster lives in var/ (kubeconfig:
# var/kubeconfig, boards: var/boards.conf) and keeps its objects across runs; Ctrl-C stops it.
#
# Extra arguments go to kube32-sim (`make run ARGS="--port 6444 --pod-port 7100"`); the
# banner prints the ports the simulator really serves on (from its log, var/sim.log). This
# terminal's stdin is the boards' console ("cardputer-1 K32_CMD:hw list"). If the simulator
# fails to start, the script prints its message and exits non-zero.
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
# A kubeconfig from an earlier run must not pass for a running cluster: the simulator
# writes a fresh one once its API server listens.
rm -f "$KC"
LOG="$VAR/sim.log"
: >"$LOG"
# stdin: a background command's stdin is /dev/null unless redirected, so hand it this
# script's stdin (fd 3) explicitly: the console then reads what the user types here.
exec 3<&0
"$SIM" --data-dir "$VAR/data" --images "$VAR/images" --kubeconfig "$KC" \
	--config "$CONF" --pod-port 7000 "$@" <&3 2> >(tee -a "$LOG" >&2) &
PID=$!
exec 3<&-
echo "$PID" >"$VAR/sim.pid"
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null' INT TERM
# wait for "kube32-sim: ready" (the API server and every board serve) or for its death
ready=0
for _ in $(seq 1 300); do
	if grep -q "^kube32-sim: ready" "$LOG" 2>/dev/null; then
		ready=1
		break
	fi
	kill -0 $PID 2>/dev/null || break
	sleep 0.1
done
if [ "$ready" = 0 ]; then
	if kill -0 $PID 2>/dev/null; then
		echo "run.sh: FAILED: kube32-sim is not ready after 30 s (its log: $LOG); stopping it" >&2
		kill -TERM $PID 2>/dev/null
		wait $PID 2>/dev/null
		exit 1
	fi
	rc=0
	wait $PID || rc=$?
	echo "run.sh: FAILED: kube32-sim exited (status $rc) before it was ready; its messages are above (and in $LOG)" >&2
	exit 1
fi
# The real endpoints, from the simulator's own lines
API=$(sed -n 's/^kube32-sim: control plane on \([a-z]*:\/\/[^ ]*\).*/\1/p' "$LOG" | head -1)
BOARDS=$(sed -n 's/^kube32-sim: board \([^ ]*\) (\([a-z]*\)):.* pod server \([0-9.]*:[0-9]*\),.*/\1 \2 \3/p' "$LOG")
FIRST_POD=$(awk 'NR==1{print $3}' <<<"$BOARDS")
HW_BOARD=$(awk '$2=="cardputer"{print $1" "$3; exit}' <<<"$BOARDS")
HW_NAME=${HW_BOARD%% *}
HW_ADDR=${HW_BOARD#* }
if command -v kubectl >/dev/null 2>&1; then
	for _ in $(seq 1 50); do
		KUBECONFIG="$KC" kubectl get nodes >/dev/null 2>&1 && break
		sleep 0.1
	done
	KUBECONFIG="$KC" kubectl apply -f "$ROOT/apps/examples/hello-deployment.yaml" >/dev/null 2>&1 &&
		echo "run.sh: applied apps/examples/hello-deployment.yaml (2 hello pods)" >&2 || true
	if [ -n "$HW_NAME" ]; then
		KUBECONFIG="$KC" kubectl apply -f "$ROOT/apps/drivers/devices-cardputer.yaml" >/dev/null 2>&1 &&
			echo "run.sh: applied apps/drivers/devices-cardputer.yaml (Devices envpro, scale, tag on cardputer-1)" >&2 || true
	fi
else
	echo "run.sh: kubectl is not on PATH: the example Deployment and Devices were not applied" >&2
fi
{
	echo
	echo "kube32 is running: API server $API (kubeconfig $KC)"
	while read -r name profile addr; do
		[ -n "$name" ] && echo "  board $name ($profile): pod server http://$addr"
	done <<<"$BOARDS"
	echo
	echo "In another terminal:"
	echo
	echo "  export KUBECONFIG=$KC"
	echo "  kubectl get nodes,pods -o wide"
	echo "  kubectl logs deploy/hello"
	[ -n "$FIRST_POD" ] &&
		echo "  curl -H 'X-Kube32-Pod: default/<hello pod name>' http://$FIRST_POD/"
	echo "  $BUILD/cmd/kube32-cli/kube32-cli status"
	if [ -n "$HW_NAME" ]; then
		echo "  kubectl get devices -w"
		echo
		echo "Change $HW_NAME's simulated sensors: type here (this terminal is the boards' console)"
		echo
		echo "  $HW_NAME K32_CMD:hw set envpro temperature_c 30.5"
		echo "  $HW_NAME K32_CMD:hw list"
		echo
		echo "or over HTTP with the cluster's admin token (a board's /console, /stats and"
		echo "/containerLogs answer 401 without it), or with kube32-cli console:"
		echo
		echo "  TOKEN=\$(sed -n 's/^ *token: //p' $KC)"
		echo "  curl -H \"Authorization: Bearer \$TOKEN\" --data 'K32_CMD:rfid place tag 5A3C910E' http://$HW_ADDR/console"
		echo "  curl -H \"Authorization: Bearer \$TOKEN\" --data 'K32_CMD:hw set scale weight_g 250' http://$HW_ADDR/console"
		echo "  $BUILD/cmd/kube32-cli/kube32-cli console $HW_NAME 'hw list'"
	fi
	echo
	echo "Other ports or boards: make run ARGS=\"--port 6444 --pod-port 7100\" (or edit $CONF)."
	echo "Ctrl-C stops the cluster (its objects stay in var/data)."
} >&2
rc=0
wait $PID || rc=$?
# after Ctrl-C the trap has stopped it; else it died on its own: say so
if [ "$rc" != 0 ] && [ "$rc" != 143 ] && [ "$rc" != 130 ]; then
	echo "run.sh: kube32-sim exited with status $rc (its log: $LOG)" >&2
	exit "$rc"
fi
