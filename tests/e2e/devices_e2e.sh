#!/usr/bin/env bash
# End-to-end of the Device path (issue 7) in the simulator: kube32-sim with a cardputer
# board (its simulated BME688 "envpro", Mini Scales "scale" and RFID 2 "tag" behind a
# PCA9548A), the three Devices applied with the real kubectl, their driver pods Running on
# the cardputer within its 80 KiB pod pool, `kubectl get devices` with the simulated
# readings, values changed through the board console (stdin and POST /console on the pod
# server) showing up in the readings, a card placed and removed, a device unplugged
# (Ready=False NotFound and a Warning Event), bus errors (BusError), hardware.md's worked
# BME688 example A from raw ADC words, the status fields (driverPod, lastReadTime, the Ready
# condition's time and message), a trapping driver (DriverCrash and its Event, the others
# keep reading), a second driver pod for a driven Device refused, and a deleted Device taking
# its driver pod.
# Prints each driver's pool bytes and the pool left free (from the kubelet's /stats).
#
#   devices_e2e.sh /path/to/kube32-sim /path/to/apps/drivers (build dir with the .wasm)
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl, curl, python3 or the driver
# pods missing (skipped; under CI=true that is a failure).
set -u

SIM=${1:?usage: devices_e2e.sh /path/to/kube32-sim DRIVERS_DIR}
. "$(dirname "$0")/sim_lib.sh"
PODS=${2:?usage: devices_e2e.sh /path/to/kube32-sim DRIVERS_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KUBECTL=${KUBECTL:-/usr/bin/kubectl}

missing() { sim_skip devices-e2e "$@"; }
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
command -v curl >/dev/null || missing curl "install the Debian package curl"
command -v python3 >/dev/null || missing python3 "install the Debian package python3"
for m in bme688 miniscale rfid; do
	[ -s "$PODS/$m.wasm" ] || missing "$m.wasm" "not built in $PODS (clang and lld build apps/drivers)"
done
CRASHY=$PODS/../examples/crashy.wasm
[ -s "$CRASHY" ] || missing crashy.wasm "not built in $PODS/../examples (the trapping driver)"

WORK=$(mktemp -d /tmp/kube32-devices.XXXXXX)
DATA=$WORK/data
export HOME=$WORK/home
export KUBECONFIG=$DATA/admin.kubeconfig
mkdir -p "$HOME" "$DATA" "$WORK/images"
cp "$PODS"/*.wasm "$CRASHY" "$WORK/images/"
SIM_PID=
HOLD_PID=
cleanup() {
	for p in $SIM_PID $HOLD_PID; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ "${KEEP:-}" != "1" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# the board console on stdin: a fifo kept open by a sleeper
mkfifo "$WORK/console"
sleep 100000 >"$WORK/console" &
HOLD_PID=$!
"$SIM" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --images "$WORK/images" \
	--boards cardputer:1 --pod-port 0 <"$WORK/console" >"$WORK/console.out" 2>"$WORK/sim.log" &
SIM_PID=$!
exec 3>"$WORK/console"
sim_wait_ready "$WORK/sim.log" "$SIM_PID" devices-e2e
if ! grep -q "scheduler and controllers running" "$WORK/sim.log"; then
	echo "devices-e2e: kube32-sim runs no controllers (src/ctrl not built): the Device controller is needed" >&2
	[ "${CI:-}" = "true" ] && exit 1
	exit 77
fi
POD_PORT=$(grep -o "board cardputer-1 (cardputer): .*pod server 127.0.0.1:[0-9]*" "$WORK/sim.log" |
	grep -o "[0-9]*$")
echo "devices-e2e: kube32-sim pid $SIM_PID, cardputer-1 pod server :$POD_PORT"

PASS=0
FAIL=0
FAILED=()
ok() {
	PASS=$((PASS + 1))
	echo "devices-e2e: ok   $1"
}
bad() {
	FAIL=$((FAIL + 1))
	FAILED+=("$1")
	echo "devices-e2e: FAIL $1${2:+: $2}" >&2
}
# until SECONDS CMD...: retries CMD every 0.2 s
until_ok() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	"$@"
}
reading() { # reading DEVICE KEY
	"$KUBECTL" get device "$1" -o jsonpath="{.status.readings.$2}"
}
near() { # near DEVICE KEY VALUE TOLERANCE
	local v
	v=$(reading "$1" "$2") || return 1
	python3 -c "import sys; sys.exit(0 if abs(float('$v') - $3) <= $4 else 1)" 2>/dev/null
}
is() { # is DEVICE KEY VALUE
	[ "$(reading "$1" "$2")" = "$3" ]
}
ready() { # ready DEVICE STATUS [REASON]
	local c
	c=$("$KUBECTL" get device "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}')
	[ "${c%%/*}" = "$2" ] && { [ -z "${3:-}" ] || [ "${c#*/}" = "$3" ]; }
}
running() {
	[ "$("$KUBECTL" get pod "$1" -o jsonpath='{.status.phase}/{.spec.nodeName}')" = "Running/cardputer-1" ]
}
# the node endpoints take the cluster's credentials: the kubeconfig's admin token
ADMIN_TOKEN=$(sed -n 's/^ *token: //p' "$KUBECONFIG")
http_cmd() {
	curl -sf -H "Authorization: Bearer $ADMIN_TOKEN" --data "K32_CMD:$1" \
		"http://127.0.0.1:$POD_PORT/console"
}

until_ok 20 "$KUBECTL" get nodes cardputer-1 >/dev/null
if "$KUBECTL" apply -f "$ROOT/apps/drivers/devices-cardputer.yaml" >/dev/null; then
	ok "kubectl apply of the three Devices"
else
	bad "kubectl apply of the three Devices"
fi

for p in bme688-envpro miniscale-scale rfid-tag; do
	if until_ok 60 running "$p"; then ok "driver pod $p Running on cardputer-1"; else
		bad "driver pod $p Running on cardputer-1" "$("$KUBECTL" get pod "$p" -o wide 2>&1 | tail -1)"
	fi
done

until_ok 20 is tag present false
OUT=$("$KUBECTL" get devices 2>&1)
echo "$OUT"
if echo "$OUT" | head -1 | grep -q "NAME *NODE *MODEL *READING *AGE"; then
	ok "kubectl get devices prints NAME NODE MODEL READING AGE"
else
	bad "kubectl get devices columns" "$OUT"
fi
if until_ok 20 near envpro temperature_c 25 0.05 && until_ok 5 near envpro humidity_pct 40 0.5 &&
	until_ok 5 near envpro pressure_pa 101325 20; then
	ok "envpro reads the simulated 25 C, 40 %RH, 101325 Pa"
else
	bad "envpro's simulated readings" "$(reading envpro temperature_c)"
fi
if until_ok 10 near scale weight_g 0 0.5 && until_ok 10 is tag present false; then
	ok "scale reads 0 g, tag has no card"
else
	bad "scale and tag initial readings"
fi

# a value changed through the pod server's console (HTTP) and one on stdin
http_cmd "hw set envpro temperature_c 30.5" | grep -q "^ok" || bad "POST /console hw set"
if until_ok 10 near envpro temperature_c 30.5 0.05; then
	ok "hw set envpro temperature_c 30.5 (POST /console) shows in the reading"
else
	bad "temperature change" "$(reading envpro temperature_c)"
fi
echo "cardputer-1 K32_CMD:hw set scale weight_g 250" >&3
if until_ok 10 near scale weight_g 250 1 && until_ok 5 is scale raw_adc 8500000; then
	ok "hw set scale weight_g 250 (stdin console): 250 g, raw ADC 8500000 (hardware.md's example)"
else
	bad "weight change" "$(reading scale weight_g) $(reading scale raw_adc) $(cat "$WORK/console.out")"
fi

# hardware.md's worked BME688 example (case A) through the driver pod: raw ADC words in
http_cmd "hw raw envpro 493000 355000 20500 600 9" | grep -q "^ok" || bad "hw raw"
if until_ok 10 is envpro temperature_c 23.64 && until_ok 5 is envpro pressure_pa 99987 &&
	until_ok 5 near envpro humidity_pct 41.955 0.001 && until_ok 5 near envpro gas_ohm 117400 1; then
	ok "worked example A: 23.64 C, 99987 Pa, 41.955 %RH, 117400 Ohm in the Device status"
else
	bad "worked example A" "$("$KUBECTL" get device envpro -o jsonpath='{.status.readings}')"
fi
http_cmd "hw raw envpro 455000 372000 26000 300 4" | grep -q "^ok" || bad "hw raw B"
if until_ok 10 is envpro temperature_c 11.67 && until_ok 5 is envpro pressure_pa 95121 &&
	until_ok 5 near envpro humidity_pct 75.76 0.001 && until_ok 5 near envpro gas_ohm 4735200 1; then
	ok "worked example B: 11.67 C, 95121 Pa, 75.76 %RH, 4735200 Ohm in the Device status"
else
	bad "worked example B" "$("$KUBECTL" get device envpro -o jsonpath='{.status.readings}')"
fi

# within_1s KEY VALUE CMD: sends CMD to the console, then polls the tag's KEY; passes when it
# reads VALUE within 1 s of the command, counting the last kubectl call's own time as slack
# (the reading may have been there when that call started)
within_1s() {
	local t0 ta tb
	t0=$(date +%s%3N)
	http_cmd "$3" >/dev/null
	while :; do
		ta=$(date +%s%3N)
		if is tag "$1" "$2"; then
			tb=$(date +%s%3N)
			echo "devices-e2e: tag $1=$2 seen $((tb - t0)) ms after '$3' (last query $((tb - ta)) ms)"
			[ $((ta - t0)) -le 1000 ]
			return
		fi
		[ $((ta - t0)) -gt 5000 ] && return 1
		sleep 0.05
	done
}
if within_1s uid 5A3C910E "rfid place tag 5A3C910E" && is tag present true; then
	ok "rfid place tag 5A3C910E: the tag's uid within a second"
else
	bad "card placed" "$(reading tag uid)"
fi
if within_1s present false "rfid remove tag"; then ok "rfid remove tag: present=false within a second"; else
	bad "card removed" "$(reading tag present)"
fi
if within_1s uid 045B2C7A913E80 "rfid place tag 045B2C7A913E80" && is tag atqa 0044; then
	ok "a 7-byte UID card (cascade level 2): uid 045B2C7A913E80 within a second"
else
	bad "7-byte card" "$("$KUBECTL" get device tag -o jsonpath='{.status.readings}')"
fi
http_cmd "rfid remove tag" >/dev/null

# the status fields of hardware.md section 7
STATUS=$("$KUBECTL" get device envpro -o jsonpath='{.status.driverPod}|{.status.lastReadTime}|{.status.conditions[?(@.type=="Ready")].lastTransitionTime}|{.status.conditions[?(@.type=="Ready")].message}')
IFS='|' read -r DPOD LRT LTT MSG <<<"$STATUS"
RFC='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'
if [ "$DPOD" = bme688-envpro ] && [[ $LRT =~ $RFC ]] && [[ $LTT =~ $RFC ]] && [ -n "$MSG" ]; then
	ok "envpro status: driverPod, lastReadTime $LRT, Ready's lastTransitionTime and message"
else
	bad "envpro status fields" "$STATUS"
fi

# memory on the cardputer (the kubelet's /stats)
curl -sf -H "Authorization: Bearer $ADMIN_TOKEN" "http://127.0.0.1:$POD_PORT/stats" | python3 -c '
import json, sys
d = json.load(sys.stdin)
pool = d["pool"]
for p in d["pods"]:
    m = p["memory"]
    print("devices-e2e: pool %-16s %6d bytes (code %d, linear %d, stacks %d, runtime %d)" % (
        p["name"], m["poolBytes"], m["codeBytes"], m["linearBytes"], m["stackBytes"],
        m["runtimeBytes"]))
print("devices-e2e: pool used %d of %d bytes, %d free (peak %d)" % (
    pool["usedBytes"], pool["limitBytes"], pool["limitBytes"] - pool["usedBytes"],
    pool["peakBytes"]))
sys.exit(0 if pool["usedBytes"] <= pool["limitBytes"] and len(d["pods"]) >= 3 else 1)
' && ok "three driver pods within the 80 KiB pod pool" || bad "pool accounting"

# the scale unplugged: Ready=False NotFound, a Warning Event; the others keep reading
http_cmd "hw set scale present 0" >/dev/null
if until_ok 10 ready scale False NotFound; then ok "scale present=0: Ready=False NotFound"; else
	bad "scale unplugged" "$("$KUBECTL" get device scale -o jsonpath='{.status.conditions}')"
fi
if until_ok 10 sh -c "'$KUBECTL' get events --field-selector type=Warning,involvedObject.name=scale | grep -q NotFound"; then
	ok "a Warning Event NotFound on Device scale"
else
	bad "Warning Event for the unplugged scale" "$("$KUBECTL" get events 2>&1 | tail -3)"
fi
http_cmd "hw set envpro temperature_c 18" >/dev/null
if until_ok 10 near envpro temperature_c 18 0.05 && ready envpro True; then
	ok "envpro keeps reading while the scale is gone"
else
	bad "envpro after the scale's failure"
fi
http_cmd "hw set scale present 1" >/dev/null
# bus errors at the BME688's address: Ready=False BusError with its Warning Event, then back
http_cmd "hw fault cardputer-1 0 0x77 bus-error 20" | grep -q "^ok" || bad "hw fault"
if until_ok 10 ready envpro False BusError; then ok "bus errors: envpro Ready=False BusError"; else
	bad "bus error condition" "$("$KUBECTL" get device envpro -o jsonpath='{.status.conditions}')"
fi
if until_ok 10 sh -c "'$KUBECTL' get events --field-selector type=Warning,involvedObject.name=envpro | grep -q BusError"; then
	ok "a Warning Event BusError on Device envpro"
else
	bad "Warning Event for the bus error"
fi
if until_ok 30 ready envpro True; then ok "envpro recovers after the faults"; else
	bad "envpro recovery" "$("$KUBECTL" get device envpro -o jsonpath='{.status}')"
fi
if until_ok 10 ready scale True; then ok "scale plugged back: Ready=True"; else
	bad "scale back"
fi

# a driver that traps: Device "crash" (a Mini Scales on channel 3, where nothing answers)
# whose driver pod, created first with a broken image (crashy.wasm reads outside its memory on
# its third tick), the Device controller adopts; the Device gets Ready=False DriverCrash and a
# Warning Event, the other drivers keep reading. A second pod for a driven Device is refused.
"$KUBECTL" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: miniscale-crash
  annotations: {kube32.io/device: crash}
spec:
  nodeName: cardputer-1
  containers: [{name: driver, image: crashy.wasm, resources: {limits: {memory: 8Ki}}}]
---
apiVersion: kube32.io/v1alpha1
kind: Device
metadata:
  name: crash
spec: {node: cardputer-1, model: miniscale, bus: 0, muxChannel: 3, address: 0x26}
YAML
if until_ok 40 sh -c "'$KUBECTL' get events --field-selector type=Warning,involvedObject.name=crash | grep -q DriverCrash"; then
	ok "a trapping driver: Warning Event DriverCrash on Device crash"
else
	bad "DriverCrash event" "$("$KUBECTL" get events 2>&1 | tail -3; "$KUBECTL" get pod miniscale-crash 2>&1 | tail -1)"
fi
if until_ok 10 ready crash False DriverCrash; then ok "Device crash: Ready=False DriverCrash"; else
	bad "DriverCrash condition" "$("$KUBECTL" get device crash -o jsonpath='{.status}')"
fi
http_cmd "hw set envpro temperature_c 19" >/dev/null
if until_ok 10 near envpro temperature_c 19 0.05 && ready envpro True && running rfid-tag &&
	running bme688-envpro && running miniscale-scale; then
	ok "the other drivers keep running and reading after the trap"
else
	bad "other drivers after the trap"
fi
"$KUBECTL" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: second-scale-driver
  annotations: {kube32.io/device: scale}
spec:
  nodeName: cardputer-1
  containers: [{name: driver, image: miniscale.wasm, resources: {limits: {memory: 1Ki}}}]
YAML
second_refused() {
	"$KUBECTL" get pod second-scale-driver -o jsonpath='{.status.containerStatuses[0].state.waiting.message}' | grep -q "already driven by pod miniscale-scale"
}
if until_ok 15 second_refused && ready scale True; then
	ok "a second driver pod for Device scale is refused; scale keeps its driver"
else
	bad "second driver pod" "$("$KUBECTL" get pod second-scale-driver -o jsonpath='{.status}' 2>&1 | head -c 400)"
fi
"$KUBECTL" delete pod miniscale-crash second-scale-driver --wait=false >/dev/null 2>&1
"$KUBECTL" delete device crash --wait=false >/dev/null 2>&1

# a Device deleted: its driver pod goes
"$KUBECTL" delete device tag >/dev/null
gone() { ! "$KUBECTL" get pod rfid-tag >/dev/null 2>&1; }
if until_ok 30 gone; then ok "Device tag deleted: driver pod rfid-tag gone"; else
	bad "driver pod of a deleted Device"
fi

sim_summary devices-e2e "$WORK/sim.log"
