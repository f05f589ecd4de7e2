/*
 * fuzz_replay.c - the one main() that replays a fuzz target's inputs under ctest, so
 * `make test` exercises every parser on its seeds without libFuzzer. Linked with one
 * target's LLVMFuzzerTestOneInput.
 *
 *   <target>_fuzz_replay PATH...
 *
 * Each PATH is a file (one input) or a directory (every regular file in it, in name order
 * is not guaranteed). A directory that does not exist is reported plainly and the run is
 * skipped (exit 77, ctest's SKIP_RETURN_CODE), except under CI=true, where it fails: CI
 * can never pass by skipping. A crash, abort or sanitizer report in the target fails the
 * test; the closing line is "N passed, 0 failed" (the plain form CI reads).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/k32_alloc.h"
#include "platform/k32_platform.h"

/* Inputs larger than this are not replayed (libFuzzer's default -max_len is far smaller). */
#define FUZZ_REPLAY_MAX_BYTES (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, int *count)
{
	const struct k32_allocator *a = k32_default_allocator();
	struct k32_err err;
	uint8_t *data;
	size_t len;

	if (k32_plat()->file_read_all(path, a, FUZZ_REPLAY_MAX_BYTES, &data, &len, &err) !=
	    K32_OK) {
		fprintf(stderr, "fuzz_replay: %s\n", err.msg);
		return 1;
	}
	LLVMFuzzerTestOneInput(data, len);
	k32_free(a, data, len + 1);
	(*count)++;
	return 0;
}

static int replay_dir(const char *dir_path, DIR *dir, int *count)
{
	char path[1024];
	struct dirent *de;
	struct stat st;

	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir_path, de->d_name) >=
		    sizeof(path))
			continue;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(path, count) != 0)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *ci = getenv("CI");
	bool under_ci = ci && strcmp(ci, "true") == 0;
	int count = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *dir;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: %s is missing%s\n", argv[0], argv[i],
				under_ci ? "; failing because CI=true" : "; skipping");
			return under_ci ? 1 : 77;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i], &count) != 0)
				return 1;
			continue;
		}
		dir = opendir(argv[i]);
		if (!dir || replay_dir(argv[i], dir, &count) != 0) {
			if (dir)
				closedir(dir);
			return 1;
		}
		closedir(dir);
	}
	printf("%s: %d input(s) replayed through the fuzz target\n", argv[0], count);
	printf("%d passed, 0 failed\n", count);
	return count > 0 ? 0 : 1;
}
