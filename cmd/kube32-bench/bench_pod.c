/*
 * bench_pod.c - the pod section of `kube32-bench micro`: the same operations called from a
 * Wasm pod through the kx_* imports. Empty in builds without the Wasm runtime.
 */
#include "bench.h"

#include <stdio.h>

const struct brow bench_pod_rows[1];
const unsigned bench_pod_count = 0;

int bench_pod_setup(char *why, unsigned why_len)
{
	snprintf(why, why_len, "this build has no Wasm runtime linked into kube32-bench");
	return -1;
}
