#!/usr/bin/env bash
# Static analysis over src/ with cppcheck: fast (a few seconds), warnings are errors.
# Style-level findings are left to review; this catches real bugs (leaks, bad indices,
# uninitialised reads, null dereferences).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
mapfile -t files < <(git ls-files 'src/*.c' 2>/dev/null || find src -name '*.c')
[ ${#files[@]} -eq 0 ] && { echo "lint: no sources"; exit 0; }
cppcheck --quiet --error-exitcode=1 -j "$jobs" --std=c11 \
	--enable=warning,portability,performance \
	--inline-suppr --suppress=missingIncludeSystem \
	-I include -I src -D__GNUC__ -D_DEFAULT_SOURCE \
	"${files[@]}"
echo "lint: cppcheck clean on ${#files[@]} files"
