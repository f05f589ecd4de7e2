#!/usr/bin/env bash
# End-to-end, the API server at its edges (issue 12), with the real kubectl: unknown fields
# (kubectl apply --validate=warn prints the server's Warning, patches without
# fieldValidation no longer store them, so kubectl edit works after), strings with NUL,
# impersonation (auth can-i --as, whoami --as, a node may not impersonate), NodeRestriction
# of labels, health endpoints without a token, and the startup error of an empty tokens
# file. Stops the server at the end (SIGTERM).
#
#   edges_e2e.sh /path/to/kube32-server
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl or curl missing (skipped; under
# CI=true a failure).
set -u

SERVER=${1:?usage: edges_e2e.sh /path/to/kube32-server}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
CURL=${CURL:-/usr/bin/curl}

. "$(dirname "$0")/sim_lib.sh" # check, sim_pass, sim_fail, sim_skip, sim_summary
missing() { sim_skip edges-e2e "$@"; }
[ -x "$KUBECTL" ] || missing kubectl "expected at $KUBECTL (set KUBECTL=...)"
[ -x "$CURL" ] || missing curl "expected at $CURL (set CURL=...)"

WORK=$(mktemp -d /tmp/kube32-edges.XXXXXX)
DATA=$WORK/data
export HOME=$WORK/home
export KUBECONFIG=$DATA/admin.kubeconfig
mkdir -p "$HOME" "$DATA"
SRV_PID=
cleanup() {
	if [ -n "$SRV_PID" ] && kill -0 "$SRV_PID" 2>/dev/null; then
		kill -9 "$SRV_PID" 2>/dev/null
	fi
	if [ "${KEEP:-}" != "1" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# check_not NAME REGEX CMD...: passes when REGEX does not match CMD's output.
check_not() {
	local name=$1 re=$2
	shift 2
	OUT=$(timeout 60 bash -c '"$@"' check "$@" 2>&1)
	if ! grep -Eq -- "$re" <<<"$OUT"; then
		sim_pass "$name"
	else
		sim_fail "$name" "/$re/ unexpected from: $*"
		sed 's/^/     | /' <<<"$OUT" | head -20 >&2
	fi
}
k() { "$KUBECTL" "$@"; }
kn() { "$KUBECTL" -n edges "$@"; }
export -f k kn
export KUBECTL

# ---- an empty tokens file is a startup error that says what to do --------------------------
mkdir -p "$WORK/empty"
: >"$WORK/empty/tokens"
check empty-tokens-refused 'holds no identity .*add a line token,admin,admin' \
	bash -c '"$0" --data-dir "$1" --port 0 --no-controllers; echo "exit $?"' "$SERVER" "$WORK/empty"
check empty-tokens-exit 'exit 1' echo "$OUT"
check_not empty-tokens-no-kubeconfig 'kubeconfig' ls "$WORK/empty"

# ---- the server -------------------------------------------------------------------------------
ADMIN_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
NODE_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
cat >"$DATA/tokens" <<EOT
$ADMIN_TOKEN,admin,admin,"system:masters"
$NODE_TOKEN,system:node:mcu-1,system:node:mcu-1,"system:nodes"
EOT
"$SERVER" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --no-controllers >"$WORK/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do
	[ -s "$WORK/port" ] && [ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
if [ ! -s "$WORK/port" ]; then
	echo "e2e: FAIL: kube32-server did not start:" >&2
	cat "$WORK/server.log" >&2
	exit 1
fi
PORT=$(cat "$WORK/port")
URL=https://127.0.0.1:$PORT
CA=$DATA/pki/ca.crt
[ -f "$CA" ] || CA=$(find "$DATA/pki" -name '*ca*.crt' -o -name 'ca*.pem' | head -1)
echo "e2e: kube32-server pid $SRV_PID on $URL (data $DATA)"
export URL CA ADMIN_TOKEN NODE_TOKEN CURL
# curl as the admin: raw requests kubectl cannot make (a PATCH without fieldValidation)
adm() { "$CURL" -sS --cacert "$CA" -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }
export -f adm

check create-namespace '^namespace/edges created$' k create namespace edges

# ---- health, open to anonymous clients ---------------------------------------------------------
check healthz-anonymous '^ok$' "$CURL" -sS --cacert "$CA" "$URL/healthz"
check livez-anonymous '^ok$' "$CURL" -sS --cacert "$CA" "$URL/livez"
check readyz-verbose '\[\+\]ping ok.*\[\+\]store-writable ok.*readyz check passed' \
	bash -c '"$CURL" -sS --cacert "$CA" "$URL/readyz?verbose" | tr "\n" " "'
check readyz-kubectl 'readyz check passed' k get --raw '/readyz?verbose'
check others-need-token '"code":401' "$CURL" -sS --cacert "$CA" "$URL/api/v1/namespaces"

# ---- unknown fields: Warn, Strict, Ignore -------------------------------------------------------
cat >"$WORK/web.yaml" <<'EOT'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: edges
spec:
  bogus: 1
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: hello.wasm
EOT
check apply-strict-refused 'strict decoding error: unknown field "spec.bogus"' k apply -f "$WORK/web.yaml"
check apply-warn 'Warning: unknown field "spec.bogus"' k apply --validate=warn -f "$WORK/web.yaml"
check apply-warn-created 'deployment.apps/web created' echo "$OUT"
check_not apply-warn-not-stored 'bogus' kn get deploy web -o 'jsonpath={.spec}'
# the issue: a patch without fieldValidation stored spec.bogus and kubectl edit then failed
check raw-patch-warning '^[Ww]arning: 299 - "unknown field \\"spec.bogus\\""' \
	adm -o /dev/null -D - -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data '{"spec":{"bogus":2}}' "$URL/apis/apps/v1/namespaces/edges/deployments/web"
check_not raw-patch-not-stored 'bogus' kn get deploy web -o 'jsonpath={.spec}'
check raw-patch-strict 'strict decoding error.*"code":400' \
	adm -X PATCH -H 'Content-Type: application/merge-patch+json' --data '{"spec":{"bogus":2}}' \
	"$URL/apis/apps/v1/namespaces/edges/deployments/web?fieldValidation=Strict"
cat >"$WORK/editor.sh" <<'EOT'
#!/bin/sh
sed -i 's/replicas: 1/replicas: 3/' "$1"
EOT
chmod +x "$WORK/editor.sh"
check edit-works 'deployment.apps/web edited' env EDITOR="$WORK/editor.sh" KUBE_EDITOR="$WORK/editor.sh" "$KUBECTL" -n edges edit deploy web
check edit-stored '^3$' kn get deploy web -o 'jsonpath={.spec.replicas}'
check raw-patch-ignore '"replicas":2' \
	adm -D "$WORK/ignore.hdr" -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data '{"spec":{"bogus":3,"replicas":2}}' \
	"$URL/apis/apps/v1/namespaces/edges/deployments/web?fieldValidation=Ignore"
check_not raw-patch-ignore-silent '^[Ww]arning' cat "$WORK/ignore.hdr"
check_not raw-patch-ignore-not-stored 'bogus' kn get deploy web -o 'jsonpath={.spec}'

# ---- strings with NUL ---------------------------------------------------------------------------
cat >"$WORK/nul.json" <<'EOT'
{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1","namespace":"edges"},
 "stringData":{"pw":"ab\u0000cd"}}
EOT
check nul-refused 'stringData.pw: the string holds a NUL character' k create -f "$WORK/nul.json"
check nul-not-stored 'NotFound' kn get secret s1
check bad-utf8-refused 'data.k: the string holds invalid UTF-8' \
	bash -c 'printf "{\"metadata\":{\"name\":\"u\"},\"data\":{\"k\":\"caf\xe9\"}}" | adm -X POST -H "Content-Type: application/json" --data-binary @- "$URL/api/v1/namespaces/edges/configmaps"'

# ---- impersonation -------------------------------------------------------------------------------
check can-i-as-user '^no( |$)' k auth can-i create configmaps -n edges --as jane
check can-i-as-node-read '^yes$' k auth can-i get pods -n edges --as system:node:mcu-1 --as-group system:nodes
check can-i-as-node-write '^no( |$)' k auth can-i create deployments -n edges --as system:node:mcu-1
check can-i-admin '^yes$' k auth can-i create configmaps -n edges
check whoami-as 'jane' k auth whoami --as jane
check as-write-refused 'forbidden: User "jane" cannot create' kn create configmap imp --from-literal=a=1 --as jane
check node-may-not-impersonate 'cannot impersonate' k --token "$NODE_TOKEN" auth can-i get pods --as admin --as-group system:masters

# ---- NodeRestriction: labels -------------------------------------------------------------------
cat >"$WORK/node.json" <<'EOT'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"mcu-1","labels":{"kube32.io/board":"cardputer"}},
 "status":{"capacity":{"cpu":"1","memory":"81920","pods":"8"},"allocatable":{"cpu":"1","memory":"81920","pods":"8"}}}
EOT
# a cardputer claiming more than its profile's pod pool (80 KiB) is refused, even at registration
sed 's/"81920"/"262144"/g' "$WORK/node.json" >"$WORK/node-big.json"
check node-over-profile 'Forbidden.*a cardputer board gives pods at most 81920' k --token "$NODE_TOKEN" create -f "$WORK/node-big.json"
check node-registers 'node/mcu-1 created' k --token "$NODE_TOKEN" create -f "$WORK/node.json"
check node-role-refused 'Forbidden.*node-role.kubernetes.io' k --token "$NODE_TOKEN" label node mcu-1 node-role.kubernetes.io/control-plane=
check node-restriction-refused 'Forbidden.*node-restriction.kubernetes.io' k --token "$NODE_TOKEN" label node mcu-1 node-restriction.kubernetes.io/pool=a
check node-own-label 'node/mcu-1 labeled' k --token "$NODE_TOKEN" label node mcu-1 example.com/zone=a
check admin-role-label 'node/mcu-1 labeled' k label node mcu-1 node-role.kubernetes.io/worker=
check node-allocatable-refused 'Forbidden.*may not raise status.allocatable.memory' \
	k --token "$NODE_TOKEN" patch node mcu-1 --subresource=status --type=merge -p '{"status":{"allocatable":{"memory":"64Mi"}}}'

# ---- clean stop ----------------------------------------------------------------------------------
kill -TERM "$SRV_PID"
for _ in $(seq 50); do
	kill -0 "$SRV_PID" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$SRV_PID" 2>/dev/null; then
	sim_fail sigterm-stop "server still running 5 s after SIGTERM"
fi
SRV_PID=
sim_summary e2e "$WORK/server.log"
