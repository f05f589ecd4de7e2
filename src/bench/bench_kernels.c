/*
 * bench_kernels.c - the benchmark kernels (see bench_kernels.h). Freestanding C: no libc, no
 * heap, no floating-point library calls, so the same file builds natively and to wasm32.
 *
 * Every kernel works on its input in the static scratch area and returns a checksum that
 * depends on all of its work, so the compiler cannot drop any of it and native and pod runs
 * can be compared for equality.
 */
#include "bench_kernels.h"

#define SCRATCH_BYTES 8192u

/* Shared by all kernels; 8-byte aligned so it can hold 32-bit words. */
static union {
	uint8_t bytes[SCRATCH_BYTES];
	uint32_t words[SCRATCH_BYTES / 4];
} scratch;

/* A small linear congruential generator for reproducible inputs. */
static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state;
}

/* ---- fib ------------------------------------------------------------------------------- */

static uint32_t fib(uint32_t n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* ---- crc32 (bitwise, no table: the loop is the work) ----------------------------------- */

static uint32_t crc32_bitwise(const uint8_t *p, uint32_t len)
{
	uint32_t crc = 0xFFFFFFFFu;

	for (uint32_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static uint32_t kernel_crc32(uint32_t n)
{
	uint32_t seed = 1;

	for (uint32_t i = 0; i < n; i++)
		scratch.bytes[i] = (uint8_t)(lcg(&seed) >> 24);
	return crc32_bitwise(scratch.bytes, n);
}

/* ---- sieve ----------------------------------------------------------------------------- */

static uint32_t kernel_sieve(uint32_t n)
{
	uint8_t *composite = scratch.bytes;
	uint32_t count = 0;

	for (uint32_t i = 0; i < n; i++)
		composite[i] = 0;
	for (uint32_t i = 2; i < n; i++) {
		if (composite[i])
			continue;
		count++;
		for (uint32_t j = i * i; j < n; j += i)
			composite[j] = 1;
	}
	return count;
}

/* ---- heapsort -------------------------------------------------------------------------- */

static void sift_down(uint32_t *a, uint32_t start, uint32_t end)
{
	uint32_t root = start;

	while (2 * root + 1 < end) {
		uint32_t child = 2 * root + 1;

		if (child + 1 < end && a[child] < a[child + 1])
			child++;
		if (a[root] >= a[child])
			return;
		uint32_t t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static uint32_t kernel_sort(uint32_t n)
{
	uint32_t *a = scratch.words;
	uint32_t seed = 7;
	uint32_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		a[i] = lcg(&seed);
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (uint32_t end = n; end-- > 1;) {
		uint32_t t = a[0];
		a[0] = a[end];
		a[end] = t;
		sift_down(a, 0, end);
	}
	/* Position-weighted, so an unsorted result changes the checksum. */
	for (uint32_t i = 0; i < n; i++)
		sum += a[i] * (i + 1);
	return sum;
}

/* ---- mandel ---------------------------------------------------------------------------- */

static uint32_t kernel_mandel(uint32_t n)
{
	uint32_t total = 0;

	for (uint32_t y = 0; y < n; y++) {
		for (uint32_t x = 0; x < n; x++) {
			float cr = -2.0f + 2.5f * (float)x / (float)n;
			float ci = -1.25f + 2.5f * (float)y / (float)n;
			float zr = 0.0f, zi = 0.0f;
			uint32_t it = 0;

			while (it < 64 && zr * zr + zi * zi <= 4.0f) {
				float t = zr * zr - zi * zi + cr;
				zi = 2.0f * zr * zi + ci;
				zr = t;
				it++;
			}
			total += it;
		}
	}
	return total;
}

/* ---- json: format n records, then parse them back -------------------------------------- */

static uint32_t put_str(uint8_t *out, uint32_t at, const char *s)
{
	while (*s)
		out[at++] = (uint8_t)*s++;
	return at;
}

static uint32_t put_uint(uint8_t *out, uint32_t at, uint32_t v)
{
	char digits[10];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		out[at++] = (uint8_t)digits[--n];
	return at;
}

/* Parses `"key":` at p (after whitespace) and the unsigned number or string after it,
 * adding numbers and string lengths into *sum. Returns the new position. */
static uint32_t parse_member(const uint8_t *p, uint32_t at, uint32_t end, uint32_t *sum)
{
	while (at < end && p[at] != '"')
		at++;
	at++; /* opening quote of the key */
	while (at < end && p[at] != '"')
		*sum += p[at++];
	at += 2; /* closing quote and colon */
	if (p[at] == '"') {
		uint32_t len = 0;

		at++;
		while (at < end && p[at] != '"') {
			len++;
			at++;
		}
		*sum += len * 31u;
		return at + 1;
	}
	uint32_t v = 0;

	while (at < end && p[at] >= '0' && p[at] <= '9')
		v = v * 10 + (uint32_t)(p[at++] - '0');
	*sum += v;
	return at;
}

static uint32_t kernel_json(uint32_t n)
{
	uint8_t *out = scratch.bytes;
	uint32_t len = 0;
	uint32_t seed = 3;
	uint32_t sum = 0;

	out[len++] = '[';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			out[len++] = ',';
		len = put_str(out, len, "{\"id\":");
		len = put_uint(out, len, i);
		len = put_str(out, len, ",\"name\":\"sensor");
		len = put_uint(out, len, i % 10);
		len = put_str(out, len, "\",\"value\":");
		len = put_uint(out, len, lcg(&seed) % 100000u);
		out[len++] = '}';
	}
	out[len++] = ']';
	/* Parse: three members per record. */
	uint32_t at = 1;

	for (uint32_t i = 0; i < n; i++) {
		for (int m = 0; m < 3; m++)
			at = parse_member(out, at, len, &sum);
		at++; /* closing brace */
	}
	return sum ^ len;
}

/* ---- dispatch -------------------------------------------------------------------------- */

uint32_t bench_default_n(uint32_t kernel)
{
	static const uint32_t defaults[BENCH_KERNEL_COUNT] = {15, 4096, 4096, 1024, 32, 200};

	return kernel < BENCH_KERNEL_COUNT ? defaults[kernel] : 0;
}

static uint32_t clamp(uint32_t n, uint32_t max)
{
	return n > max ? max : n;
}

/* Always 0. Read once per repetition so the compiler cannot hoist a pure kernel (fib) out of
 * the repetition loop and run it once: natively and in the pod alike. */
static volatile uint32_t rep_zero;

uint32_t bench_run(uint32_t kernel, uint32_t n, uint32_t reps)
{
	uint32_t sum = 0xFFFFFFFFu;

	for (uint32_t r = 0; r < reps; r++) {
		n += rep_zero;
		switch (kernel) {
		case BENCH_FIB:
			sum = fib(clamp(n, 30));
			break;
		case BENCH_CRC32:
			sum = kernel_crc32(clamp(n, SCRATCH_BYTES));
			break;
		case BENCH_SIEVE:
			sum = kernel_sieve(clamp(n, SCRATCH_BYTES));
			break;
		case BENCH_SORT:
			sum = kernel_sort(clamp(n, SCRATCH_BYTES / 4));
			break;
		case BENCH_MANDEL:
			sum = kernel_mandel(clamp(n, 256));
			break;
		case BENCH_JSON:
			/* a record is at most 54 bytes */
			sum = kernel_json(clamp(n, (SCRATCH_BYTES - 2) / 55));
			break;
		default:
			return 0xFFFFFFFFu;
		}
	}
	return sum;
}

/* ---- names and arguments ----------------------------------------------------------- */

static const char *const kernel_names[BENCH_KERNEL_COUNT] = {"fib",  "crc32",  "sieve",
							     "sort", "mandel", "json"};
/* The argument of the console and the pod's /run: its default, and the bytes per unit (crc32
 * takes KiB, the others take n itself). */
static const uint32_t default_args[BENCH_KERNEL_COUNT] = {15, 4, 4096, 1024, 32, 200};

const char *bench_kernel_name(uint32_t kernel)
{
	return kernel < BENCH_KERNEL_COUNT ? kernel_names[kernel] : "?";
}

uint32_t bench_kernel_find(const char *name, uint32_t len)
{
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		const char *s = kernel_names[k];
		uint32_t i = 0;

		while (i < len && s[i] && s[i] == name[i])
			i++;
		if (i == len && !s[i])
			return k;
	}
	return BENCH_KERNEL_COUNT;
}

uint32_t bench_default_arg(uint32_t kernel)
{
	return kernel < BENCH_KERNEL_COUNT ? default_args[kernel] : 0;
}

uint32_t bench_arg_to_n(uint32_t kernel, uint32_t arg)
{
	if (kernel != BENCH_CRC32)
		return arg;
	return arg > SCRATCH_BYTES / 1024u ? SCRATCH_BYTES : arg * 1024u;
}

/* ---- host calls ------------------------------------------------------------------------ */

#ifdef __wasm__
__attribute__((import_module("kube32"), import_name("k32_time_us"))) int64_t
bench_host_time_us(void);

uint32_t bench_hostcall(uint32_t n)
{
	uint32_t ok = 0;
	int64_t prev = 0;

	for (uint32_t i = 0; i < n; i++) {
		int64_t t = bench_host_time_us();

		ok += t >= prev;
		prev = t;
	}
	return ok;
}
#else
int64_t (*bench_clock_fn)(void);

uint32_t bench_hostcall(uint32_t n)
{
	uint32_t ok = 0;
	int64_t prev = 0;

	for (uint32_t i = 0; i < n; i++) {
		int64_t t = bench_clock_fn();

		ok += t >= prev;
		prev = t;
	}
	return ok;
}
#endif
