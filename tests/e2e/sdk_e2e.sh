#!/usr/bin/env bash
# sdk_e2e.sh - writing pods, as docs/pod-sdk.md tells it, checked on kube32-sim with the real
# kubectl: sdk/template copied to a folder outside the tree, configured with
# -DKUBE32_SDK=<tree>/sdk and built (its pod logs with k32_logf: "mypod: tick 5 (0x0005)");
# the WAT ticker (apps/examples/wat/ticker.wat: logs, then traps in $explode on its fourth
# tick: the restart's message names 'explode' from the name section); the WASI _start job
# (wasi_job.wat: a Job that Completes, its fd_write lines in the log); the Rust pod
# (apps/examples/rust/rustpod.rs, #![no_std] wasm32-unknown-unknown); a module importing a
# function no node has: reason LinkError (not ErrImagePull) with the import named.
#
#   sdk_e2e.sh KUBE32_SIM SOURCE_DIR EXAMPLES_BUILD_DIR
#
# Exit 0 passed, 1 failed, 77 skipped (kubectl, clang/wasm-ld, wat2wasm or Debian's rustc
# missing; under CI=true a failure).
set -u
SIM=${1:?usage: sdk_e2e.sh KUBE32_SIM SOURCE_DIR EXAMPLES_BUILD_DIR}
SRC=$(cd "${2:?}" && pwd)
EX=${3:?}
WHO=sdk-e2e
. "$SRC/tests/e2e/sim_lib.sh"
command -v kubectl >/dev/null || sim_skip $WHO kubectl "put the real kubectl on PATH"
command -v cmake >/dev/null || sim_skip $WHO cmake "install the Debian package cmake"
for m in ticker wasi_job; do
	[ -s "$EX/$m.wasm" ] || sim_skip $WHO "$m.wasm" "not built in $EX (wabt's wat2wasm)"
done
[ -s "$EX/rustpod.wasm" ] ||
	sim_skip $WHO rustpod.wasm "not built in $EX (Debian's rustc and libstd-rust-dev-wasm32)"

WORK=$(mktemp -d /tmp/kube32-sdk.XXXXXX)
DATA=$WORK/data
export HOME=$WORK/home
export KUBECONFIG=$DATA/admin.kubeconfig
mkdir -p "$HOME" "$DATA" "$WORK/images"
SIM_PID=
trap 'kill -9 $SIM_PID 2>/dev/null; [ "${KEEP:-}" = 1 ] || rm -rf "$WORK"' EXIT

# ---- the template, as a project of its own outside the tree -------------------------------
cp -r "$SRC/sdk/template" "$WORK/mypod"
if (cmake -S "$WORK/mypod" -B "$WORK/mypod/build" -DKUBE32_SDK="$SRC/sdk" &&
	cmake --build "$WORK/mypod/build") >"$WORK/template.log" 2>&1 &&
	[ -s "$WORK/mypod/build/mypod.wasm" ]; then
	sim_pass "sdk/template builds outside the tree ($(stat -c %s "$WORK/mypod/build/mypod.wasm") bytes)"
else
	sim_fail "sdk/template build"
	tail -20 "$WORK/template.log" >&2
fi
# without KUBE32_SDK, outside the tree: a message that says what to pass
cp -r "$SRC/sdk/template" "$WORK/nosdk"
if ! cmake -S "$WORK/nosdk" -B "$WORK/nosdk/build" >"$WORK/nosdk.log" 2>&1 &&
	grep -q -- "-DKUBE32_SDK=/path/to/kube32/sdk" "$WORK/nosdk.log"; then
	sim_pass "template without KUBE32_SDK says to pass it"
else
	sim_fail "template without KUBE32_SDK" "$(tail -5 "$WORK/nosdk.log")"
fi

# a module importing what no node provides (for the LinkError check below)
printf '%s\n' '(module (import "kube32" "no_such_import" (func))' \
	'  (func (export "k32_init") (result i32) i32.const 0))' >"$WORK/linky.wat"
command -v wat2wasm >/dev/null && wat2wasm "$WORK/linky.wat" -o "$WORK/images/linky.wasm"
cp "$WORK/mypod/build/mypod.wasm" "$EX/ticker.wasm" "$EX/wasi_job.wasm" "$EX/rustpod.wasm" \
	"$WORK/images/" 2>/dev/null
"$SIM" --data-dir "$DATA" --port 0 --images "$WORK/images" --boards host:1 --pod-port 0 \
	</dev/null >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
sim_wait_ready "$WORK/sim.log" "$SIM_PID" $WHO
eventually "node ready" " Ready " 30 kubectl get nodes

# ---- C with k32_logf ---------------------------------------------------------------------
check "run mypod" "pod/mypod created" kubectl run mypod --image=mypod.wasm
eventually "mypod logs with k32_logf" "mypod: tick 5 \(0x0005\)" 30 kubectl logs mypod
check "mypod's first line" "^mypod: started at [0-9]+ ms" kubectl logs mypod

# ---- WAT: logs, then a trap named from the name section -----------------------------------
check "run ticker (WAT)" "pod/ticker created" kubectl run ticker --image=ticker.wasm
eventually "ticker logs" "ticker: tick" 30 kubectl logs ticker
eventually "ticker's trap names the function 'explode'" "in 'explode'" 30 \
	kubectl get pod ticker -o 'jsonpath={.status.containerStatuses[0].lastState.terminated.message}'

# ---- WASI _start: a Job ------------------------------------------------------------------
check "WASI job" "job.batch/wasi created" kubectl create job wasi --image=wasi_job.wasm
eventually "WASI job completes" "^1$" 60 kubectl get job wasi -o 'jsonpath={.status.succeeded}'
eventually "WASI job's stdout in its log" "wasi-job: done" 20 kubectl logs job/wasi

# ---- Rust --------------------------------------------------------------------------------
check "run rustpod" "pod/rustpod created" kubectl run rustpod --image=rustpod.wasm
eventually "rustpod logs" "rustpod: tick 3" 30 kubectl logs rustpod
check "rustpod's first line" "rustpod: hello from Rust" kubectl logs rustpod

# ---- an import the node does not provide: its own reason, the import named -------------------
check "run linky" "pod/linky created" kubectl run linky --image=linky.wasm
eventually "an unknown import is LinkError naming it, the message whole" \
	"^LinkError image file linky.wasm: import kube32.no_such_import is not a host function of node host-1 \(sdk/k32.h and k32_klet.h list them\)$" 30 \
	kubectl get pod linky -o 'jsonpath={.status.containerStatuses[0].state.waiting.reason} {.status.containerStatuses[0].state.waiting.message}'

sim_stop "$SIM_PID"
SIM_PID=
sim_summary $WHO "$WORK/sim.log"
