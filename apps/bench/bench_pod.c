/*
 * bench_pod.c - the bench pod: exports the kernels of src/bench/bench_kernels.c to the
 * runtime. run(k, n, r) runs kernel k with size n r times and returns its checksum;
 * hostcall(n) crosses into the host n times.
 */
#include "bench_kernels.h"

__attribute__((export_name("run"))) uint32_t run(uint32_t k, uint32_t n, uint32_t r)
{
	return bench_run(k, n, r);
}

__attribute__((export_name("hostcall"))) uint32_t hostcall(uint32_t n)
{
	return bench_hostcall(n);
}
