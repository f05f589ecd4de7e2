/*
 * token_fuzz.c - fuzz target for the ServiceAccount token verifier and the RBAC evaluator
 * (src/api/api_token.c, api_rbac.c). The first byte picks what the rest is:
 *   0: a bearer token, verified as it is (form, base64url, signature: nearly all refused);
 *   1: the claims of a token: signed here with the verifier's key so that the claims parser,
 *      the audience and expiry checks run on hostile JSON;
 *   2: a PolicyRule and a subject (JSON, split at the first NUL), matched against a few
 *      request attributes and identities.
 * Nothing may crash, leak or read out of bounds.
 *
 * Built with libFuzzer when K32_FUZZ=ON; token_fuzz_replay runs the seed corpus under ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/md.h>

#include "api/api_srv.h"
#include "base/k32_base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[32] = {7,  1,	2,  3,	4,  5,	6,  7,	8,  9,	10, 11, 12, 13, 14, 15,
				16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

/* base64url of in (no padding) appended at tok + *pos. */
static int b64url(const uint8_t *in, size_t len, char *tok, size_t *pos, size_t cap)
{
	if (*pos + k32_base64_len(len) + 1 > cap)
		return 0;
	k32_base64_encode(in, len, tok + *pos);
	size_t n = strlen(tok + *pos);
	while (n && tok[*pos + n - 1] == '=')
		n--;
	for (size_t i = 0; i < n; i++)
		tok[*pos + i] = tok[*pos + i] == '+'   ? '-'
				: tok[*pos + i] == '/' ? '_'
						       : tok[*pos + i];
	*pos += n;
	tok[*pos] = 0;
	return 1;
}

static void signed_claims(const uint8_t *claims, size_t len)
{
	static const char hdr[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
	static char tok[K32_API_SA_TOKEN_LEN * 2];
	size_t pos = 0;
	uint8_t mac[32];
	if (!b64url((const uint8_t *)hdr, sizeof(hdr) - 1, tok, &pos, sizeof(tok)))
		return;
	tok[pos++] = '.';
	if (!b64url(claims, len, tok, &pos, sizeof(tok) - 64))
		return;
	mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key, 32,
			(const unsigned char *)tok, pos, mac);
	tok[pos++] = '.';
	b64url(mac, 32, tok, &pos, sizeof(tok));
	struct api_sa_claims c;
	char why[160];
	(void)api_token_verify(key, tok, pos, 1000, &c, why, sizeof(why));
}

static void rule_and_subject(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t rl = nul ? (size_t)(nul - data) : size;
	cJSON *rule = cJSON_ParseWithLength((const char *)data, rl);
	cJSON *subj = nul ? cJSON_ParseWithLength((const char *)nul + 1, size - rl - 1) : NULL;
	static const struct api_rbac_attrs attrs[] = {
	    {"get", "", "pods", "", "ns", "p", NULL},
	    {"list", "apps", "deployments", "", "ns", "", NULL},
	    {"get", "", "pods", "log", "ns", "p", NULL},
	    {"get", NULL, NULL, NULL, NULL, NULL, "/metrics"},
	    {"impersonate", "", "users", "", "", "jane", NULL},
	};
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		(void)api_rbac_rule_allows(rule, &attrs[i]);
	struct api_identity sa = {.user = "system:serviceaccount:ns:bot"};
	api_sa_groups("ns", sa.groups, sizeof(sa.groups));
	struct api_identity jane = {.user = "jane", .groups = "dev,system:authenticated"};
	(void)api_rbac_subject_matches(subj, &sa, "ns");
	(void)api_rbac_subject_matches(subj, &jane, "");
	cJSON_Delete(rule);
	cJSON_Delete(subj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4 * K32_API_SA_TOKEN_LEN)
		return 0;
	struct api_sa_claims c;
	char why[160];
	switch (data[0] % 3) {
	case 0:
		(void)api_token_verify(key, (const char *)data + 1, size - 1, 1000, &c, why,
				       sizeof(why));
		break;
	case 1:
		signed_claims(data + 1, size - 1);
		break;
	default:
		rule_and_subject(data + 1, size - 1);
		break;
	}
	return 0;
}
