/*
 * http_tls.c - TLS for the HTTP server and client, over mbedTLS 2.28 (Debian 12).
 *
 * Certificates: on first start <data_dir>/pki/ gets a self-signed CA (ECDSA P-256,
 * "CN=kube32-ca", basicConstraints CA, keyCertSign) and a serving certificate signed by it
 * (digitalSignature, extKeyUsage serverAuth, subjectAltName: DNS localhost, IP 127.0.0.1 and
 * every configured name; names that parse as dotted IPv4 go in as IP addresses, others as
 * DNS names). server.names records the SAN list a serving certificate was issued for; on
 * later starts the files are loaded and reused, and the serving certificate alone is
 * re-issued (same CA) when that list changed or it expired. mbedTLS 2.28 cannot write
 * subjectAltName itself, so the extension is built here as DER.
 *
 * Randomness comes from the platform (k32_plat()->random) through a CTR-DRBG, so nothing
 * here touches the OS. Socket I/O goes through the platform ops in mbedTLS's BIO callbacks.
 *
 * Private keys are written with file_write_atomic, whose file mode is the platform's
 * default (the posix port creates 0600 or 0644 depending on its umask; see the report).
 *
 * Client verification: the certificate chain must lead to the configured CA. The host name
 * checked is server_name, or the host itself; mbedTLS 2.28 matches only DNS names, so for an
 * IPv4 literal host "localhost" (present in every serving certificate made here) is checked
 * instead.
 *
 * Context: a server TLS config is used by its loop task only; a client by its owner.
 */
#include "http/http_int.h"

#include <stdio.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

/* mbedTLS 2.28 (Debian, tested here) and 3.x (ESP-IDF 5): ssl_internal.h is 2.x only (the
 * parking below, 2.x only too, needs it), and 3.x's mbedtls_pk_parse_key takes an RNG. */
#if MBEDTLS_VERSION_MAJOR < 3
#include <mbedtls/ssl_internal.h>
#endif

#define PEM_MAX	    (16 * 1024) /* a certificate or key file we read or write */
#define CA_SUBJECT  "CN=kube32-ca,O=kube32"
#define SRV_SUBJECT "CN=kube32-apiserver,O=kube32"
#define SAN_DER_MAX 1024
#define VALID_YEARS 10

/*
 * Parking (see http_tls_park) rewires fields of mbedtls_ssl_context, which are public in
 * mbedTLS 2.x only, and assumes fixed-size record buffers; elsewhere it is compiled out and
 * http_tls_park always says no (ESP-IDF's mbedTLS frees idle buffers by itself with
 * CONFIG_MBEDTLS_DYNAMIC_BUFFER).
 */
#if MBEDTLS_VERSION_MAJOR == 2 && MBEDTLS_VERSION_MINOR >= 16 &&                                   \
    !defined(MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH) && !defined(MBEDTLS_SSL_DTLS_CONNECTION_ID) &&    \
    !defined(MBEDTLS_ZLIB_SUPPORT)
#define HTTP_TLS_CAN_PARK 1
#else
#define HTTP_TLS_CAN_PARK 0
#endif
#define HTTP_TLS_PARK_PREFIX                                                                       \
	64 /* bytes before the message kept per buffer (counter 8 +                                \
	      header 5 + explicit IV <= 16) */

struct http_tls_server {
	mbedtls_ctr_drbg_context drbg;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt chain; /* serving certificate, then the CA */
	mbedtls_pk_context key; /* serving key */
	const struct k32_allocator *alloc;
};

struct http_tls_client {
	mbedtls_ctr_drbg_context drbg;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca;
	const struct k32_allocator *alloc;
};

/* Offsets of the record-layer pointers into one record buffer, and the bytes before the
 * message (read counter, header, explicit IV) kept while the buffer is released. */
struct http_tls_park {
	uint16_t ctr, hdr, len, iv, msg;
	uint8_t prefix[HTTP_TLS_PARK_PREFIX];
};

struct http_tls_conn {
	mbedtls_ssl_context ssl;
	k32_sock_t sock;
	const struct k32_allocator *alloc;
	bool parked; /* record buffers released (http_tls_park) */
	struct http_tls_park pin, pout;
};

static const char *alpn_protos[] = {"http/1.1", NULL};

/*
 * The server's suites in its order of preference (mbedTLS picks the first the client also
 * offers). The serving key is ECDSA, so only ECDHE-ECDSA suites apply. With
 * K32_HTTP_TLS_PREFER_CHACHA ChaCha20-Poly1305 comes first: in Debian's mbedTLS 2.28 it
 * encrypts ~308 MB/s against ~240 MB/s for AES-GCM on this machine (GHASH is not
 * accelerated there), and a 100-pod list is 64 KiB; a board with an AES engine (ESP32)
 * sets it to 0. AEAD only, then CBC-SHA256/384 for old clients.
 */
static const int server_suites[] = {
#if K32_HTTP_TLS_PREFER_CHACHA
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
#endif
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
#if !K32_HTTP_TLS_PREFER_CHACHA
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
#endif
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384,
    0,
};

/*
 * ECDHE groups in order of preference, both sides. Debian's mbedTLS 2.28 defaults to every
 * curve it has, largest first, so two kube32 ends (a board and its API server) agreed on
 * secp521r1: ecp_mod_p521 led the API server's profile while 1,000 simulated boards
 * connected (issue 15). x25519 and secp256r1 first, as mbedTLS 3 orders them; the larger
 * curves stay for peers that offer nothing else.
 */
static const mbedtls_ecp_group_id tls_curves[] = {
#if defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
    MBEDTLS_ECP_DP_CURVE25519,
#endif
    MBEDTLS_ECP_DP_SECP256R1,
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
    MBEDTLS_ECP_DP_SECP384R1,
#endif
#if defined(MBEDTLS_ECP_DP_SECP521R1_ENABLED)
    MBEDTLS_ECP_DP_SECP521R1,
#endif
    MBEDTLS_ECP_DP_NONE,
};

static int entropy_fn(void *ctx, unsigned char *buf, size_t len)
{
	(void)ctx;
	return k32_plat()->random(buf, len) == K32_OK ? 0
						      : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

static k32_status_t tls_fail(struct k32_err *err, k32_status_t st, int ret, const char *what)
{
	char buf[96];

	mbedtls_strerror(ret, buf, sizeof(buf));
	return k32_err_set(err, st, HTTP_MOD, "TLS: %s failed: -0x%04x %s", what, (unsigned)-ret,
			   buf);
}

static k32_status_t drbg_seed(mbedtls_ctr_drbg_context *drbg, struct k32_err *err)
{
	static const unsigned char pers[] = "kube32-http";
	int ret;

	mbedtls_ctr_drbg_init(drbg);
	ret = mbedtls_ctr_drbg_seed(drbg, entropy_fn, NULL, pers, sizeof(pers) - 1);
	if (ret != 0)
		return tls_fail(err, K32_ERR_IO, ret, "seeding the random generator");
	return K32_OK;
}

/* ---- certificate material --------------------------------------------------------------- */

/* Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm). */
static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	int64_t era, yy;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	yy = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yy + (*m <= 2));
}

/* "YYYYMMDDhhmmss" for a UTC time in seconds. */
static void x509_time(uint64_t t, char out[32])
{
	int y;
	unsigned mo, d;
	uint64_t s = t % 86400;

	civil_from_days((int64_t)(t / 86400), &y, &mo, &d);
	snprintf(out, 32, "%04d%02u%02u%02u%02u%02u", y, mo, d, (unsigned)(s / 3600),
		 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
}

/* Parses dotted IPv4 into 4 bytes. */
static bool parse_ipv4(const char *s, uint8_t out[4])
{
	for (int i = 0; i < 4; i++) {
		unsigned v = 0;
		int digits = 0;

		while (*s >= '0' && *s <= '9' && digits < 4) {
			v = v * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3 || v > 255)
			return false;
		out[i] = (uint8_t)v;
		if (i < 3 && *s++ != '.')
			return false;
	}
	return *s == 0;
}

/* Appends a DER length. */
static size_t der_len(uint8_t *p, size_t len)
{
	if (len < 128) {
		p[0] = (uint8_t)len;
		return 1;
	}
	if (len < 256) {
		p[0] = 0x81;
		p[1] = (uint8_t)len;
		return 2;
	}
	p[0] = 0x82;
	p[1] = (uint8_t)(len >> 8);
	p[2] = (uint8_t)len;
	return 3;
}

/* SubjectAltName value: SEQUENCE of [2] dNSName / [7] iPAddress. */
static k32_status_t build_san(const char *const *names, size_t count, uint8_t *out, size_t *out_len,
			      struct k32_err *err)
{
	uint8_t body[SAN_DER_MAX] = {0};
	size_t n = 0, hdr;

	for (size_t i = 0; i < count; i++) {
		uint8_t ip[4];
		size_t len = strlen(names[i]);

		if (len == 0 || len > 253 || n + len + 4 > sizeof(body))
			return k32_err_set(err, K32_ERR_OUT_OF_RANGE, HTTP_MOD,
					   "TLS name \"%s\" empty or too long (SAN list max %d "
					   "bytes); use shorter names",
					   names[i], SAN_DER_MAX);
		if (parse_ipv4(names[i], ip)) {
			body[n++] = 0x87;
			body[n++] = 4;
			memcpy(body + n, ip, 4);
			n += 4;
		} else {
			body[n++] = 0x82;
			n += der_len(body + n, len);
			memcpy(body + n, names[i], len);
			n += len;
		}
	}
	out[0] = 0x30;
	hdr = 1 + der_len(out + 1, n);
	memcpy(out + hdr, body, n);
	*out_len = hdr + n;
	return K32_OK;
}

static k32_status_t gen_key(mbedtls_pk_context *pk, mbedtls_ctr_drbg_context *drbg,
			    struct k32_err *err)
{
	int ret = mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));

	if (ret == 0)
		ret = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(*pk),
					  mbedtls_ctr_drbg_random, drbg);
	if (ret != 0)
		return tls_fail(err, K32_ERR_INTERNAL, ret, "generating an ECDSA P-256 key");
	return K32_OK;
}

/* The PEM text of a key or certificate: PEM_MAX bytes from the heap for the moment it is
 * written (a board's task stack is 16 KiB at most; first start only, not a hot path). */
static unsigned char *pem_buf(struct k32_err *err)
{
	unsigned char *pem = k32_alloc(k32_default_allocator(), PEM_MAX);
	if (!pem)
		k32_err_set(err, K32_ERR_NO_MEMORY, "tls",
			    "no %d bytes of heap to encode a key or certificate (PEM_MAX)",
			    PEM_MAX);
	return pem;
}

static k32_status_t write_key(const char *path, mbedtls_pk_context *pk, struct k32_err *err)
{
	unsigned char *pem = pem_buf(err);
	if (!pem)
		return K32_ERR_NO_MEMORY;
	int ret = mbedtls_pk_write_key_pem(pk, pem, PEM_MAX);
	k32_status_t st = ret != 0
			      ? tls_fail(err, K32_ERR_INTERNAL, ret, "encoding a private key")
			      : k32_plat()->file_write_atomic(path, pem, strlen((char *)pem), err);
	mbedtls_platform_zeroize(pem, PEM_MAX); /* a private key */
	k32_free(k32_default_allocator(), pem, PEM_MAX);
	return st;
}

/* Issues a certificate for subject_key signed by issuer_key; writes PEM to path. */
static k32_status_t issue(const char *path, bool is_ca, mbedtls_pk_context *subject_key,
			  mbedtls_pk_context *issuer_key, const char *const *names,
			  size_t name_count, mbedtls_ctr_drbg_context *drbg, struct k32_err *err)
{
	static const uint8_t eku_server[] = {0x30, 0x0a, 0x06, 0x08, 0x2b, 0x06,
					     0x01, 0x05, 0x05, 0x07, 0x03, 0x01};
	mbedtls_x509write_cert crt;
	mbedtls_mpi serial;
	unsigned char *pem = pem_buf(err);
	unsigned char rnd[16];
	uint8_t san[SAN_DER_MAX + 8];
	size_t san_len = 0;
	char from[32], to[32];
	uint64_t now = k32_plat()->wall_s();
	k32_status_t st = K32_OK;
	int ret;

	if (!pem)
		return K32_ERR_NO_MEMORY;
	mbedtls_x509write_crt_init(&crt);
	mbedtls_mpi_init(&serial);
	x509_time(now - 86400, from);
	x509_time(now + (uint64_t)VALID_YEARS * 365 * 86400, to);
	ret = mbedtls_ctr_drbg_random(drbg, rnd, sizeof(rnd));
	rnd[0] &= 0x7f;
	rnd[0] |= 0x01;
	if (ret == 0)
		ret = mbedtls_mpi_read_binary(&serial, rnd, sizeof(rnd));
	mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
	mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
	mbedtls_x509write_crt_set_subject_key(&crt, subject_key);
	mbedtls_x509write_crt_set_issuer_key(&crt, issuer_key);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_serial(&crt, &serial);
	if (ret == 0)
		ret =
		    mbedtls_x509write_crt_set_subject_name(&crt, is_ca ? CA_SUBJECT : SRV_SUBJECT);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_issuer_name(&crt, CA_SUBJECT);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_validity(&crt, from, to);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_basic_constraints(&crt, is_ca ? 1 : 0,
								  is_ca ? 0 : -1);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_subject_key_identifier(&crt);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_authority_key_identifier(&crt);
	if (ret == 0)
		ret = mbedtls_x509write_crt_set_key_usage(
		    &crt, is_ca ? (MBEDTLS_X509_KU_KEY_CERT_SIGN | MBEDTLS_X509_KU_CRL_SIGN)
				: MBEDTLS_X509_KU_DIGITAL_SIGNATURE);
	if (ret == 0 && !is_ca) {
		st = build_san(names, name_count, san, &san_len, err);
		if (st != K32_OK)
			goto out;
		ret = mbedtls_x509write_crt_set_extension(
		    &crt, MBEDTLS_OID_SUBJECT_ALT_NAME,
		    MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME), 0, san, san_len);
		if (ret == 0)
			ret = mbedtls_x509write_crt_set_extension(
			    &crt, MBEDTLS_OID_EXTENDED_KEY_USAGE,
			    MBEDTLS_OID_SIZE(MBEDTLS_OID_EXTENDED_KEY_USAGE), 0, eku_server,
			    sizeof(eku_server));
	}
	if (ret == 0)
		ret = mbedtls_x509write_crt_pem(&crt, pem, PEM_MAX, mbedtls_ctr_drbg_random, drbg);
	if (ret != 0) {
		st = tls_fail(err, K32_ERR_INTERNAL, ret, "writing a certificate");
		goto out;
	}
	st = k32_plat()->file_write_atomic(path, pem, strlen((char *)pem), err);
out:
	mbedtls_mpi_free(&serial);
	mbedtls_x509write_crt_free(&crt);
	k32_free(k32_default_allocator(), pem, PEM_MAX);
	return st;
}

static k32_status_t read_file(const char *path, const struct k32_allocator *alloc, uint8_t **out,
			      size_t *out_len, struct k32_err *err)
{
	return k32_plat()->file_read_all(path, alloc, PEM_MAX, out, out_len, err);
}

static k32_status_t load_key(const char *path, mbedtls_pk_context *pk,
			     const struct k32_allocator *alloc, struct k32_err *err)
{
	uint8_t *data;
	size_t len;
	k32_status_t st = read_file(path, alloc, &data, &len, err);
	int ret;

	if (st != K32_OK)
		return st;
#if MBEDTLS_VERSION_MAJOR >= 3
	ret = mbedtls_pk_parse_key(pk, data, len + 1, NULL, 0, entropy_fn, NULL);
#else
	ret = mbedtls_pk_parse_key(pk, data, len + 1, NULL, 0);
#endif
	k32_free(alloc, data, len + 1);
	if (ret != 0) {
		tls_fail(err, K32_ERR_CORRUPT, ret, "parsing a private key");
		return k32_err_set(
		    err, K32_ERR_CORRUPT, HTTP_MOD,
		    "TLS: private key %s does not parse; remove the pki directory to regenerate",
		    path);
	}
	return K32_OK;
}

static k32_status_t load_crt(const char *path, mbedtls_x509_crt *crt,
			     const struct k32_allocator *alloc, struct k32_err *err)
{
	uint8_t *data;
	size_t len;
	k32_status_t st = read_file(path, alloc, &data, &len, err);
	int ret;

	if (st != K32_OK)
		return st;
	ret = mbedtls_x509_crt_parse(crt, data, len + 1);
	k32_free(alloc, data, len + 1);
	if (ret != 0)
		return k32_err_set(err, K32_ERR_CORRUPT, HTTP_MOD,
				   "TLS: certificate %s does not parse (-0x%04x); remove the pki "
				   "directory to regenerate",
				   path, (unsigned)-ret);
	return K32_OK;
}

/* The SAN list text ("127.0.0.1\nlocalhost\n<names>\n") recorded in server.names. */
static k32_status_t names_text(const char *const *names, size_t count, char *out, size_t cap,
			       struct k32_err *err)
{
	size_t n = (size_t)snprintf(out, cap, "127.0.0.1\nlocalhost\n");

	for (size_t i = 0; i < count; i++) {
		size_t len = strlen(names[i]);

		if (!names[i][0] || strchr(names[i], '\n') || n + len + 2 > cap)
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, HTTP_MOD,
			    "TLS name %zu (\"%s\") empty, multi-line or the list is over %zu bytes",
			    i, names[i], cap);
		memcpy(out + n, names[i], len);
		n += len;
		out[n++] = '\n';
		out[n] = 0;
	}
	return K32_OK;
}

static void set_path(char *dst, const char *dir, const char *file)
{
	snprintf(dst, K32_HTTP_PATH_LEN, "%s/pki/%s", dir, file);
}

/* Whether the stored serving certificate is still right: same names, valid, signed by ca. */
static bool server_crt_ok(const char *names_path, const char *want_names, const char *crt_path,
			  const char *key_path, mbedtls_x509_crt *ca,
			  const struct k32_allocator *alloc)
{
	const struct k32_platform_ops *pl = k32_plat();
	mbedtls_x509_crt crt;
	uint8_t *data;
	size_t len;
	uint32_t flags = 0;
	bool ok;

	if (!pl->file_exists(crt_path) || !pl->file_exists(key_path))
		return false;
	if (read_file(names_path, alloc, &data, &len, NULL) != K32_OK)
		return false;
	ok = len == strlen(want_names) && memcmp(data, want_names, len) == 0;
	k32_free(alloc, data, len + 1);
	if (!ok)
		return false;
	mbedtls_x509_crt_init(&crt);
	ok = load_crt(crt_path, &crt, alloc, NULL) == K32_OK &&
	     mbedtls_x509_crt_verify(&crt, ca, NULL, NULL, &flags, NULL, NULL) == 0;
	mbedtls_x509_crt_free(&crt);
	return ok;
}

static k32_status_t ensure_with(const char *data_dir, const char *const *names, size_t name_count,
				const struct k32_allocator *alloc, mbedtls_ctr_drbg_context *drbg,
				struct http_tls_files *f, bool *out_created, struct k32_err *err)
{
	const struct k32_platform_ops *pl = k32_plat();
	char dir[K32_HTTP_PATH_LEN], names_path[K32_HTTP_PATH_LEN];
	char want[K32_HTTP_MAX_TLS_NAMES * 256 + 32];
	const char *all[K32_HTTP_MAX_TLS_NAMES + 2];
	mbedtls_pk_context ca_key, srv_key;
	mbedtls_x509_crt ca;
	bool created = false;
	k32_status_t st;

	if (!data_dir || !*data_dir || strlen(data_dir) + 20 >= K32_HTTP_PATH_LEN)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, HTTP_MOD,
		    "TLS data directory missing or longer than %d bytes (K32_HTTP_PATH_LEN)",
		    K32_HTTP_PATH_LEN - 20);
	if (name_count > K32_HTTP_MAX_TLS_NAMES)
		return k32_err_set(
		    err, K32_ERR_OUT_OF_RANGE, HTTP_MOD,
		    "%zu TLS names, limit is %d (K32_HTTP_MAX_TLS_NAMES); pass fewer", name_count,
		    K32_HTTP_MAX_TLS_NAMES);
	st = names_text(names, name_count, want, sizeof(want), err);
	if (st != K32_OK)
		return st;
	all[0] = "127.0.0.1";
	all[1] = "localhost";
	for (size_t i = 0; i < name_count; i++)
		all[i + 2] = names[i];

	snprintf(dir, sizeof(dir), "%s/pki", data_dir);
	set_path(f->ca_crt, data_dir, "ca.crt");
	set_path(f->ca_key, data_dir, "ca.key");
	set_path(f->server_crt, data_dir, "server.crt");
	set_path(f->server_key, data_dir, "server.key");
	set_path(names_path, data_dir, "server.names");
	st = pl->dir_create(dir, err);
	if (st != K32_OK)
		return st;

	mbedtls_pk_init(&ca_key);
	mbedtls_pk_init(&srv_key);
	mbedtls_x509_crt_init(&ca);
	if (!pl->file_exists(f->ca_crt) || !pl->file_exists(f->ca_key)) {
		st = gen_key(&ca_key, drbg, err);
		if (st == K32_OK)
			st = write_key(f->ca_key, &ca_key, err);
		if (st == K32_OK)
			st = issue(f->ca_crt, true, &ca_key, &ca_key, NULL, 0, drbg, err);
		if (st != K32_OK)
			goto out;
		pl->file_remove(names_path, NULL); /* a new CA invalidates the serving cert */
		created = true;
	} else {
		st = load_key(f->ca_key, &ca_key, alloc, err);
		if (st != K32_OK)
			goto out;
	}
	st = load_crt(f->ca_crt, &ca, alloc, err);
	if (st != K32_OK)
		goto out;
	if (!server_crt_ok(names_path, want, f->server_crt, f->server_key, &ca, alloc)) {
		st = gen_key(&srv_key, drbg, err);
		if (st == K32_OK)
			st = write_key(f->server_key, &srv_key, err);
		if (st == K32_OK)
			st = issue(f->server_crt, false, &srv_key, &ca_key, all, name_count + 2,
				   drbg, err);
		if (st == K32_OK)
			st = pl->file_write_atomic(names_path, want, strlen(want), err);
		if (st != K32_OK)
			goto out;
		created = true;
	}
	if (out_created)
		*out_created = created;
out:
	mbedtls_x509_crt_free(&ca);
	mbedtls_pk_free(&srv_key);
	mbedtls_pk_free(&ca_key);
	return st;
}

k32_status_t http_tls_ensure(const char *data_dir, const char *const *names, size_t name_count,
			     struct http_tls_files *out, bool *out_created, struct k32_err *err)
{
	mbedtls_ctr_drbg_context drbg;
	k32_status_t st = drbg_seed(&drbg, err);

	if (st == K32_OK)
		st = ensure_with(data_dir, names, name_count, k32_default_allocator(), &drbg, out,
				 out_created, err);
	mbedtls_ctr_drbg_free(&drbg);
	return st;
}

/* ---- configurations ---------------------------------------------------------------------- */

k32_status_t http_tls_server_new(const char *data_dir, const char *const *names, size_t name_count,
				 const struct k32_allocator *alloc, struct http_tls_server **out,
				 struct http_tls_files *out_files, struct k32_err *err)
{
	struct http_tls_server *ts = k32_calloc(alloc, sizeof(*ts));
	k32_status_t st;
	int ret;

	if (!ts)
		return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
				   "TLS: no memory for the server context (%zu bytes)",
				   sizeof(*ts));
	ts->alloc = alloc;
	mbedtls_ssl_config_init(&ts->conf);
	mbedtls_x509_crt_init(&ts->chain);
	mbedtls_pk_init(&ts->key);
	st = drbg_seed(&ts->drbg, err);
	if (st != K32_OK)
		goto fail;
	st = ensure_with(data_dir, names, name_count, alloc, &ts->drbg, out_files, NULL, err);
	if (st != K32_OK)
		goto fail;
	st = load_crt(out_files->server_crt, &ts->chain, alloc, err);
	if (st == K32_OK)
		st = load_crt(out_files->ca_crt, &ts->chain, alloc, err);
	if (st == K32_OK)
		st = load_key(out_files->server_key, &ts->key, alloc, err);
	if (st != K32_OK)
		goto fail;
	ret = mbedtls_ssl_config_defaults(&ts->conf, MBEDTLS_SSL_IS_SERVER,
					  MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (ret == 0) {
		mbedtls_ssl_conf_rng(&ts->conf, mbedtls_ctr_drbg_random, &ts->drbg);
		mbedtls_ssl_conf_min_version(&ts->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
					     MBEDTLS_SSL_MINOR_VERSION_3);
		ret = mbedtls_ssl_conf_own_cert(&ts->conf, &ts->chain, &ts->key);
	}
	if (ret == 0)
		ret = mbedtls_ssl_conf_alpn_protocols(&ts->conf, alpn_protos);
	if (ret == 0) {
		mbedtls_ssl_conf_ciphersuites(&ts->conf, server_suites);
		mbedtls_ssl_conf_curves(&ts->conf, tls_curves);
	}
	if (ret != 0) {
		st = tls_fail(err, K32_ERR_INTERNAL, ret, "configuring the TLS server");
		goto fail;
	}
	*out = ts;
	return K32_OK;
fail:
	http_tls_server_free(ts);
	return st;
}

void http_tls_server_free(struct http_tls_server *ts)
{
	if (!ts)
		return;
	mbedtls_ssl_config_free(&ts->conf);
	mbedtls_x509_crt_free(&ts->chain);
	mbedtls_pk_free(&ts->key);
	mbedtls_ctr_drbg_free(&ts->drbg);
	k32_free(ts->alloc, ts, sizeof(*ts));
}

k32_status_t http_tls_client_new(const char *ca_file, const struct k32_allocator *alloc,
				 struct http_tls_client **out, struct k32_err *err)
{
	struct http_tls_client *tc;
	k32_status_t st;
	int ret;

	if (!ca_file || !*ca_file)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "TLS client needs a CA file to verify the server; set ca_file");
	tc = k32_calloc(alloc, sizeof(*tc));
	if (!tc)
		return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
				   "TLS: no memory for the client context (%zu bytes)",
				   sizeof(*tc));
	tc->alloc = alloc;
	mbedtls_ssl_config_init(&tc->conf);
	mbedtls_x509_crt_init(&tc->ca);
	st = drbg_seed(&tc->drbg, err);
	if (st == K32_OK)
		st = load_crt(ca_file, &tc->ca, alloc, err);
	if (st != K32_OK)
		goto fail;
	ret = mbedtls_ssl_config_defaults(&tc->conf, MBEDTLS_SSL_IS_CLIENT,
					  MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (ret == 0) {
		mbedtls_ssl_conf_rng(&tc->conf, mbedtls_ctr_drbg_random, &tc->drbg);
		mbedtls_ssl_conf_authmode(&tc->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
		mbedtls_ssl_conf_ca_chain(&tc->conf, &tc->ca, NULL);
		mbedtls_ssl_conf_min_version(&tc->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
					     MBEDTLS_SSL_MINOR_VERSION_3);
		mbedtls_ssl_conf_curves(&tc->conf, tls_curves);
	}
	if (ret != 0) {
		st = tls_fail(err, K32_ERR_INTERNAL, ret, "configuring the TLS client");
		goto fail;
	}
	*out = tc;
	return K32_OK;
fail:
	http_tls_client_free(tc);
	return st;
}

void http_tls_client_free(struct http_tls_client *tc)
{
	if (!tc)
		return;
	mbedtls_ssl_config_free(&tc->conf);
	mbedtls_x509_crt_free(&tc->ca);
	mbedtls_ctr_drbg_free(&tc->drbg);
	k32_free(tc->alloc, tc, sizeof(*tc));
}

/* ---- sessions ----------------------------------------------------------------------------- */

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct http_tls_conn *tls = ctx;
	size_t sent = 0;
	k32_status_t st = k32_plat()->sock_send(tls->sock, buf, len, &sent);

	if (st == K32_OK)
		return (int)sent;
	if (st == K32_ERR_SHOULD_WAIT)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	if (st == K32_ERR_PEER_CLOSED)
		return MBEDTLS_ERR_NET_CONN_RESET;
	return MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct http_tls_conn *tls = ctx;
	size_t got = 0;
	k32_status_t st = k32_plat()->sock_recv(tls->sock, buf, len, &got);

	if (st == K32_OK)
		return (int)got;
	if (st == K32_ERR_SHOULD_WAIT)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (st == K32_ERR_PEER_CLOSED)
		return 0;
	return MBEDTLS_ERR_NET_RECV_FAILED;
}

static k32_status_t conn_new(const mbedtls_ssl_config *conf, const struct k32_allocator *alloc,
			     k32_sock_t sock, const char *host, struct http_tls_conn **out,
			     struct k32_err *err)
{
	struct http_tls_conn *tls = k32_calloc(alloc, sizeof(*tls));
	int ret;

	if (!tls)
		return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
				   "TLS: no memory for a session (%zu bytes)", sizeof(*tls));
	tls->alloc = alloc;
	tls->sock = sock;
	mbedtls_ssl_init(&tls->ssl);
	ret = mbedtls_ssl_setup(&tls->ssl, conf);
	if (ret == 0 && host)
		ret = mbedtls_ssl_set_hostname(&tls->ssl, host);
	if (ret != 0) {
		http_tls_conn_free(tls);
		return tls_fail(err, K32_ERR_NO_MEMORY, ret, "setting up a TLS session");
	}
	mbedtls_ssl_set_bio(&tls->ssl, tls, bio_send, bio_recv, NULL);
	*out = tls;
	return K32_OK;
}

k32_status_t http_tls_conn_new_server(struct http_tls_server *ts, k32_sock_t sock,
				      struct http_tls_conn **out, struct k32_err *err)
{
	return conn_new(&ts->conf, ts->alloc, sock, NULL, out, err);
}

k32_status_t http_tls_conn_new_client(struct http_tls_client *tc, k32_sock_t sock,
				      const char *server_name, struct http_tls_conn **out,
				      struct k32_err *err)
{
	uint8_t ip[4];

	if (parse_ipv4(server_name, ip))
		server_name = "localhost";
	return conn_new(&tc->conf, tc->alloc, sock, server_name, out, err);
}

/* ---- parking: releasing an idle session's record buffers --------------------------------- */

#if HTTP_TLS_CAN_PARK
static bool park_save(struct http_tls_park *pk, unsigned char *buf, unsigned char *ctr,
		      unsigned char *hdr, unsigned char *len, unsigned char *iv, unsigned char *msg)
{
	unsigned char *ptrs[5] = {ctr, hdr, len, iv, msg};

	for (int i = 0; i < 5; i++) {
		if (ptrs[i] < buf || ptrs[i] - buf >= HTTP_TLS_PARK_PREFIX)
			return false;
	}
	pk->ctr = (uint16_t)(ctr - buf);
	pk->hdr = (uint16_t)(hdr - buf);
	pk->len = (uint16_t)(len - buf);
	pk->iv = (uint16_t)(iv - buf);
	pk->msg = (uint16_t)(msg - buf);
	memcpy(pk->prefix, buf, HTTP_TLS_PARK_PREFIX);
	return true;
}
#endif

bool http_tls_park(struct http_tls_conn *tls)
{
#if HTTP_TLS_CAN_PARK
	mbedtls_ssl_context *ssl = &tls->ssl;

	if (tls->parked)
		return true;
	/* Only between records: handshake over, nothing half read, decrypted or unsent
	 * (out_msglen keeps the last record's length after it went: not a sign of data). */
	if (ssl->state != MBEDTLS_SSL_HANDSHAKE_OVER || ssl->handshake || !ssl->in_buf ||
	    !ssl->out_buf || ssl->in_left || ssl->in_msglen || ssl->in_offt || ssl->in_hslen ||
	    ssl->keep_current_message || ssl->out_left)
		return false;
	if (!park_save(&tls->pin, ssl->in_buf, ssl->in_ctr, ssl->in_hdr, ssl->in_len, ssl->in_iv,
		       ssl->in_msg) ||
	    !park_save(&tls->pout, ssl->out_buf, ssl->out_ctr, ssl->out_hdr, ssl->out_len,
		       ssl->out_iv, ssl->out_msg))
		return false;
	mbedtls_platform_zeroize(ssl->in_buf, MBEDTLS_SSL_IN_BUFFER_LEN);
	mbedtls_free(ssl->in_buf);
	mbedtls_platform_zeroize(ssl->out_buf, MBEDTLS_SSL_OUT_BUFFER_LEN);
	mbedtls_free(ssl->out_buf);
	ssl->in_buf = ssl->in_ctr = ssl->in_hdr = ssl->in_len = ssl->in_iv = ssl->in_msg = NULL;
	ssl->out_buf = ssl->out_ctr = ssl->out_hdr = ssl->out_len = ssl->out_iv = ssl->out_msg =
	    NULL;
	tls->parked = true;
	return true;
#else
	(void)tls;
	return false;
#endif
}

/* Gives a parked session its record buffers back, exactly as they were. */
static k32_status_t unpark(struct http_tls_conn *tls, struct k32_err *err)
{
#if HTTP_TLS_CAN_PARK
	mbedtls_ssl_context *ssl = &tls->ssl;
	unsigned char *in, *out;

	if (!tls->parked)
		return K32_OK;
	in = mbedtls_calloc(1, MBEDTLS_SSL_IN_BUFFER_LEN);
	out = mbedtls_calloc(1, MBEDTLS_SSL_OUT_BUFFER_LEN);
	if (!in || !out) {
		mbedtls_free(in);
		mbedtls_free(out);
		return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
				   "TLS: no memory to resume an idle session (2 x %d bytes)",
				   MBEDTLS_SSL_IN_BUFFER_LEN);
	}
	memcpy(in, tls->pin.prefix, HTTP_TLS_PARK_PREFIX);
	memcpy(out, tls->pout.prefix, HTTP_TLS_PARK_PREFIX);
	ssl->in_buf = in;
	ssl->in_ctr = in + tls->pin.ctr;
	ssl->in_hdr = in + tls->pin.hdr;
	ssl->in_len = in + tls->pin.len;
	ssl->in_iv = in + tls->pin.iv;
	ssl->in_msg = in + tls->pin.msg;
	ssl->out_buf = out;
	ssl->out_ctr = out + tls->pout.ctr;
	ssl->out_hdr = out + tls->pout.hdr;
	ssl->out_len = out + tls->pout.len;
	ssl->out_iv = out + tls->pout.iv;
	ssl->out_msg = out + tls->pout.msg;
	tls->parked = false;
#else
	(void)tls;
	(void)err;
#endif
	return K32_OK;
}

bool http_tls_parked(const struct http_tls_conn *tls)
{
	return tls->parked;
}

void http_tls_conn_free(struct http_tls_conn *tls)
{
	if (!tls)
		return;
	/* mbedtls_ssl_free skips NULL record buffers, so a parked session frees as is. */
	mbedtls_ssl_free(&tls->ssl);
	k32_free(tls->alloc, tls, sizeof(*tls));
}

static k32_status_t map_ret(struct http_tls_conn *tls, int ret, uint32_t *out_want,
			    const char *what, struct k32_err *err)
{
	if (ret == MBEDTLS_ERR_SSL_WANT_READ) {
		*out_want = K32_POLL_IN;
		return K32_ERR_SHOULD_WAIT;
	}
	if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
		*out_want = K32_POLL_OUT;
		return K32_ERR_SHOULD_WAIT;
	}
	if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || ret == MBEDTLS_ERR_SSL_CONN_EOF ||
	    ret == MBEDTLS_ERR_NET_CONN_RESET)
		return k32_err_set(err, K32_ERR_PEER_CLOSED, HTTP_MOD, "TLS: peer closed during %s",
				   what);
	if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
		char vbuf[128];

		mbedtls_x509_crt_verify_info(vbuf, sizeof(vbuf), "",
					     mbedtls_ssl_get_verify_result(&tls->ssl));
		for (char *p = vbuf; *p; p++) {
			if (*p == '\n')
				*p = ' ';
		}
		return k32_err_set(
		    err, K32_ERR_ACCESS_DENIED, HTTP_MOD,
		    "TLS: server certificate rejected: %s; check ca_file and server_name", vbuf);
	}
	return tls_fail(err, K32_ERR_IO, ret, what);
}

k32_status_t http_tls_handshake(struct http_tls_conn *tls, uint32_t *out_want, struct k32_err *err)
{
	int ret;

	if (tls->parked && unpark(tls, err) != K32_OK)
		return K32_ERR_NO_MEMORY;
	ret = mbedtls_ssl_handshake(&tls->ssl);

	if (ret == 0)
		return K32_OK;
	return map_ret(tls, ret, out_want, "the handshake", err);
}

k32_status_t http_tls_read(struct http_tls_conn *tls, void *buf, size_t cap, size_t *out_len,
			   uint32_t *out_want, struct k32_err *err)
{
	int ret;

	if (tls->parked && unpark(tls, err) != K32_OK)
		return K32_ERR_NO_MEMORY;
	ret = mbedtls_ssl_read(&tls->ssl, buf, cap);

	if (ret > 0) {
		*out_len = (size_t)ret;
		return K32_OK;
	}
	if (ret == 0)
		return k32_err_set(err, K32_ERR_PEER_CLOSED, HTTP_MOD, "TLS: peer closed");
	return map_ret(tls, ret, out_want, "a read", err);
}

k32_status_t http_tls_write(struct http_tls_conn *tls, const void *buf, size_t len, size_t *out_len,
			    uint32_t *out_want, struct k32_err *err)
{
	int ret;

	if (tls->parked && unpark(tls, err) != K32_OK)
		return K32_ERR_NO_MEMORY;
	ret = mbedtls_ssl_write(&tls->ssl, buf, len);

	if (ret >= 0) {
		*out_len = (size_t)ret;
		return K32_OK;
	}
	return map_ret(tls, ret, out_want, "a write", err);
}

void http_tls_close_notify(struct http_tls_conn *tls)
{
	if (tls->parked && unpark(tls, NULL) != K32_OK)
		return;
	mbedtls_ssl_close_notify(&tls->ssl);
}
