/*
 * k32_crc32.c - table-driven CRC-32 (reflected 0xEDB88320). The table is computed at compile
 * time by a macro expansion so it lives in read-only memory (flash on the board) and needs
 * no initialisation call.
 */
#include "base/k32_crc32.h"

#define K32_CRC_POLY 0xEDB88320u
#define K32_CRC_STEP(c) (((c) & 1u) ? (K32_CRC_POLY ^ ((c) >> 1)) : ((c) >> 1))
#define K32_CRC_ENTRY(n)                                                                        \
	K32_CRC_STEP(K32_CRC_STEP(K32_CRC_STEP(K32_CRC_STEP(                                   \
		K32_CRC_STEP(K32_CRC_STEP(K32_CRC_STEP(K32_CRC_STEP((uint32_t)(n)))))))))
#define K32_CRC_ROW4(n) K32_CRC_ENTRY(n), K32_CRC_ENTRY(n + 1), K32_CRC_ENTRY(n + 2), K32_CRC_ENTRY(n + 3)
#define K32_CRC_ROW16(n) K32_CRC_ROW4(n), K32_CRC_ROW4(n + 4), K32_CRC_ROW4(n + 8), K32_CRC_ROW4(n + 12)
#define K32_CRC_ROW64(n) K32_CRC_ROW16(n), K32_CRC_ROW16(n + 16), K32_CRC_ROW16(n + 32), K32_CRC_ROW16(n + 48)

static const uint32_t crc_table[256] = {
	K32_CRC_ROW64(0),
	K32_CRC_ROW64(64),
	K32_CRC_ROW64(128),
	K32_CRC_ROW64(192),
};

uint32_t k32_crc32(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
	return ~crc;
}
