#!/usr/bin/env bash
# crd_e2e.sh - CustomResourceDefinitions end to end (issue 16, item 1): kube32-server on a
# free loopback port, driven by the real kubectl: the newest installed (the gcloud SDK's
# highest kubectl.1.NN) and kubectl 1.27 (which validates against /openapi/v2), then by
# python3-kubernetes' CustomObjectsApi (crd_e2e.py). With each kubectl: apply a CRD with a
# schema, wait for Established, create an object, get it with the printer columns, a bad
# object refused with the schema's messages, explain, watch a change, delete. Once: an
# unknown field under Strict, defaults, the status and scale subresources, a restart (the
# CRD and its objects persist), two served versions (an object written at v1beta1 is stored
# at the storage version v1 and read, listed and watched at either with that apiVersion), a hostile schema and the K32_API_MAX_CRDS bound refused with
# the limit named, and deleting the CRD deletes its objects and its resource.
#
#   crd_e2e.sh /path/to/kube32-server
#
# Exit 0 passed, 1 failed, 77 skipped (kubectl or python3-kubernetes missing; under CI=true
# a failure).
set -u
SERVER=${1:?usage: crd_e2e.sh /path/to/kube32-server}
HERE=$(cd "$(dirname "$0")" && pwd)
WHO=crd-e2e
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
PY=${PY:-/usr/bin/python3}
. "$HERE/sim_lib.sh"
[ -x "$KUBECTL" ] || sim_skip $WHO kubectl "expected at $KUBECTL (set KUBECTL=...)"
"$PY" -c 'import kubernetes' 2>/dev/null || sim_skip $WHO python3-kubernetes "install the Debian package python3-kubernetes"
KDIR=$(dirname "$(readlink -f "$KUBECTL")")
NEWEST=$(ls "$KDIR"/kubectl.1.* 2>/dev/null | sort -t. -k3 -n | tail -1)
K27=$KDIR/kubectl.1.27
[ -x "$K27" ] || sim_skip $WHO kubectl.1.27 "expected beside kubectl in $KDIR (gcloud SDK)"
[ -n "$NEWEST" ] || NEWEST=$KUBECTL

WORK=$(mktemp -d /tmp/kube32-crd.XXXXXX)
DATA=$WORK/data
export HOME=$WORK/home # fresh ~/.kube/cache: discovery is never stale
export KUBECONFIG=$DATA/admin.kubeconfig
mkdir -p "$HOME" "$DATA"
SRV_PID=
SIM_PIDS=SRV_PID
trap sim_cleanup EXIT

start_server() {
	rm -f "$WORK/port"
	"$SERVER" --data-dir "$DATA" --port "${1:-0}" --port-file "$WORK/port" --no-controllers \
		>>"$WORK/server.log" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 100); do
		[ -s "$WORK/port" ] && [ -s "$KUBECONFIG" ] && return 0
		sleep 0.1
	done
	echo "$WHO: FAIL: kube32-server did not start:" >&2
	cat "$WORK/server.log" >&2
	exit 1
}
start_server 0
PORT=$(cat "$WORK/port")
echo "$WHO: kube32-server pid $SRV_PID on https://127.0.0.1:$PORT; kubectl $NEWEST and $K27"

cat >"$WORK/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sensors.demo.kube32.io
spec:
  group: demo.kube32.io
  scope: Namespaced
  names:
    plural: sensors
    singular: sensor
    kind: Sensor
    shortNames: [sen]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Model
      type: string
      jsonPath: .spec.model
    - name: Bus
      type: integer
      jsonPath: .spec.bus
    - name: Reading
      type: number
      jsonPath: .status.reading
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        description: Sensor is an I2C sensor wired to a board.
        properties:
          spec:
            type: object
            description: Which sensor, and where on the bus.
            required: [model]
            properties:
              model:
                type: string
                description: The sensor's part name.
                enum: [bme280, sht31, rfid]
              bus:
                type: integer
                description: The I2C bus number.
                minimum: 0
                maximum: 3
                default: 0
              address:
                type: string
                description: The 7-bit I2C address in hex.
                pattern: '^0x[0-9a-f]{2}$'
              replicas:
                type: integer
          status:
            type: object
            properties:
              reading:
                type: number
              replicas:
                type: integer
YAML
obj() { # obj NAME MODEL BUS ADDRESS
	printf 'apiVersion: demo.kube32.io/v1\nkind: Sensor\nmetadata:\n  name: %s\nspec:\n  model: %s\n  bus: %s\n  address: "%s"\n' "$1" "$2" "$3" "$4"
}

# ---- with each kubectl -----------------------------------------------------------------------
for K in "$NEWEST" "$K27"; do
	v=$(basename "$K" | sed 's/kubectl\.//; s/\.//')
	check "k$v-apply-crd" 'customresourcedefinition.apiextensions.k8s.io/sensors.demo.kube32.io (created|unchanged|configured)' \
		"$K" apply -f "$WORK/crd.yaml"
	check "k$v-established" 'condition met' \
		"$K" wait --for condition=established --timeout=20s crd/sensors.demo.kube32.io
	obj "s$v" bme280 1 0x76 >"$WORK/s$v.yaml"
	check "k$v-create" "sensor.demo.kube32.io/s$v created" "$K" create -f "$WORK/s$v.yaml"
	check "k$v-get-columns" "^NAME +MODEL +BUS +READING +AGE"$'\n'"s$v +bme280 +1 +<none> +[0-9]+s" \
		"$K" get sensors "s$v"
	check "k$v-get-short" "s$v +bme280" "$K" get sen
	obj "bad$v" pink 9 0x7 >"$WORK/bad$v.yaml"
	check "k$v-bad-refused" 'Sensor.demo.kube32.io "bad'"$v"'" is invalid' "$K" apply -f "$WORK/bad$v.yaml"
	check "k$v-bad-bus" 'spec.bus: Invalid value: 9: spec.bus in body should be less than or equal to 3' \
		printf '%s' "$OUT"
	check "k$v-bad-enum" 'spec.model: Unsupported value: "pink": supported values: "bme280", "sht31", "rfid"' \
		printf '%s' "$OUT"
	check "k$v-bad-pattern" "spec.address: Invalid value: \"0x7\": spec.address in body should match '\\^0x\\[0-9a-f\\]\\{2\\}\\$'" \
		printf '%s' "$OUT"
	check "k$v-bad-absent" 'NotFound' "$K" get sensor "bad$v"
	check "k$v-explain" 'Sensor is an I2C sensor wired to a board' "$K" explain sensors
	check "k$v-explain-field" 'The I2C bus number' "$K" explain sensors.spec.bus
	check "k$v-explain-fields" 'model.*<string>.*-required-' "$K" explain sensors.spec
	# watch: a change made while kubectl watches shows up as a row
	timeout 15 "$K" get sensors "s$v" -w --output-watch-events >"$WORK/watch$v.out" 2>&1 &
	WPID=$!
	sleep 2
	"$K" patch sensor "s$v" --type=merge -p '{"spec":{"bus":2}}' >/dev/null 2>&1
	eventually "k$v-watch" "MODIFIED +s$v +bme280 +2" 10 cat "$WORK/watch$v.out"
	kill "$WPID" 2>/dev/null
	wait "$WPID" 2>/dev/null
	check "k$v-delete" "sensor.demo.kube32.io \"s$v\" deleted" "$K" delete sensor "s$v"
	check "k$v-deleted" 'NotFound' "$K" get sensor "s$v"
done
K=$NEWEST

# ---- once: unknown fields, defaults, subresources --------------------------------------------
printf 'apiVersion: demo.kube32.io/v1\nkind: Sensor\nmetadata: {name: u1}\nspec: {model: sht31, colour: red}\n' >"$WORK/u1.yaml"
check strict-unknown 'strict decoding error: unknown field "spec.colour"' "$K" apply -f "$WORK/u1.yaml"
check pruned-created 'sensor.demo.kube32.io/u1 created' "$K" apply --validate=false -f "$WORK/u1.yaml"
check pruned-and-defaulted '^\{"bus":0,"model":"sht31"\}$' "$K" get sensor u1 -o 'jsonpath={.spec}'
check status-patch 'sensor.demo.kube32.io/u1 patched' \
	"$K" patch sensor u1 --subresource=status --type=merge -p '{"status":{"reading":21.5}}'
check status-column 'u1 +sht31 +0 +21.5' "$K" get sensor u1
check status-validated 'status.reading: Invalid value: "warm": status.reading in body must be of type number' \
	"$K" patch sensor u1 --subresource=status --type=merge -p '{"status":{"reading":"warm"}}'
check status-not-via-main '^21.5$' sh -c "'$K' patch sensor u1 --type=merge -p '{\"status\":{\"reading\":1}}' >/dev/null; '$K' get sensor u1 -o 'jsonpath={.status.reading}'"
check scale 'sensor.demo.kube32.io/u1 scaled' "$K" scale sensor u1 --replicas=3
check scale-spec '^3$' "$K" get sensor u1 -o 'jsonpath={.spec.replicas}'
check api-resources 'sensors +sen +demo.kube32.io/v1 +true +Sensor' "$K" api-resources --api-group=demo.kube32.io
check crd-conditions 'Established=True' "$K" get crd sensors.demo.kube32.io \
	-o 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}'
check openapi-v3 '"io.kube32.demo.v1.Sensor":\{"description":"Sensor is an I2C sensor' "$K" get --raw /openapi/v3/apis/demo.kube32.io/v1

# ---- python3-kubernetes: CustomObjectsApi ------------------------------------------------------
check python-custom-objects '^python-crd: all checks passed$' "$PY" "$HERE/crd_e2e.py"

# ---- restart: the CRD, its resource and objects come back from the store -----------------------
kill -TERM "$SRV_PID"
for _ in $(seq 50); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
start_server "$PORT"
rm -rf "$HOME/.kube/cache"
check restart-object 'u1 +sht31 +0 +21.5' "$K" get sensors

# ---- versions: v1beta1 and v1 (storage) served, conversion None -----------------------------
cat >"$WORK/gauge-crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gauges.demo.kube32.io}
spec:
  group: demo.kube32.io
  scope: Namespaced
  names: {plural: gauges, singular: gauge, kind: Gauge}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {level: {type: integer}}}}}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {level: {type: integer}}}}}}
YAML
check versions-crd 'created' "$K" apply -f "$WORK/gauge-crd.yaml"
eventually versions-established '^True$' 20 "$K" get crd gauges.demo.kube32.io \
	-o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'
printf 'apiVersion: demo.kube32.io/v1beta1\nkind: Gauge\nmetadata: {name: g1}\nspec: {level: 3}\n' >"$WORK/g1.yaml"
check versions-create-v1beta1 'gauge.demo.kube32.io/g1 created' "$K" apply -f "$WORK/g1.yaml"
check versions-read-v1 '^demo.kube32.io/v1 3$' "$K" get gauges.v1.demo.kube32.io g1 -o 'jsonpath={.apiVersion} {.spec.level}'
check versions-read-v1beta1 '^demo.kube32.io/v1beta1 3$' "$K" get gauges.v1beta1.demo.kube32.io g1 \
	-o 'jsonpath={.apiVersion} {.spec.level}'
check versions-list-v1beta1 '"items":\[\{"apiVersion":"demo.kube32.io/v1beta1","kind":"Gauge"' \
	"$K" get --raw /apis/demo.kube32.io/v1beta1/namespaces/default/gauges
check versions-watch-v1beta1 '"type":"ADDED","object":\{"apiVersion":"demo.kube32.io/v1beta1","kind":"Gauge"' \
	"$K" get --raw '/apis/demo.kube32.io/v1beta1/namespaces/default/gauges?watch=1&timeoutSeconds=1'
check versions-watch-v1 '"type":"ADDED","object":\{"apiVersion":"demo.kube32.io/v1","kind":"Gauge"' \
	"$K" get --raw '/apis/demo.kube32.io/v1/namespaces/default/gauges?watch=1&timeoutSeconds=1'
# stored at the storage version: the store's files hold the object as v1, never as v1beta1
check versions-stored-v1 '^v1: [1-9][0-9]* v1beta1: 0$' bash -c "echo v1: \$(grep -rac '\"apiVersion\":\"demo.kube32.io/v1\",\"kind\":\"Gauge\"' '$DATA' | awk -F: '{s+=\$NF} END {print s+0}') v1beta1: \$(grep -rac '\"apiVersion\":\"demo.kube32.io/v1beta1\",\"kind\":\"Gauge\"' '$DATA' | awk -F: '{s+=\$NF} END {print s+0}')"
check versions-delete-crd 'deleted' "$K" delete -f "$WORK/gauge-crd.yaml"

# ---- bounds ------------------------------------------------------------------------------------
{
	printf 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: deeps.demo.kube32.io}\n'
	printf 'spec:\n  group: demo.kube32.io\n  scope: Cluster\n  names: {plural: deeps, kind: Deep}\n'
	printf '  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n'
	# arrays of arrays: one JSON level per schema level, so the request parses and the
	# schema's own depth bound is what refuses it
	ind='        '
	for _ in $(seq 16); do
		printf '%stype: array\n%sitems:\n' "$ind" "$ind"
		ind="$ind  "
	done
	printf '%stype: string\n' "$ind"
} >"$WORK/deep.yaml"
check hostile-deep-schema 'K32_API_CRD_SCHEMA_DEPTH' "$K" apply -f "$WORK/deep.yaml"
: >"$WORK/many.yaml"
for i in $(seq 1 16); do
	printf -- '---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: m%s.demo.kube32.io}\nspec:\n  group: demo.kube32.io\n  scope: Namespaced\n  names: {plural: m%s, kind: M%s}\n  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n' \
		"$i" "$i" "$i" >>"$WORK/many.yaml"
done
check crd-count-limit 'Too many: this server holds 16 CRDs, the limit is 16 \(K32_API_MAX_CRDS\)' \
	"$K" apply -f "$WORK/many.yaml"
"$K" delete -f "$WORK/many.yaml" --ignore-not-found >/dev/null 2>&1

# ---- deleting the CRD deletes its objects and its resource -------------------------------------
check delete-crd 'customresourcedefinition.apiextensions.k8s.io "sensors.demo.kube32.io" deleted' \
	"$K" delete crd sensors.demo.kube32.io
check resource-gone 'NotFound' "$K" get --raw /apis/demo.kube32.io/v1/namespaces/default/sensors
check recreate 'created' "$K" apply -f "$WORK/crd.yaml"
check objects-gone '^$' "$K" get sensors -A -o name

sim_stop "$SRV_PID"
sim_summary $WHO "$WORK/server.log"
