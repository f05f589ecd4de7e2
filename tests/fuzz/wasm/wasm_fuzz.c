/*
 * wasm_fuzz.c - fuzz target for the Wasm runtime: decode, validate, compile, instantiate and
 * run every function of the module with zero arguments, under a gas budget, a 64 KiB memory
 * limit, small stacks and a heap that refuses to pass 4 MiB. Whatever the input, the runtime
 * must return a status (never crash, hang, leak or trip a sanitizer), and every byte it
 * allocated must be back when the module is freed.
 *
 * Built as a libFuzzer target with clang (-DK32_FUZZ=ON); wasm_fuzz_replay runs it over
 * the spec suite's binary modules under ctest.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/k32_alloc.h"
#include "wasm/wrt.h"

#define FUZZ_HEAP_LIMIT (4u << 20)
#define FUZZ_MAX_FUNCS	64 /* functions run per module, to bound the time per input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k32_heap heap;
	struct k32_allocator a;
	struct wrt_load_opts opts;
	struct wrt_limits lim;
	struct wrt_linker lk;
	struct wrt_module *mod = NULL;
	struct wrt_instance *inst = NULL;
	struct k32_err err;

	k32_heap_init(&heap, FUZZ_HEAP_LIMIT);
	a = k32_heap_allocator(&heap);
	wrt_load_opts_default(&opts);
	if (wrt_module_load(&a, data, size, &opts, &mod, &err) != K32_OK)
		goto out;
	wrt_linker_init(&lk);
	wrt_limits_default(&lim);
	lim.mem_bytes = 64 * 1024;
	lim.stack_bytes = 8 * 1024;
	lim.frames = 64;
	lim.table_elems = 256;
	lim.gas = 100000;
	lim.gas_enabled = true;
	lim.canonical_nan = true;
	k32_status_t st = wrt_instance_new(mod, &lk, &lim, &a, NULL, &inst, &err);

	if (st == K32_OK) {
		for (uint32_t f = 0; f < FUZZ_MAX_FUNCS; f++) {
			uint32_t np, nr;
			const uint8_t *types;
			uint64_t args[16] = {0};
			uint64_t res[16];

			if (wrt_func_type(inst, f, &np, &nr, &types) != K32_OK)
				break;
			if (np > 16 || nr > 16)
				continue;
			wrt_invoke(inst, f, args, np, res, nr, &err);
		}
	}
	if (inst)
		wrt_instance_free(inst);
out:
	wrt_module_free(mod);
	/* Everything the runtime took from the heap must be back. */
	if (heap.stats.cur_bytes != 0)
		abort();
	return 0;
}
