/*
 * api_token.c - ServiceAccounts and their tokens (the TokenRequest API behind
 * `kubectl create token SA [--duration D]`).
 *
 * A token is a JWT signed with HMAC-SHA256 (mbedTLS, already linked for TLS): an Ed25519 or
 * ECDSA signature would let others verify without the key, which nobody but this server
 * does here, and HMAC costs a board two SHA-256 passes. The key is 32 random bytes kept in
 * <data_dir>/sa.key (hex), made at first start; without a data dir it is random per run.
 * Claims: iss "kube32", sub system:serviceaccount:NS:NAME, aud (API_SA_AUDIENCE unless the
 * request names others), iat, nbf, exp, and kubernetes.io {namespace, serviceaccount {name,
 * uid}, pod {name, uid} when bound to a pod}. A token authenticates while its signature is
 * right, it has not expired, it names this server's audience, and the ServiceAccount (and the
 * pod it is bound to) still exists with the uid it names: deleting the ServiceAccount revokes
 * its tokens.
 *
 * Context: any thread. api_token_verify is pure (fuzzed: tests/fuzz/token).
 */
#include "api/api_srv.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/md.h>

#include "base/k32_base64.h"
#include "base/k32_json.h"
#include "base/k32_log.h"

#define TOKEN_HEADER "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

/* ---- base64url (RFC 4648 section 5, no padding) ----------------------------------------- */

/* Encodes len bytes at the end of tok (at *pos); false when it does not fit in cap. */
static bool b64url_put(const uint8_t *in, size_t len, char *tok, size_t *pos, size_t cap)
{
	size_t n = k32_base64_len(len);
	if (*pos + n + 1 > cap)
		return false;
	k32_base64_encode(in, len, tok + *pos);
	while (n && tok[*pos + n - 1] == '=')
		n--;
	for (size_t i = 0; i < n; i++) {
		char *c = &tok[*pos + i];
		*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
	}
	*pos += n;
	tok[*pos] = 0;
	return true;
}

/* Decodes len characters of the url alphabet into out (cap bytes); false on any other
 * character, a length no encoding has, or when the bytes do not fit. */
static bool b64url_get(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
	char tmp[K32_API_SA_TOKEN_LEN + 4];
	if (len % 4 == 1 || len + 4 > sizeof(tmp))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			   (c >= '0' && c <= '9')))
			return false;
		tmp[i] = c;
	}
	size_t n = len;
	while (n % 4)
		tmp[n++] = '=';
	tmp[n] = 0;
	return k32_base64_decode(tmp, out, cap, out_len) == K32_OK;
}

static bool token_hmac(const uint8_t key[32], const char *data, size_t len, uint8_t mac[32])
{
	const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
	return md && mbedtls_md_hmac(md, key, 32, (const unsigned char *)data, len, mac) == 0;
}

/* ---- signing and verifying ---------------------------------------------------------------- */

k32_status_t api_token_sign(const uint8_t key[32], const struct api_sa_claims *c,
			    const char *const *aud, size_t naud, char *tok, size_t cap,
			    struct k32_err *err)
{
	cJSON *p = cJSON_CreateObject();
	cJSON *a = cJSON_AddArrayToObject(p, "aud");
	for (size_t i = 0; i < naud; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(aud[i]));
	cJSON_AddNumberToObject(p, "exp", (double)c->exp);
	cJSON_AddNumberToObject(p, "iat", (double)c->iat);
	cJSON_AddStringToObject(p, "iss", "kube32");
	cJSON *k = cJSON_AddObjectToObject(p, "kubernetes.io");
	cJSON_AddStringToObject(k, "namespace", c->ns);
	if (c->pod[0]) {
		cJSON *po = cJSON_AddObjectToObject(k, "pod");
		cJSON_AddStringToObject(po, "name", c->pod);
		cJSON_AddStringToObject(po, "uid", c->pod_uid);
	}
	cJSON *sa = cJSON_AddObjectToObject(k, "serviceaccount");
	cJSON_AddStringToObject(sa, "name", c->name);
	cJSON_AddStringToObject(sa, "uid", c->uid);
	cJSON_AddNumberToObject(p, "nbf", (double)c->iat);
	char sub[sizeof(c->ns) + sizeof(c->name) + 24];
	snprintf(sub, sizeof(sub), "system:serviceaccount:%s:%s", c->ns, c->name);
	cJSON_AddStringToObject(p, "sub", sub);
	char *text = cJSON_PrintUnformatted(p);
	cJSON_Delete(p);
	if (!text)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api", "signing a token: out of memory");
	size_t pos = 0;
	bool ok =
	    b64url_put((const uint8_t *)TOKEN_HEADER, sizeof(TOKEN_HEADER) - 1, tok, &pos, cap) &&
	    pos + 1 < cap;
	if (ok) {
		tok[pos++] = '.';
		ok = b64url_put((const uint8_t *)text, strlen(text), tok, &pos, cap);
	}
	cJSON_free(text);
	uint8_t mac[32];
	if (ok && pos + 1 < cap && token_hmac(key, tok, pos, mac)) {
		tok[pos++] = '.';
		ok = b64url_put(mac, sizeof(mac), tok, &pos, cap);
	} else
		ok = false;
	if (!ok || pos > K32_API_SA_TOKEN_LEN)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "api",
				   "the token would be over %d characters (K32_API_SA_TOKEN_LEN): "
				   "name fewer or shorter audiences",
				   K32_API_SA_TOKEN_LEN);
	return K32_OK;
}

/* A string member of o copied into dst; false when absent, not a string, empty or too long.
 * (Not k32_json_find: the claim "kubernetes.io" has a dot in its name.) */
static bool claim_str(const cJSON *o, const char *key, char *dst, size_t cap)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
	if (!s || !s[0] || strlen(s) >= cap)
		return false;
	snprintf(dst, cap, "%s", s);
	return true;
}

static bool claim_u64(const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 1e15)
		return false;
	*out = (uint64_t)n->valuedouble;
	return true;
}

k32_status_t api_token_verify(const uint8_t key[32], const char *tok, size_t len, uint64_t now_s,
			      struct api_sa_claims *out, char *why, size_t cap)
{
	memset(out, 0, sizeof(*out));
	if (len > K32_API_SA_TOKEN_LEN) {
		snprintf(why, cap, "token is over %d characters (K32_API_SA_TOKEN_LEN)",
			 K32_API_SA_TOKEN_LEN);
		return K32_ERR_INVALID_ARGS;
	}
	const char *d1 = memchr(tok, '.', len);
	const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok)) : NULL;
	if (!d1 || !d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - tok))) {
		snprintf(why, cap, "not a JWT (three dot-separated parts)");
		return K32_ERR_INVALID_ARGS;
	}
	uint8_t sig[40], mac[32];
	size_t sl = 0;
	if (!b64url_get(d2 + 1, len - (size_t)(d2 + 1 - tok), sig, sizeof(sig), &sl) || sl != 32 ||
	    !token_hmac(key, tok, (size_t)(d2 - tok), mac)) {
		snprintf(why, cap, "malformed signature");
		return K32_ERR_INVALID_ARGS;
	}
	uint8_t diff = 0;
	for (size_t i = 0; i < 32; i++)
		diff |= (uint8_t)(sig[i] ^ mac[i]);
	if (diff) {
		snprintf(why, cap, "invalid signature");
		return K32_ERR_INVALID_ARGS;
	}
	/* signed by this server: the rest is its own text, checked all the same */
	uint8_t hdr[64], body[K32_API_SA_TOKEN_LEN];
	size_t hl = 0, bl = 0;
	if (!b64url_get(tok, (size_t)(d1 - tok), hdr, sizeof(hdr) - 1, &hl) ||
	    !b64url_get(d1 + 1, (size_t)(d2 - d1 - 1), body, sizeof(body) - 1, &bl) ||
	    hl != sizeof(TOKEN_HEADER) - 1 || memcmp(hdr, TOKEN_HEADER, hl)) {
		snprintf(why, cap, "malformed header or claims");
		return K32_ERR_INVALID_ARGS;
	}
	cJSON *p = cJSON_ParseWithLength((const char *)body, bl);
	const cJSON *k8s = cJSON_GetObjectItemCaseSensitive(p, "kubernetes.io");
	const cJSON *sa = cJSON_GetObjectItemCaseSensitive(k8s, "serviceaccount");
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(k8s, "pod");
	bool ok = cJSON_IsObject(p) && claim_str(k8s, "namespace", out->ns, sizeof(out->ns)) &&
		  claim_str(sa, "name", out->name, sizeof(out->name)) &&
		  claim_str(sa, "uid", out->uid, sizeof(out->uid)) &&
		  claim_u64(p, "exp", &out->exp) && claim_u64(p, "iat", &out->iat);
	if (ok && pod)
		ok = claim_str(pod, "name", out->pod, sizeof(out->pod)) &&
		     claim_str(pod, "uid", out->pod_uid, sizeof(out->pod_uid));
	bool aud = false;
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(p, "aud"))
	{
		if (cJSON_IsString(a) && !strcmp(a->valuestring, API_SA_AUDIENCE))
			aud = true;
	}
	cJSON_Delete(p);
	if (!ok) {
		snprintf(why, cap, "malformed claims");
		return K32_ERR_INVALID_ARGS;
	}
	if (!aud) {
		snprintf(why, cap, "token audiences do not include %s", API_SA_AUDIENCE);
		return K32_ERR_INVALID_ARGS;
	}
	if (now_s >= out->exp) {
		snprintf(why, cap, "token has expired");
		return K32_ERR_INVALID_ARGS;
	}
	if (out->iat > now_s + 60) {
		snprintf(why, cap, "token is not valid yet (issued in the future)");
		return K32_ERR_INVALID_ARGS;
	}
	return K32_OK;
}

/* ---- the key ------------------------------------------------------------------------------ */

static void token_random(uint8_t *out, size_t n)
{
	if (k32_plat()->random(out, n) == K32_OK)
		return;
	uint64_t t = k32_now_us();
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)(t >> (i % 8 * 8)) ^ (uint8_t)(i * 151u);
}

static int token_hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

k32_status_t api_token_key_load(struct api_server *api, const char *data_dir, struct k32_err *err)
{
	if (!data_dir) {
		token_random(api->sa_key, sizeof(api->sa_key));
		return K32_OK;
	}
	char path[320];
	int pn = snprintf(path, sizeof(path), "%s/sa.key", data_dir);
	if (pn < 0 || (size_t)pn >= sizeof(path))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "api",
				   "data dir path is too long for sa.key (limit %zu bytes)",
				   sizeof(path) - 8);
	const struct k32_platform_ops *plat = k32_plat();
	const struct k32_allocator *a = k32_default_allocator();
	uint8_t *data = NULL;
	size_t len = 0;
	k32_status_t st = plat->file_read_all(path, a, 256, &data, &len, err);
	if (st == K32_ERR_NOT_FOUND) {
		char hex[65];
		token_random(api->sa_key, sizeof(api->sa_key));
		for (size_t i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", api->sa_key[i]);
		hex[64] = '\n';
		return plat->file_write_atomic(path, hex, 65, err);
	}
	if (st)
		return st;
	bool ok = len >= 64;
	for (size_t i = 0; ok && i < 32; i++) {
		int h = token_hexval((char)data[2 * i]), l = token_hexval((char)data[2 * i + 1]);
		ok = h >= 0 && l >= 0;
		api->sa_key[i] = (uint8_t)(h << 4 | l);
	}
	k32_free(a, data, len + 1);
	if (!ok)
		return k32_err_set(err, K32_ERR_CORRUPT, "api",
				   "%s: expected 64 lower-case hex characters (the ServiceAccount "
				   "token key); delete it to have a new one made (every issued "
				   "token becomes invalid)",
				   path);
	return K32_OK;
}

/* ---- identities ------------------------------------------------------------------------- */

void api_sa_groups(const char *ns, char *buf, size_t cap)
{
	snprintf(buf, cap, "system:serviceaccounts,system:serviceaccounts:%s,system:authenticated",
		 ns);
}

/* The uid of the object res ns/name, false when it does not exist. */
static bool token_obj_uid(struct api_server *api, const char *plural, const char *ns,
			  const char *name, char *uid, size_t cap)
{
	struct store_key key = {"", plural, ns, name};
	struct store_obj *o = NULL;
	struct k32_err err;
	if (store_get(api->store, &key, &o, &err))
		return false;
	cJSON *j = api_parse_obj(o);
	store_obj_unref(api->store, o);
	const char *u = api_jstr(j, "metadata.uid");
	snprintf(uid, cap, "%s", u ? u : "");
	cJSON_Delete(j);
	return true;
}

/* 32-bit: a board has no 64-bit atomics (make mcu links no libatomic); wraps after 2^32 */
static _Atomic uint32_t token_verifications;

uint64_t api_token_verifications(void)
{
	return atomic_load(&token_verifications);
}

bool api_token_identity(struct api_server *api, const char *tok, size_t len,
			struct api_identity *id, char *why, size_t cap)
{
	atomic_fetch_add(&token_verifications, 1);
	struct api_sa_claims c;
	if (api_token_verify(api->sa_key, tok, len, api_now_s(), &c, why, cap))
		return false;
	char uid[64];
	if (!token_obj_uid(api, "serviceaccounts", c.ns, c.name, uid, sizeof(uid)) ||
	    strcmp(uid, c.uid)) {
		snprintf(why, cap, "service account %.63s/%.100s has been deleted", c.ns, c.name);
		return false;
	}
	if (c.pod[0] && (!token_obj_uid(api, "pods", c.ns, c.pod, uid, sizeof(uid)) ||
			 strcmp(uid, c.pod_uid))) {
		snprintf(why, cap, "the pod %.63s/%.100s the token is bound to has been deleted",
			 c.ns, c.pod);
		return false;
	}
	memset(id, 0, sizeof(*id));
	int n = snprintf(id->user, sizeof(id->user), "system:serviceaccount:%s:%s", c.ns, c.name);
	if (n < 0 || (size_t)n >= sizeof(id->user)) {
		snprintf(why, cap, "user name over K32_API_USER_LEN");
		return false;
	}
	api_sa_groups(c.ns, id->groups, sizeof(id->groups));
	id->rbac = api;
	return true;
}

/* ---- TokenRequest --------------------------------------------------------------------------- */

void api_token_request(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail f;
	api_fail_clear(&f);
	cJSON *req = NULL;
	const struct api_resource *sares = rq->res;
	if (strcmp(rq->method, "POST")) {
		api_fail_set(&f, 405, "MethodNotAllowed",
			     "serviceaccounts/token supports only create (POST)");
		goto fail;
	}
	struct store_obj *so = NULL;
	if (api_get_obj(api, sares, rq->ns, rq->name, &so, &f))
		goto fail;
	cJSON *sa = api_parse_obj(so);
	store_obj_unref(api->store, so);
	struct api_sa_claims c;
	memset(&c, 0, sizeof(c));
	snprintf(c.ns, sizeof(c.ns), "%s", rq->ns);
	snprintf(c.name, sizeof(c.name), "%s", rq->name);
	const char *uid = api_jstr(sa, "metadata.uid");
	snprintf(c.uid, sizeof(c.uid), "%s", uid ? uid : "");
	cJSON_Delete(sa);
	if (api_decode_body(rq, &req, &f))
		goto fail;
	if (!cJSON_IsObject(req)) {
		api_fail_set(&f, 400, "BadRequest",
			     "the request body must be a TokenRequest object");
		goto fail;
	}
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(req, "spec");
	const cJSON *es = cJSON_GetObjectItemCaseSensitive(spec, "expirationSeconds");
	double secs = K32_API_SA_TOKEN_DEFAULT_S;
	if (es && !cJSON_IsNull(es)) {
		if (!cJSON_IsNumber(es))
			api_fail_add_cause(&f, "FieldValueInvalid", "spec.expirationSeconds",
					   "Invalid value: not a number");
		else
			secs = es->valuedouble;
	}
	if (secs < K32_API_SA_TOKEN_MIN_S || secs > (double)K32_API_SA_TOKEN_MAX_S)
		api_fail_add_cause(&f, "FieldValueInvalid", "spec.expirationSeconds",
				   "Invalid value: %.0f: must be between %d and %" PRIu32
				   " seconds (K32_API_SA_TOKEN_MIN_S, K32_API_SA_TOKEN_MAX_S)",
				   secs, K32_API_SA_TOKEN_MIN_S, (uint32_t)K32_API_SA_TOKEN_MAX_S);
	const char *aud[K32_API_SA_MAX_AUDIENCES];
	size_t naud = 0;
	const cJSON *auds = cJSON_GetObjectItemCaseSensitive(spec, "audiences");
	const cJSON *it;
	cJSON_ArrayForEach(it, auds)
	{
		if (!cJSON_IsString(it) || !it->valuestring[0] || strlen(it->valuestring) > 200) {
			api_fail_add_cause(&f, "FieldValueInvalid", "spec.audiences",
					   "Invalid value: each audience is a string of 1..200 "
					   "characters");
			break;
		}
		if (naud == K32_API_SA_MAX_AUDIENCES) {
			api_fail_add_cause(&f, "FieldValueTooMany", "spec.audiences",
					   "Too many: must have at most %d audiences "
					   "(K32_API_SA_MAX_AUDIENCES)",
					   K32_API_SA_MAX_AUDIENCES);
			break;
		}
		aud[naud++] = it->valuestring;
	}
	if (!naud)
		aud[naud++] = API_SA_AUDIENCE;
	const cJSON *bref = cJSON_GetObjectItemCaseSensitive(spec, "boundObjectRef");
	if (bref && !cJSON_IsNull(bref)) {
		const char *bk = api_jstr(bref, "kind");
		const char *bn = api_jstr(bref, "name");
		const char *bu = api_jstr(bref, "uid");
		char puid[64];
		if (!bk || strcmp(bk, "Pod"))
			api_fail_add_cause(&f, "FieldValueNotSupported", "spec.boundObjectRef.kind",
					   "Unsupported value: \"%.40s\": supported values: "
					   "\"Pod\"",
					   bk ? bk : "");
		else if (!bn || !token_obj_uid(api, "pods", rq->ns, bn, puid, sizeof(puid)) ||
			 (bu && bu[0] && strcmp(bu, puid)))
			api_fail_add_cause(&f, "FieldValueInvalid", "spec.boundObjectRef",
					   "Invalid value: pod %.100s does not exist in %s%s",
					   bn ? bn : "", rq->ns, bu ? " with that uid" : "");
		else {
			snprintf(c.pod, sizeof(c.pod), "%s", bn);
			snprintf(c.pod_uid, sizeof(c.pod_uid), "%.39s", puid);
		}
	}
	int ulen = snprintf(NULL, 0, "system:serviceaccount:%s:%s", c.ns, c.name);
	if (ulen >= K32_API_USER_LEN)
		api_fail_add_cause(&f, "FieldValueInvalid", "metadata.name",
				   "Invalid value: the user name system:serviceaccount:%s:%s is %d "
				   "characters, over K32_API_USER_LEN (%d); use a shorter "
				   "ServiceAccount name",
				   K32_CLIP(c.ns), K32_CLIP(c.name), ulen, K32_API_USER_LEN - 1);
	if (f.cause_count) {
		api_fail_invalid(&f, "TokenRequest", rq->name);
		goto fail;
	}
	c.iat = api_now_s();
	c.exp = c.iat + (uint64_t)secs;
	char *tok = api_zalloc(K32_API_SA_TOKEN_LEN + 1);
	struct k32_err err;
	if (!tok) {
		api_fail_set(&f, 500, "InternalError", "out of memory signing the token");
		goto fail;
	}
	if (api_token_sign(api->sa_key, &c, aud, naud, tok, K32_API_SA_TOKEN_LEN + 1, &err)) {
		api_free(tok, K32_API_SA_TOKEN_LEN + 1);
		api_fail_set(&f, 422, "Invalid", "TokenRequest: %s", err.msg);
		goto fail;
	}
	cJSON_DeleteItemFromObject(req, "apiVersion");
	cJSON_DeleteItemFromObject(req, "kind");
	cJSON_DeleteItemFromObject(req, "status");
	cJSON_AddStringToObject(req, "apiVersion", "authentication.k8s.io/v1");
	cJSON_AddStringToObject(req, "kind", "TokenRequest");
	cJSON *md = api_meta(req);
	api_set_str(md, "name", rq->name);
	api_set_str(md, "namespace", rq->ns);
	char ts[32];
	api_format_time(c.iat, ts, sizeof(ts));
	api_set_str(md, "creationTimestamp", ts);
	cJSON *sp = cJSON_GetObjectItemCaseSensitive(req, "spec");
	if (!sp)
		sp = cJSON_AddObjectToObject(req, "spec");
	cJSON_DeleteItemFromObject(sp, "audiences");
	api_json_put(sp, "audiences", cJSON_CreateStringArray(aud, (int)naud));
	api_set_num(sp, "expirationSeconds", secs);
	cJSON *st = cJSON_AddObjectToObject(req, "status");
	cJSON_AddStringToObject(st, "token", tok);
	api_format_time(c.exp, ts, sizeof(ts));
	cJSON_AddStringToObject(st, "expirationTimestamp", ts);
	api_free(tok, K32_API_SA_TOKEN_LEN + 1);
	out->ctype[0] = 0;
	api_out_json(out, 201, req);
	return;
fail:
	cJSON_Delete(req);
	api_out_fail(out, &f);
}

void api_token_default_sa(struct api_server *api, const char *ns)
{
	char path[160], body[200];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts", ns);
	int n = snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":"
			 "{\"name\":\"default\",\"namespace\":\"%s\"}}",
			 ns);
	struct k32_buf out;
	struct k32_err err;
	int code = 0;
	k32_buf_init(&out, k32_default_allocator(), 16 * 1024, "default ServiceAccount");
	k32_status_t st =
	    api_do(api, "POST", path, "application/json", body, (size_t)n, &code, &out, &err);
	if (st || (code != 201 && code != 409))
		k32_log(K32_LOG_WARN, "api", "creating ServiceAccount %s/default: HTTP %d: %.120s",
			ns, code, st ? err.msg : k32_buf_cstr(&out));
	k32_buf_fini(&out);
}
