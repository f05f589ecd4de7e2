/*
 * fuzz_replay.c - the one main() that replays a fuzz target's inputs under ctest, so
 * `make test` exercises every parser on its seeds without libFuzzer. Linked with one
 * target's LLVMFuzzerTestOneInput.
 *
 *   <target>_fuzz_replay [--mutate N] [--keep K] PATH...
 *
 * Each PATH is a file (one input) or a directory (every regular file in it; the order is
 * the directory's). With --mutate N, each input is also run N more times with one
 * deterministic mutation each (a bit flip, a truncation, an inserted byte, or a structural
 * character written over a byte), never touching its first K bytes (targets that read a
 * selector byte first keep it), so `make test` reaches past the seeds without libFuzzer. A
 * directory that does not exist is reported plainly and the run is skipped (exit 77, ctest's
 * SKIP_RETURN_CODE), except under CI=true, where it fails: CI can never pass by skipping. A crash,
 * abort or sanitizer report in the target fails the test.
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

/* Bytes of a mutated input at most; longer inputs are mutated in their first part. */
#define FUZZ_REPLAY_MUTATE_BYTES 8192

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t mutate_count;
static uint32_t keep_bytes;
static uint32_t rng_state = 0x12345678u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Runs mutate_count single-mutation variants of data[0..len). */
static void replay_mutations(const uint8_t *data, size_t len, int *count)
{
	static const uint8_t special[] = {'{', '}', '[', ']', '"', ',',	 ':',  '(',  ')',
					  '!', '=', '/', '~', '0', 0x00, 0x0a, 0x12, 0xff};
	static uint8_t buf[FUZZ_REPLAY_MUTATE_BYTES + 1];
	size_t base = len < FUZZ_REPLAY_MUTATE_BYTES ? len : FUZZ_REPLAY_MUTATE_BYTES;

	if (base <= keep_bytes + 1)
		return;
	for (uint32_t m = 0; m < mutate_count; m++) {
		size_t n = base;
		size_t span = n - keep_bytes;
		size_t at = keep_bytes + rng() % span;

		memcpy(buf, data, n);
		switch (rng() % 4) {
		case 0:
			buf[at] ^= (uint8_t)(1u << (rng() % 8));
			break;
		case 1:
			n = keep_bytes + 1 + rng() % span;
			break;
		case 2:
			memmove(buf + at + 1, buf + at, n - at);
			buf[at] = (uint8_t)rng();
			n++;
			break;
		default:
			buf[at] = special[rng() % sizeof(special)];
			break;
		}
		LLVMFuzzerTestOneInput(buf, n);
		(*count)++;
	}
}

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
	(*count)++;
	replay_mutations(data, len, count);
	k32_free(a, data, len + 1);
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

	int first = 1;

	while (first + 1 < argc && argv[first][0] == '-') {
		if (!strcmp(argv[first], "--mutate"))
			mutate_count = (uint32_t)strtoul(argv[first + 1], NULL, 10);
		else if (!strcmp(argv[first], "--keep"))
			keep_bytes = (uint32_t)strtoul(argv[first + 1], NULL, 10);
		else
			break;
		first += 2;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [--mutate N] [--keep K] FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = first; i < argc; i++) {
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
	return count > 0 ? 0 : 1;
}
