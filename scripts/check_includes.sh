#!/usr/bin/env bash
# The include rules of the layering (README, "Layout"), checked over #include lines:
#   src/ctrl     the controllers reach the API only through src/kclient: no "store/..." and
#                no "api/..." include, except in test and benchmark harnesses (*_test.c,
#                *_bench.c), which build the API server they drive
#   src/hw       the node's hardware knows nothing of the API or the control plane: no
#                "api/...", "store/...", "ctrl/..." or "kclient/..." include
#   src/kclient  the interface and its HTTP side link no API server: only kclient_inproc.c
#                and the test include "api/..."; none includes "store/..." but the test
# Usage: scripts/check_includes.sh [ROOT]   (ROOT: the tree to check, default the repo)
#        scripts/check_includes.sh --self-test   (proves each rule fails on a violation)
set -euo pipefail

check() {
	local root=$1 bad=0 f
	# rule DIR PATTERN EXEMPT-REGEX(on the file name; "" for none) WHY
	rule() {
		local dir=$1 pat=$2 exempt=$3 why=$4
		[ -d "$root/$dir" ] || return 0
		while IFS= read -r hit; do
			f=${hit%%:*}
			if [ -n "$exempt" ] && [[ $(basename "$f") =~ $exempt ]]; then
				continue
			fi
			echo "include rule: ${hit#"$root"/}: $why" >&2
			bad=1
		done < <(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"($pat)/" \
			--include='*.c' --include='*.h' "$root/$dir" || true)
	}
	rule src/ctrl 'store|api' '_(test|bench)\.c$' \
		'controllers use src/kclient, not the store or the API server (docs/controllers.md)'
	rule src/hw 'api|store|ctrl|kclient' '' \
		'src/hw is the node side: no API, store or controller include (the Device controller is src/ctrl/ctrl_dev.c)'
	rule src/kclient 'api' '^(kclient_inproc\.c|kclient_test\.c)$' \
		'only the in-process client (kclient_inproc.c) may include the API server'
	rule src/kclient 'store' '^kclient_test\.c$' 'the client never sees the store'
	return $bad
}

if [ "${1:-}" = "--self-test" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/src/ctrl" "$tmp/src/hw" "$tmp/src/kclient"
	echo '#include "store/store.h"' >"$tmp/src/ctrl/ctrl_test.c" # allowed: a harness
	echo '#include "kclient/kclient.h"' >"$tmp/src/ctrl/ctrl.c"
	check "$tmp" 2>/dev/null || { echo "self-test: a clean tree was refused" >&2; exit 1; }
	for v in 'src/ctrl/ctrl_x.c:store/store.h' 'src/ctrl/ctrl.h:api/api.h' \
		'src/hw/hw_x.c:api/api.h' 'src/hw/hw_x_test.c:store/store.h' \
		'src/kclient/kclient.c:api/api.h'; do
		f=$tmp/${v%%:*}
		printf '  #  include "%s"\n' "${v#*:}" >"$f"
		if check "$tmp" 2>/dev/null; then
			echo "self-test: ${v%%:*} including ${v#*:} was not caught" >&2
			exit 1
		fi
		rm "$f"
	done
	echo "check_includes: self-test passed (5 violations caught, harness allowed)"
	exit 0
fi

root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
if check "$root"; then
	echo "check_includes: include rules hold (src/ctrl, src/hw, src/kclient)"
else
	echo "check_includes: include rules broken (see above; README, Layout)" >&2
	exit 1
fi
