#!/usr/bin/env bash
# End-to-end, RBAC and ServiceAccounts (issue 16 item 2) with the real kubectl (the newest and
# 1.27) and python3-kubernetes: the admin creates a ServiceAccount, a Role reading pods and a
# RoleBinding with `kubectl create`, and a token with `kubectl create token`; with that token
# alone kubectl can get, list and watch pods in that namespace and nothing else (403 in
# kube-apiserver's words for other namespaces, other resources, writes), `kubectl auth can-i`
# answers yes/no and --list, and deleting the ServiceAccount revokes the token. The default
# admin/edit/view ClusterRoles aggregate (aggregationRule), and a labelled role of one's own
# joins and leaves them. Then
# rbac_python_e2e.py does the same through python3-kubernetes. Stops the server (SIGTERM).
#
#   rbac_e2e.sh /path/to/kube32-server
#
# Exit 0: all checks passed; 1: a check failed; 77: kubectl or python3-kubernetes missing
# (skipped; under CI=true a failure).
set -u

SERVER=${1:?usage: rbac_e2e.sh /path/to/kube32-server}
HERE=$(cd "$(dirname "$0")" && pwd)
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
PY=${PY:-/usr/bin/python3}

. "$HERE/sim_lib.sh" # check, eventually, sim_pass, sim_fail, sim_skip, sim_stop, sim_summary
[ -x "$KUBECTL" ] || sim_skip rbac-e2e kubectl "expected at $KUBECTL (set KUBECTL=...)"
"$PY" -c 'import kubernetes' 2>/dev/null ||
	sim_skip rbac-e2e python3-kubernetes "install the Debian package python3-kubernetes"

WORK=$(mktemp -d /tmp/kube32-rbac.XXXXXX)
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

"$SERVER" --data-dir "$DATA" --port 0 --port-file "$WORK/port" --no-controllers >"$WORK/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do
	[ -s "$WORK/port" ] && [ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
if [ ! -s "$WORK/port" ]; then
	echo "rbac-e2e: FAIL: kube32-server did not start:" >&2
	cat "$WORK/server.log" >&2
	exit 1
fi
PORT=$(cat "$WORK/port")
echo "rbac-e2e: kube32-server pid $SRV_PID on https://127.0.0.1:$PORT (data $DATA)"
KDIR=$(dirname "$(readlink -f "$KUBECTL")")
OLD=$KDIR/kubectl.1.27
k() { "$KUBECTL" "$@"; }
# kubectl with nothing but the ServiceAccount's token (no kubeconfig credentials)
CA=$DATA/pki/ca.crt
[ -f "$CA" ] || CA=$(find "$DATA/pki" -name '*ca*.crt' | head -1)
asa() { "${KC:-$KUBECTL}" --kubeconfig=/dev/null --server="https://127.0.0.1:$PORT" --certificate-authority="$CA" --token="$(cat "$WORK/token")" "$@"; }
export -f k asa
export KUBECTL PORT CA WORK

# ---- bootstrap objects ---------------------------------------------------------------------
check default-clusterroles '^admin cluster-admin edit system:aggregate-to-admin system:aggregate-to-edit system:aggregate-to-view view $' \
	k get clusterroles -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{end}'
# admin, edit and view aggregate (kube-apiserver's definitions): view holds what
# system:aggregate-to-view holds, edit adds writes, admin adds roles and rolebindings
check default-view-aggregated 'pods' k get clusterrole view -o 'jsonpath={.rules[0].resources}'
check default-admin-aggregated 'rolebindings' k get clusterrole admin -o 'jsonpath={.rules[*].resources}'
# a role of one's own joins view by a label (kubectl label), leaves by its removal; an
# aggregated role of one's own (kubectl create --aggregation-rule)
check own-role-created 'created' k create clusterrole node-reader --verb=get,list --resource=nodes
check own-role-labelled 'labeled' k label clusterrole node-reader rbac.authorization.k8s.io/aggregate-to-view=true
check view-has-nodes '"nodes"' k get clusterrole view -o 'jsonpath={.rules}'
check edit-has-nodes '"nodes"' k get clusterrole edit -o 'jsonpath={.rules}'
check own-aggregated 'created' k create clusterrole monitoring --aggregation-rule=team=sre
check own-source 'created' k create clusterrole sre-pods --verb=watch --resource=pods
check own-source-labelled 'labeled' k label clusterrole sre-pods team=sre
check own-aggregated-rules '^\[\{"apiGroups":\[""\],"resources":\["pods"\],"verbs":\["watch"\]\}\]$' \
	k get clusterrole monitoring -o 'jsonpath={.rules}'
check own-role-unlabelled 'unlabeled' k label clusterrole node-reader rbac.authorization.k8s.io/aggregate-to-view-
check view-lost-nodes '^0$' bash -c 'k get clusterrole view -o "jsonpath={.rules}" | grep -c "\"nodes\""'
k delete clusterrole node-reader monitoring sre-pods >/dev/null
check default-serviceaccount '^default$' k -n kube-system get serviceaccount default -o 'jsonpath={.metadata.name}'
check create-ns '^namespace/app created$' k create namespace app
check create-ns-other '^namespace/other created$' k create namespace other
check new-ns-default-sa '^default$' k -n app get sa default -o 'jsonpath={.metadata.name}'

# ---- the admin sets up a reader (kubectl create: protobuf bodies) ---------------------------
check create-sa '^serviceaccount/reader created$' k -n app create serviceaccount reader
check create-role '^role.rbac.authorization.k8s.io/pod-reader created$' k -n app create role pod-reader --verb=get,list,watch --resource=pods
check create-rolebinding '^rolebinding.rbac.authorization.k8s.io/read-pods created$' k -n app create rolebinding read-pods --role=pod-reader --serviceaccount=app:reader
check role-rules '^get,list,watch pods$' k -n app get role pod-reader -o 'jsonpath={.rules[0].verbs[0]},{.rules[0].verbs[1]},{.rules[0].verbs[2]} {.rules[0].resources[0]}'
check describe-rolebinding 'ServiceAccount +reader +app' k -n app describe rolebinding read-pods
check explain-role 'FIELD: rules <\[\]PolicyRule>' k explain role.rules
check pod-app '^pod/p1 created$' k -n app run p1 --image=a.wasm
check pod-other '^pod/p2 created$' k -n other run p2 --image=a.wasm
check create-token '^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' bash -c 'k -n app create token reader --duration=15m | tee "$WORK/token"'

# ---- with the token alone: pods in app, nothing else ---------------------------------------
check sa-whoami 'system:serviceaccount:app:reader' asa auth whoami
check sa-whoami-groups 'system:serviceaccounts:app' asa auth whoami
check sa-get-pods '^p1 +0/1 +Pending' asa -n app get pods --no-headers
check sa-get-pod '^p1$' asa -n app get pod p1 -o 'jsonpath={.metadata.name}'
check sa-watch 'p1 +0/1 +Pending' timeout 3 "$KUBECTL" --kubeconfig=/dev/null --server="https://127.0.0.1:$PORT" --certificate-authority="$CA" --token="$(cat "$WORK/token")" -n app get pods -w
check sa-other-ns 'Error from server \(Forbidden\): pods is forbidden: User "system:serviceaccount:app:reader" cannot list resource "pods" in API group "" in the namespace "other"' asa -n other get pods
check sa-all-ns 'cannot list resource "pods" in API group "" at the cluster scope' asa get pods -A
check sa-configmaps 'configmaps is forbidden: User "system:serviceaccount:app:reader" cannot list resource "configmaps" in API group "" in the namespace "app"' asa -n app get configmaps
check sa-deployments 'deployments.apps is forbidden: .*cannot list resource "deployments" in API group "apps" in the namespace "app"' asa -n app get deployments
check sa-log 'pods "p1" is forbidden: .*cannot get resource "pods/log" in API group "" in the namespace "app"' asa -n app logs p1
check sa-create 'pods is forbidden: .*cannot create resource "pods" in API group "" in the namespace "app"' asa -n app run p3 --image=a.wasm
check sa-delete 'pods "p1" is forbidden: .*cannot delete resource "pods"' asa -n app delete pod p1
check sa-label 'pods "p1" is forbidden: .*cannot patch resource "pods"' asa -n app label pod p1 x=y
check sa-nodes 'nodes is forbidden: .*cannot list resource "nodes" in API group "" at the cluster scope' asa get nodes
check sa-escalate 'rolebindings.rbac.authorization.k8s.io is forbidden: .*cannot create resource "rolebindings"' asa -n app create rolebinding esc --clusterrole=admin --serviceaccount=app:reader
check sa-metrics 'forbidden: User "system:serviceaccount:app:reader" cannot get path "/metrics"' asa get --raw /metrics
check sa-discovery 'pods +po +v1 +true +Pod' asa api-resources
check still-there '^p1$' k -n app get pod p1 -o 'jsonpath={.metadata.name}'

# ---- kubectl auth can-i --------------------------------------------------------------------
check can-i-list-app '^yes$' asa auth can-i list pods -n app
check can-i-watch-app '^yes$' asa auth can-i watch pods -n app
check can-i-list-other '^no$' asa auth can-i list pods -n other
check can-i-create '^no$' asa auth can-i create pods -n app
check can-i-log '^no$' asa auth can-i get pods --subresource=log -n app
check can-i-metrics '^no$' asa auth can-i get /metrics
check_rc() {
	local name=$1 want=$2 rc
	shift 2
	timeout 60 bash -c '"$@"' check "$@" >/dev/null 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then sim_pass "$name"; else sim_fail "$name" "exit $rc, want $want: $*"; fi
}
check_rc can-i-no-exit 1 asa auth can-i delete pods -n app
check can-i-list 'pods +\[\] +\[\] +\[get list watch\]' asa auth can-i --list -n app
check can-i-admin-as 'no' k auth can-i list pods -n other --as=system:serviceaccount:app:reader
check can-i-admin-as-yes 'yes' k auth can-i list pods -n app --as=system:serviceaccount:app:reader

# ---- a ClusterRole bound by a RoleBinding; kubectl 1.27 with the same token ----------------
check bind-view '^rolebinding.rbac.authorization.k8s.io/view created$' k -n other create rolebinding view --clusterrole=view --serviceaccount=app:reader
check sa-other-now '^p2 ' asa -n other get pods --no-headers
check sa-other-secrets 'secrets is forbidden' asa -n other get secrets
if [ -x "$OLD" ]; then
	check kubectl127-get '^p1 ' env KC="$OLD" bash -c 'asa -n app get pods --no-headers'
	check kubectl127-forbidden 'configmaps is forbidden' env KC="$OLD" bash -c 'asa -n app get configmaps'
	check kubectl127-can-i '^yes$' env KC="$OLD" bash -c 'asa auth can-i list pods -n other'
	check kubectl127-token '^eyJ' "$OLD" -n app create token reader
elif [ "${CI:-}" = "true" ]; then
	sim_fail kubectl-1.27-missing "$OLD is missing (CI=true requires it)"
else
	echo "rbac-e2e: kubectl 1.27 is missing ($OLD): its checks are SKIPPED" >&2
fi

# ---- expiry bounds, revocation -------------------------------------------------------------
check token-too-short 'K32_API_SA_TOKEN_MIN_S' k -n app create token reader --duration=1m
check token-unknown-sa 'serviceaccounts "nope" not found' k -n app create token nope
check delete-sa '^serviceaccount "reader" deleted$' k -n app delete serviceaccount reader
check revoked 'Unauthorized' asa -n app get pods
check garbage-token 'Unauthorized' "$KUBECTL" --kubeconfig=/dev/null --server="https://127.0.0.1:$PORT" --certificate-authority="$CA" --token=a.b.c get pods

# ---- python3-kubernetes with a ServiceAccount token ----------------------------------------
check python-sa '^python-rbac: all checks passed$' "$PY" "$HERE/rbac_python_e2e.py"

sim_stop "$SRV_PID"
SRV_PID=
sim_summary rbac-e2e "$WORK/server.log"
