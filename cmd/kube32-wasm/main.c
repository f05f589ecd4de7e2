/*
 * kube32-wasm - load, instantiate and run a Wasm module with kube32's runtime.
 *
 *   kube32-wasm run FILE --invoke NAME [ARGS...] [--memory-limit BYTES] [--gas N | --no-gas]
 *               [--stack BYTES] [--frames N] [--count-ops] [--repeat N] [--quiet]
 *
 * ARGS are typed by the function's signature: integers in decimal or 0x hex, floats as C
 * float literals (nan, inf accepted). Prints the results, or the trap message, then the
 * instance statistics (gas, code size against Wasm size, memory, stacks) and, with
 * --count-ops, executed ops by type. Imports are resolved against a small "env" host table
 * (print_i32, print_i64, print_f32, print_f64: each prints its argument).
 * Exit status: 0 ok, 1 trap, 2 usage or load error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/k32_alloc.h"
#include "wasm/wrt.h"

static k32_status_t print_i32(struct k32_hostcall *c)
{
	printf("print_i32: %" PRId32 "\n", (int32_t)(uint32_t)c->args[0]);
	return K32_OK;
}

static k32_status_t print_i64(struct k32_hostcall *c)
{
	printf("print_i64: %" PRId64 "\n", (int64_t)c->args[0]);
	return K32_OK;
}

static k32_status_t print_f32(struct k32_hostcall *c)
{
	float f;
	uint32_t b = (uint32_t)c->args[0];
	memcpy(&f, &b, 4);
	printf("print_f32: %g\n", (double)f);
	return K32_OK;
}

static k32_status_t print_f64(struct k32_hostcall *c)
{
	double f;
	memcpy(&f, &c->args[0], 8);
	printf("print_f64: %g\n", f);
	return K32_OK;
}

static const struct k32_hostfn_def env_host[] = {
    {"env", "print_i32", "i:", print_i32, NULL},
    {"env", "print_i64", "I:", print_i64, NULL},
    {"env", "print_f32", "f:", print_f32, NULL},
    {"env", "print_f64", "F:", print_f64, NULL},
};

static int usage(void)
{
	fprintf(stderr,
		"usage: kube32-wasm run FILE --invoke NAME [ARGS...] [--memory-limit BYTES]\n"
		"         [--gas N | --no-gas] [--stack BYTES] [--frames N] [--count-ops]\n"
		"         [--repeat N] [--quiet]\n");
	return 2;
}

static double now_us(void)
{
	struct timespec ts;
	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static bool parse_arg(const char *s, uint8_t type, uint64_t *out)
{
	char *end;
	switch (type) {
	case WRT_I32:
	case WRT_I64: {
		if (s[0] == '-')
			*out = (uint64_t)strtoll(s, &end, 0);
		else
			*out = strtoull(s, &end, 0);
		if (type == WRT_I32)
			*out = (uint32_t)*out;
		return *end == 0;
	}
	case WRT_F32: {
		float f = strtof(s, &end);
		uint32_t b;
		memcpy(&b, &f, 4);
		*out = b;
		return *end == 0;
	}
	case WRT_F64: {
		double f = strtod(s, &end);
		memcpy(out, &f, 8);
		return *end == 0;
	}
	default:
		return false;
	}
}

static void print_val(uint8_t type, uint64_t v)
{
	switch (type) {
	case WRT_I32:
		printf("i32:%" PRId32, (int32_t)(uint32_t)v);
		break;
	case WRT_I64:
		printf("i64:%" PRId64, (int64_t)v);
		break;
	case WRT_F32: {
		float f;
		uint32_t b = (uint32_t)v;
		memcpy(&f, &b, 4);
		printf("f32:%.9g", (double)f);
		break;
	}
	case WRT_F64: {
		double f;
		memcpy(&f, &v, 8);
		printf("f64:%.17g", f);
		break;
	}
	default:
		printf("ref:0x%" PRIx64, v);
	}
}

static uint8_t *read_file(const char *path, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*out_len = n > 0 ? (size_t)n : 0;
	return b;
}

struct op_row {
	uint32_t op;
	uint64_t n;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct op_row *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static void print_ops(const struct wrt_instance *inst)
{
	const uint64_t *c = wrt_op_counts(inst);
	uint32_t n = wrt_op_count();
	struct op_row rows[512];
	uint32_t k = 0;
	uint64_t total = 0;
	for (uint32_t i = 0; i < n && k < 512; i++) {
		if (c[i]) {
			rows[k].op = i;
			rows[k].n = c[i];
			total += c[i];
			k++;
		}
	}
	qsort(rows, k, sizeof(rows[0]), cmp_rows);
	printf("ops executed: %" PRIu64 "\n", total);
	for (uint32_t i = 0; i < k; i++)
		printf("  %-22s %12" PRIu64 "  %5.1f%%\n", wrt_op_name(rows[i].op), rows[i].n,
		       100.0 * (double)rows[i].n / (double)total);
}

int main(int argc, char **argv)
{
	const char *file = NULL, *name = NULL;
	const char *args[64];
	uint32_t nargs = 0;
	struct wrt_limits lim;
	unsigned repeat = 1;
	bool quiet = false;
	wrt_limits_default(&lim);
	lim.mem_bytes = 16u << 20;
	lim.stack_bytes = 64u << 10;
	lim.frames = 1024;
	if (argc < 3 || strcmp(argv[1], "run"))
		return usage();
	file = argv[2];
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (!strcmp(a, "--invoke") && more) {
			name = argv[++i];
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) && nargs < 64)
				args[nargs++] = argv[++i];
		} else if (!strcmp(a, "--memory-limit") && more) {
			lim.mem_bytes = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--gas") && more) {
			lim.gas = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--no-gas")) {
			lim.gas_enabled = false;
		} else if (!strcmp(a, "--stack") && more) {
			lim.stack_bytes = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--frames") && more) {
			lim.frames = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--count-ops")) {
			lim.count_ops = true;
		} else if (!strcmp(a, "--repeat") && more) {
			repeat = (unsigned)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--quiet")) {
			quiet = true;
		} else {
			return usage();
		}
	}
	if (!name)
		return usage();

	size_t len;
	uint8_t *bytes = read_file(file, &len);
	if (!bytes) {
		fprintf(stderr, "kube32-wasm: cannot read %s\n", file);
		return 2;
	}
	struct k32_heap heap;
	k32_heap_init(&heap, 0);
	struct k32_allocator alloc = k32_heap_allocator(&heap);
	struct k32_err err = {0};
	struct wrt_module *mod = NULL;
	struct wrt_instance *inst = NULL;
	struct wrt_linker lk;
	struct wrt_load_opts lo;
	int rc = 2;
	wrt_load_opts_default(&lo);
	lo.gas_metering = lim.gas_enabled;
	double t0 = now_us();
	if (wrt_module_load(&alloc, bytes, len, &lo, &mod, &err)) {
		fprintf(stderr, "kube32-wasm: load %s: %s\n", file, err.msg);
		goto out;
	}
	double t1 = now_us();
	wrt_linker_init(&lk);
	wrt_linker_add_host(&lk, env_host, sizeof(env_host) / sizeof(env_host[0]), &err);
	k32_status_t st = wrt_instance_new(mod, &lk, &lim, &alloc, NULL, &inst, &err);
	double t2 = now_us();
	if (st) {
		fprintf(stderr, "kube32-wasm: instantiate: %s\n", err.msg);
		rc = st == K32_ERR_TRAP ? 1 : 2;
		goto out;
	}
	uint32_t fn, np, nr;
	const uint8_t *types;
	if (wrt_export_func(inst, name, &fn, &err)) {
		fprintf(stderr, "kube32-wasm: %s\n", err.msg);
		goto out;
	}
	wrt_func_type(inst, fn, &np, &nr, &types);
	if (np != nargs || nr > 64) {
		fprintf(stderr, "kube32-wasm: %s takes %u arguments, %u given\n", name, np, nargs);
		goto out;
	}
	uint64_t av[64], rv[64];
	for (uint32_t i = 0; i < nargs; i++) {
		if (!parse_arg(args[i], types[i], &av[i])) {
			fprintf(stderr,
				"kube32-wasm: argument %u '%s' does not parse as its type\n", i + 1,
				args[i]);
			goto out;
		}
	}
	double best = 1e300;
	rc = 0;
	for (unsigned r = 0; r < repeat; r++) {
		double a = now_us();
		st = wrt_invoke(inst, fn, av, nargs, rv, nr, &err);
		double b = now_us();
		if (b - a < best)
			best = b - a;
		if (st) {
			printf("trap: %s\n", err.msg);
			rc = 1;
			break;
		}
	}
	if (rc == 0) {
		for (uint32_t i = 0; i < nr; i++) {
			print_val(types[np + i], rv[i]);
			printf(i + 1 < nr ? " " : "\n");
		}
	}
	if (!quiet) {
		struct wrt_stats s;
		size_t code, wasm;
		wrt_instance_stats(inst, &s);
		wrt_module_code_size(mod, &code, &wasm);
		printf("stats: load %.1f us, instantiate %.1f us, run %.1f us (best of %u)\n",
		       t1 - t0, t2 - t1, best, repeat);
		printf("stats: gas used %" PRIu64 "%s, max call depth %u\n", s.gas_used,
		       lim.gas_enabled ? "" : " (metering off)", s.max_depth);
		printf(
		    "stats: compiled code %zu bytes for %zu bytes of Wasm code (%.2f bytes/byte)\n",
		    code, wasm, wasm ? (double)code / (double)wasm : 0.0);
		printf("stats: module %zu, linear memory %zu, stacks %zu, tables %zu, runtime %zu "
		       "bytes\n",
		       s.module_bytes, s.memory_bytes, s.stack_bytes, s.table_bytes,
		       s.runtime_bytes);
		if (lim.count_ops)
			print_ops(inst);
	}
out:
	wrt_instance_free(inst);
	wrt_module_free(mod);
	free(bytes);
	return rc;
}
