/*
 * mbedtls_baremetal.h - what `make mcu` changes in mbedTLS's default configuration for a board
 * without an OS (MBEDTLS_USER_CONFIG_FILE, read at the end of mbedTLS's own config): no BSD
 * sockets (the http layer moves the bytes through the platform's socket ops), no files (keys
 * and certificates arrive in memory), no OS timers (DTLS is not used), and no platform entropy
 * source (the TLS code seeds its DRBG from the platform's random op). kube32's code and the
 * cross-compiled mbedTLS are both built with it, so they agree on every structure.
 */
#undef MBEDTLS_NET_C
#undef MBEDTLS_TIMING_C
#undef MBEDTLS_FS_IO
#undef MBEDTLS_PSA_ITS_FILE_C
#undef MBEDTLS_PSA_CRYPTO_STORAGE_C
#define MBEDTLS_NO_PLATFORM_ENTROPY
/* Debian's build turns these on for its hosts; a board has no pthreads and no HAVEGE timer */
#undef MBEDTLS_HAVEGE_C
#undef MBEDTLS_THREADING_C
#undef MBEDTLS_THREADING_PTHREAD
