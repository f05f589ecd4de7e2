/*
 * k32_crc32.h - CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib computes it.
 * Used to frame WAL records and checked by the Wasm bench kernel. Table-driven, 1 KiB table
 * in read-only memory. Context: any; pure.
 */
#ifndef K32_CRC32_H
#define K32_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* CRC of data, continuing from crc (0 to start). crc32("123456789") == 0xCBF43926. */
uint32_t k32_crc32(uint32_t crc, const void *data, size_t len);

#endif /* K32_CRC32_H */
