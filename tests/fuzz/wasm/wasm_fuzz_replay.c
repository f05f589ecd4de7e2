/*
 * wasm_fuzz_replay.c - runs the Wasm fuzz target once over every binary module (*.wasm) in
 * a directory: ctest points it at the spec suite (../shared/testdata/wasm-spec), the same
 * corpus the libFuzzer target is seeded with. Missing directory: says so and skips (exit
 * 77), or fails when CI=true so CI can never pass by skipping.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_alloc.h"
#include "platform/k32_platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	const struct k32_allocator *a = k32_default_allocator();
	const char *ci = getenv("CI");
	char path[1024];
	struct dirent *de;
	DIR *dir;
	int ran = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: wasm_fuzz_replay DIR\n");
		return 2;
	}
	dir = opendir(argv[1]);
	if (!dir) {
		fprintf(stderr,
			"wasm_fuzz_replay: corpus %s is missing (the Wasm spec testsuite from "
			"../shared/testdata)%s\n",
			argv[1],
			ci && !strcmp(ci, "true") ? "; failing because CI=true" : "; skipping");
		return ci && !strcmp(ci, "true") ? 1 : 77;
	}
	while ((de = readdir(dir)) != NULL) {
		size_t n = strlen(de->d_name);
		uint8_t *data;
		size_t len;
		struct k32_err err;

		if (n < 5 || strcmp(de->d_name + n - 5, ".wasm") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		if (k32_plat()->file_read_all(path, a, 16u << 20, &data, &len, &err) != K32_OK) {
			fprintf(stderr, "wasm_fuzz_replay: %s\n", err.msg);
			closedir(dir);
			return 1;
		}
		LLVMFuzzerTestOneInput(data, len);
		k32_free(a, data, len + 1);
		ran++;
	}
	closedir(dir);
	printf("wasm_fuzz_replay: %d module(s) decoded, instantiated and run within limits\n", ran);
	return ran > 0 ? 0 : 1;
}
