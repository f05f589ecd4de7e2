/*
 * store_log_fuzz.c - libFuzzer target for the store's log records (src/store/store_wal.c).
 *
 * Each input is treated as a whole log file: first walked record by record with
 * store_rec_parse (which must never read past the input nor report a size beyond it), then
 * replayed into a memory-only embedded store, which must end consistent (the valid prefix
 * is within the input) and free everything; then loaded as a snapshot image.
 *
 * The CRC would stop most mutations at the first check, so the target runs each input twice:
 * as given, and with every record frame's CRC recomputed, which lets mutations reach the
 * length, type, order and revision checks and the index updates of replay.
 *
 * Built as `store_log_fuzz` with -fsanitize=fuzzer when K32_FUZZ=ON (clang); always built as
 * `store_log_fuzz_replay`, which runs the seed corpus in corpus/ under ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <string.h>

#include "base/k32_crc32.h"
#include "base/k32_log.h"
#include "store/store_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

/* Rewrites the CRC of each frame that starts with the magic and fits in the buffer. */
static void fix_crcs(uint8_t *buf, size_t size)
{
	size_t off = 0;

	while (off + STORE_REC_HDR <= size && rd32(buf + off) == STORE_REC_MAGIC) {
		uint32_t plen = rd32(buf + off + 4);
		uint32_t crc;

		if (plen > size - off - STORE_REC_HDR)
			break;
		crc = k32_crc32(k32_crc32(0, buf + off + 4, 4), buf + off + STORE_REC_HDR, plen);
		for (int i = 0; i < 4; i++)
			buf[off + 8 + (size_t)i] = (uint8_t)(crc >> (8 * i));
		off += STORE_REC_HDR + plen;
	}
}

static void run_one(const uint8_t *data, size_t size)
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
		return;
	if (store_wal_replay(m, data, size, &good, &err) == K32_OK)
		check(good <= size && good <= off);
	store_mem_ops.close(m);

	/* the same bytes as a snapshot image: accepted whole or refused, never half-read */
	if (store_mem_open(&cfg, &m, &err) != K32_OK)
		return;
	if (store_wal_load_snapshot(m, data, size, &err) == K32_OK)
		check(size >= 2 * STORE_REC_OVERHEAD);
	store_mem_ops.close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	run_one(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fix_crcs(copy, size);
	run_one(copy, size);
	free(copy);
	return 0;
}
