#!/usr/bin/env bash
# Prints the size of every kobj structure on a 32-bit target (ARMv7, whose int64 alignment
# matches the ESP32's Xtensa) and on the host, by compiling each kobj source with clang for
# that target and reading the sizeof constants out of the generated assembly. Needs only
# clang (no 32-bit libc): libc headers are replaced by two tiny stand-ins.
# Usage: src/kobj/kobj_layout.sh   (from the repository root)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/inc"
cat >"$tmp/inc/string.h" <<'H'
#include <stddef.h>
void *memcpy(void *, const void *, size_t);
void *memset(void *, int, size_t);
void *memmove(void *, const void *, size_t);
int strcmp(const char *, const char *);
H
cat >"$tmp/inc/inttypes.h" <<'H'
#include <stdint.h>
#define PRIu32 "u"
H
cat >"$tmp/inc/stdio.h" <<'H'
#include <stdarg.h>
#include <stddef.h>
int snprintf(char *, size_t, const char *, ...);
int vsnprintf(char *, size_t, const char *, va_list);
H
specs=(
	"channel:struct kobj_channel_pair:struct kobj_channel:struct kobj_msg:struct kobj_chunk"
	"event:struct kobj_event:struct kobj_eventpair"
	"socket:struct kobj_ring_pair:struct kobj_ring"
	"port:struct kobj_port:struct kobj_port_obs:struct kobj_port_entry"
	"timer:struct kobj_timer"
	"vmo:struct kobj_vmo"
	"core:struct kobj_object:struct kobj_slot:struct kobj_owner:struct kobj_wait_node:struct kobj_sleeper:struct kobj_account:struct kobj_node"
)
printf '%-28s %8s %8s\n' "structure" "32-bit" "host"
for spec in "${specs[@]}"; do
	IFS=: read -r -a parts <<<"$spec"
	f=${parts[0]}
	src="$tmp/sz_$f.c"
	echo "#include \"$root/src/kobj/kobj_$f.c\"" >"$src"
	for ((i = 1; i < ${#parts[@]}; i++)); do
		echo "const unsigned long kobj_size_$i = sizeof(${parts[$i]});" >>"$src"
	done
	a32=$(clang --target=armv7-none-eabi -ffreestanding -I "$tmp/inc" -I "$root/include" \
		-I "$root/src" -S -o - "$src")
	a64=$(clang -I "$root/include" -I "$root/src" -S -o - "$src")
	for ((i = 1; i < ${#parts[@]}; i++)); do
		s32=$(awk -v k="kobj_size_$i:" '$1==k{f=1;next} f&&/\.long/{print $2;exit}' <<<"$a32")
		s64=$(awk -v k="kobj_size_$i:" '$1==k{f=1;next} f&&/\.quad/{print $2;exit}' <<<"$a64")
		printf '%-28s %8s %8s\n' "${parts[$i]#struct }" "$s32" "$s64"
	done
done
