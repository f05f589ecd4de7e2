/*
 * console_fuzz_replay.c - runs each file named on the command line through the console fuzz
 * target once (ctest uses it on tests/fuzz/console/corpus). Fails when a file cannot be
 * read or none was given.
 */
#include <stdint.h>
#include <stdio.h>

#include "base/k32_alloc.h"
#include "platform/k32_platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	const struct k32_allocator *a = k32_default_allocator();
	int ran = 0;

	for (int i = 1; i < argc; i++) {
		uint8_t *data;
		size_t len;
		struct k32_err err;

		if (k32_plat()->file_read_all(argv[i], a, 1u << 20, &data, &len, &err) != K32_OK) {
			fprintf(stderr, "console_fuzz_replay: %s\n", err.msg);
			return 1;
		}
		LLVMFuzzerTestOneInput(data, len);
		k32_free(a, data, len + 1);
		ran++;
	}
	printf("console_fuzz_replay: %d seed(s) ran through the console\n", ran);
	return ran > 0 ? 0 : 1;
}
