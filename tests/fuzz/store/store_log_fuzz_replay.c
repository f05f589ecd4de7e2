/*
 * store_log_fuzz_replay.c - runs the log-record fuzz target on the files named on the
 * command line (the seed corpus), so `make test` exercises it without libFuzzer. Prints
 * "N passed, 0 failed"; a crash or abort in the target fails the test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int passed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long len;

		if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET) != 0) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return 1;
		}
		buf = malloc((size_t)len + 1);
		if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		passed++;
	}
	printf("%d passed, 0 failed\n", passed);
	return 0;
}
