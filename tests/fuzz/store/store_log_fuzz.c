/*
 * store_log_fuzz.c - libFuzzer target for the store's log records (src/store/store_wal.c).
 *
 * Each input is treated as a whole log file: first walked record by record with
 * store_rec_parse (which must never read past the input nor report a size beyond it), then
 * replayed into a memory-only embedded store, which must end consistent (its revision
 * counts the applied records; the valid prefix is within the input) and free everything.
 *
 * Built as `store_log_fuzz` with -fsanitize=fuzzer when K32_FUZZ=ON (clang); always built as
 * `store_log_fuzz_replay`, which runs the seed corpus in corpus/ under ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/k32_log.h"
#include "store/store_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct store_config cfg; /* memory only, default limits */
	struct store_mem *m;
	struct store_rec rec;
	struct k32_err err;
	size_t off = 0, used, good = 0;
	const char *fault;

	k32_log_set_stderr(false);
	while (off < size) {
		fault = NULL;
		if (store_rec_parse(data + off, size - off, &rec, &used, &fault) != K32_OK) {
			check(fault != NULL);
			break;
		}
		check(used >= STORE_REC_OVERHEAD && used <= size - off);
		check((const uint8_t *)rec.key + rec.key_len + rec.val_len == data + off + used);
		off += used;
	}

	if (store_mem_open(&cfg, &m, &err) != K32_OK)
		return 0;
	if (store_wal_replay(m, data, size, &good, &err) == K32_OK)
		check(good <= size && good <= off);
	store_mem_ops.close(m);
	return 0;
}
