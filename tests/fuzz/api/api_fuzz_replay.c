/*
 * api_fuzz_replay.c - runs each file named on the command line through the API fuzz target
 * (tests/fuzz/api/api_fuzz.c), then a fixed-seed mutation pass over them (bit flips,
 * truncations, byte insertions: 20000 inputs per seed), so `make test` exercises the
 * selector, patch, protobuf and validation parsers beyond the seeds. Deterministic.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_alloc.h"
#include "platform/k32_platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t rng_state = 0x12345678u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

int main(int argc, char **argv)
{
	const struct k32_allocator *a = k32_default_allocator();
	static uint8_t buf[8192];
	static const uint8_t special[] = {'{', '}', '[', ']', '"', ',',	 ':',  '(',  ')',
					  '!', '=', '/', '~', '0', 0x00, 0x0a, 0x12, 0xff};
	int ran = 0, mutated = 0;
	for (int i = 1; i < argc; i++) {
		uint8_t *data;
		size_t len;
		struct k32_err err;
		if (k32_plat()->file_read_all(argv[i], a, 1u << 20, &data, &len, &err) != K32_OK) {
			fprintf(stderr, "api_fuzz_replay: %s\n", err.msg);
			return 1;
		}
		LLVMFuzzerTestOneInput(data, len);
		ran++;
		size_t base = len < sizeof(buf) - 16 ? len : sizeof(buf) - 16;
		for (int m = 0; m < 20000 && base > 1; m++) {
			size_t n = base;
			memcpy(buf, data, n);
			switch (rng() % 4) {
			case 0: /* flip a bit (never the parser selector byte) */
				buf[1 + rng() % (n - 1)] ^= (uint8_t)(1u << (rng() % 8));
				break;
			case 1: /* truncate */
				n = 1 + rng() % n;
				break;
			case 2: { /* insert a byte */
				size_t at = 1 + rng() % (n - 1);
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = (uint8_t)rng();
				n++;
				break;
			}
			default: /* overwrite with a structural character */
				buf[1 + rng() % (n - 1)] = special[rng() % sizeof(special)];
				break;
			}
			LLVMFuzzerTestOneInput(buf, n);
			mutated++;
		}
		k32_free(a, data, len + 1);
	}
	printf("api_fuzz_replay: %d seed(s) and %d mutations ran through the API parsers\n", ran,
	       mutated);
	return ran > 0 ? 0 : 1;
}
