#!/usr/bin/env bash
# readme_e2e.sh - the README's first hour, as written: starts `scripts/run.sh` (what `make
# run` calls) in a scratch tree whose build/, apps/ and scripts/ point at the real ones, then
# runs every line of every ```sh block of README.md and docs/controllers.md from the top of
# that tree, one by one, against it. A line fails the test if it exits non-zero. So the
# commands cannot rot: change one and this test runs the new one.
#
# The only rewriting: `curl` gets --fail-with-body (an HTTP error fails the line), and the
# README's fixed ports (6443, 7000, 7001) become the free ports this run got (run.sh is started with ARGS "--port 0 --pod-port 0", and the banner says which),
# so the test never collides with a `make run` of the user's. Also checked: the banner names
# the real endpoints, the console on run.sh's stdin answers, the sensor set by a README line
# reaches the Device's status, the README names the ports and their flags, run.sh stops the
# simulator on SIGTERM, and a run.sh whose simulator cannot start (its API port taken) fails
# loudly with the flag to change instead of saying "kube32 is running".
#
#   readme_e2e.sh SOURCE_DIR BUILD_DIR
#
# Exit 0 passed, 1 failed, 77 skipped (kubectl, curl or the example pods missing; under
# CI=true a failure).
set -u
SRC=$(cd "${1:?usage: readme_e2e.sh SOURCE_DIR BUILD_DIR}" && pwd)
BUILD=$(cd "${2:?usage: readme_e2e.sh SOURCE_DIR BUILD_DIR}" && pwd)
WHO=readme-e2e
. "$SRC/tests/e2e/sim_lib.sh"

command -v kubectl >/dev/null || sim_skip $WHO kubectl "put the real kubectl on PATH"
command -v curl >/dev/null || sim_skip $WHO curl "install the Debian package curl"
[ -s "$BUILD/apps/examples/hello.wasm" ] ||
	sim_skip $WHO hello.wasm "not built in $BUILD/apps/examples (clang and lld build apps/)"
[ -x "$BUILD/cmd/kube32-cli/kube32-cli" ] || sim_skip $WHO kube32-cli "not built (libyaml-dev)"

WORK=$(mktemp -d /tmp/kube32-readme.XXXXXX)
export HOME=$WORK/home
unset KUBECONFIG
mkdir -p "$HOME"
for d in scripts apps; do ln -s "$SRC/$d" "$WORK/$d"; done
ln -s "$BUILD" "$WORK/build"
cd "$WORK" || exit 1
RUN_PID=
RUN2_PID=
cleanup() {
	exec 7>&- 2>/dev/null
	for p in $RUN_PID $RUN2_PID; do kill -TERM "$p" 2>/dev/null; done
	# the simulators run.sh started (run.sh writes var/sim.pid)
	for f in "$WORK/var/sim.pid" "$WORK/two/var/sim.pid"; do
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	if [ "${KEEP:-}" != "1" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# ---- make run (run.sh), with a pipe for its stdin: the boards' console --------------------
mkfifo "$WORK/stdin"
(cd "$WORK" && exec scripts/run.sh build --port 0 --pod-port 0) <"$WORK/stdin" >"$WORK/run.out" 2>&1 &
RUN_PID=$!
exec 7>"$WORK/stdin" # keeps the console's input open (and unblocks the open above)
for _ in $(seq 600); do
	grep -q "^kube32 is running" "$WORK/run.out" && break
	kill -0 "$RUN_PID" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "^kube32 is running" "$WORK/run.out"; then
	echo "$WHO: FAIL: run.sh did not come up:" >&2
	cat "$WORK/run.out" >&2
	exit 1
fi
sim_pass "run.sh up"
API=$(sed -n 's/^kube32 is running: API server \(https:\/\/[0-9.]*:[0-9]*\).*/\1/p' "$WORK/run.out")
DEVKIT=$(sed -n 's/^  board devkit-1 (devkit): pod server http:\/\/\([0-9.:]*\)$/\1/p' "$WORK/run.out")
CARD=$(sed -n 's/^  board cardputer-1 (cardputer): pod server http:\/\/\([0-9.:]*\)$/\1/p' "$WORK/run.out")
API_PORT=${API##*:}
if [ -n "$API" ] && [ -n "$DEVKIT" ] && [ -n "$CARD" ] && [ "$API_PORT" != 6443 ] &&
	grep -q "server: $API" "$WORK/var/kubeconfig" &&
	grep -q "pod server 127.0.0.1:${CARD##*:}," "$WORK/var/sim.log"; then
	sim_pass "banner names the real endpoints (API $API, devkit-1 $DEVKIT, cardputer-1 $CARD)"
else
	sim_fail "banner endpoints" "API '$API' devkit '$DEVKIT' cardputer '$CARD'"
	sed 's/^/     | /' "$WORK/run.out" >&2
fi
grep -qF -- "--data 'K32_CMD:rfid place tag 5A3C910E' http://$CARD/console" "$WORK/run.out" &&
	sim_pass "banner's curl lines use the cardputer's real port" ||
	sim_fail "banner curl lines" "no curl line with http://$CARD/console"

# the banner's own lines work as printed (the token line, then a curl with it)
TOKEN_LINE=$(sed -n 's/^  \(TOKEN=.*\)$/\1/p' "$WORK/run.out")
CURL_LINE=$(grep -F "K32_CMD:hw set scale weight_g 250" "$WORK/run.out" | sed 's/^  //')
check "banner's curl line works as printed" "ok: scale weight_g = 250" \
	bash -c "$TOKEN_LINE; $CURL_LINE"

# the console on run.sh's stdin
echo "cardputer-1 K32_CMD:hw list" >&7
eventually "console on run.sh's stdin answers" "K32_END HW" 10 cat "$WORK/run.out"

# ---- the README names its ports and flags ------------------------------------------------
for w in 6443 7000 7001 "--port N" "--pod-port N" 'make run ARGS="'; do
	grep -qF -- "$w" "$SRC/README.md" || sim_fail "README names $w"
done
sim_pass "README names the ports 6443, 7000, 7001, --port, --pod-port and ARGS"

# ---- every ```sh line of the README and docs/controllers.md, as written --------------------
export KUBECONFIG= # the README's own export sets it
lines=0
for doc in README.md docs/controllers.md; do
	while IFS= read -r line; do
		[ -z "$line" ] && continue
		lines=$((lines + 1))
		# the ports of `make run` are this run's free ports
		cmd=${line//127.0.0.1:7001/$CARD}
		cmd=${cmd//127.0.0.1:7000/$DEVKIT}
		cmd=${cmd//127.0.0.1:6443/127.0.0.1:$API_PORT}
		# an HTTP error (401 without the token, 404) fails the line, as it would the user
		cmd=${cmd/#curl /curl --fail-with-body }
		if [[ $cmd == export\ * ]]; then
			eval "$cmd" # for the lines after it, as in the user's shell
			sim_pass "$doc: $line"
			continue
		fi
		OUT=$(timeout 90 bash -c "$cmd" 2>&1)
		rc=$?
		if [ $rc = 0 ]; then
			sim_pass "$doc: $line"
		else
			sim_fail "$doc: $line" "exit $rc"
			sed 's/^/     | /' <<<"$OUT" | tail -15 >&2
		fi
		echo "$OUT" >"$WORK/last.out"
	done < <(awk '/^```sh$/{on=1; next} /^```/{on=0} on && !/^#/' "$SRC/$doc")
done
[ "$lines" -ge 10 ] && sim_pass "$lines command lines found" ||
	sim_fail "command lines" "only $lines found in the sh blocks"
# what the README's lines did
eventually "README's hw set reached Device envpro's status" '^30\.5' 20 \
	kubectl get device envpro -o 'jsonpath={.status.readings.temperature_c}'
grep -q "K32_BOOT_END profile=cardputer pods=2" "$WORK/last.out" &&
	sim_pass "boot report ran its 2 pods" || sim_fail "boot report" "$(cat "$WORK/last.out")"

# ---- a second run.sh whose API port is taken fails loudly ---------------------------------
mkdir -p "$WORK/two"
for d in scripts apps build; do ln -s "$WORK/$d" "$WORK/two/$d"; done
(cd "$WORK/two" && exec scripts/run.sh build --port "$API_PORT" --pod-port 0) \
	</dev/null >"$WORK/run2.out" 2>&1 &
RUN2_PID=$!
for _ in $(seq 300); do
	kill -0 "$RUN2_PID" 2>/dev/null || break
	sleep 0.1
done
rc=0
wait "$RUN2_PID" || rc=$?
RUN2_PID=
if [ "$rc" != 0 ] && grep -q "run.sh: FAILED: kube32-sim exited" "$WORK/run2.out" &&
	grep -q -- "--port N picks another" "$WORK/run2.out" &&
	! grep -q "kube32 is running" "$WORK/run2.out"; then
	sim_pass "run.sh with a taken port fails (exit $rc) and names --port"
else
	sim_fail "run.sh with a taken port" "exit $rc"
	sed 's/^/     | /' "$WORK/run2.out" | tail -10 >&2
fi

# ---- Ctrl-C (SIGTERM) stops run.sh and its simulator ---------------------------------------
kill -TERM "$RUN_PID"
for _ in $(seq 100); do
	kill -0 "$RUN_PID" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$RUN_PID" 2>/dev/null; then
	sim_fail "run.sh stops on SIGTERM" "still running after 10 s"
else
	RUN_PID=
	if kill -0 "$(cat "$WORK/var/sim.pid")" 2>/dev/null; then
		sim_fail "run.sh stops its simulator" "kube32-sim still running"
	else
		sim_pass "run.sh and its simulator stop on SIGTERM"
	fi
fi
sim_summary $WHO "$WORK/var/sim.log"
