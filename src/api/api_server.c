/*
 * api_server.c - the API server's front: HTTP glue, routing, discovery and OpenAPI
 * endpoints, bearer-token authentication, authorization (admin and NodeRestriction),
 * SelfSubjectAccessReview / SelfSubjectRulesReview, and the in-process client api_do.
 *
 * Tokens file (<data_dir>/tokens): the static token file format of kube-apiserver, one
 * identity per line `token,user,uid,"group1,group2"`; `#` starts a comment. A user in group
 * system:masters is an admin; user system:node:<name> (group system:nodes) is that node.
 * On first start the file is created with one admin token. Unknown token -> 401.
 *
 * Context: api_http_* on the http loop task; api_do and token functions on any thread
 * (tokens are guarded by api->mu).
 */
#include "api/api_crd.h"
#include "api/api_srv.h"
#include "k32/boards/cardputer.h"
#include "k32/boards/cortexm.h"
#include "k32/boards/devkit.h"
#include "kmeta/kmeta.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_json.h"
#include "base/k32_log.h"

/* ---- small helpers --------------------------------------------------------------------- */

uint64_t api_now_s(void)
{
	return k32_plat()->wall_s();
}

void api_new_uid(char *buf, size_t cap)
{
	uint8_t r[16];
	if (k32_plat()->random(r, sizeof(r)) != K32_OK) {
		static uint32_t ctr;
		uint64_t t = k32_now_us();
		for (size_t i = 0; i < 16; i++)
			r[i] = (uint8_t)((t >> (i % 8 * 8)) ^ (++ctr * 131u));
	}
	r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
	r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
	snprintf(buf, cap, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
		 r[13], r[14], r[15]);
}

void api_out_text(struct api_out *out, int code, const char *ctype, const char *text, size_t len)
{
	struct k32_err err;
	out->code = code;
	if (ctype != out->ctype)
		snprintf(out->ctype, sizeof(out->ctype), "%s", ctype);
	k32_buf_reset(out->body);
	if (k32_buf_append(out->body, text, len, &err) != K32_OK) {
		static const char tl[] =
		    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
		    "\"Failure\",\"message\":\"the response is larger than the server's response "
		    "limit (K32_HTTP_MAX_RESPONSE_BYTES); use "
		    "limit/continue\",\"reason\":\"InternalError\",\"code\":500}";
		k32_buf_reset(out->body);
		k32_buf_append(out->body, tl, sizeof(tl) - 1, NULL);
		out->code = 500;
		snprintf(out->ctype, sizeof(out->ctype), "application/json");
	}
}

void api_out_json(struct api_out *out, int code, cJSON *j)
{
	char *s = j ? cJSON_PrintUnformatted(j) : NULL;
	cJSON_Delete(j);
	if (!s) {
		static const char oom[] =
		    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
		    "\"Failure\",\"message\":\"out of memory building the response; retry "
		    "later\",\"reason\":\"InternalError\",\"code\":500}";
		api_out_text(out, 500, "application/json", oom, sizeof(oom) - 1);
		return;
	}
	api_out_text(out, code, out->ctype[0] ? out->ctype : "application/json", s, strlen(s));
	cJSON_free(s);
}

void api_out_fail(struct api_out *out, const struct api_fail *f)
{
	out->ctype[0] = 0;
	api_out_json(out, f->code ? f->code : 500, api_fail_to_json(f));
}

void api_out_status_ok(struct api_out *out, int code, const char *kind, const char *name)
{
	cJSON *st = cJSON_CreateObject();
	if (st) {
		cJSON_AddStringToObject(st, "kind", "Status");
		cJSON_AddStringToObject(st, "apiVersion", "v1");
		api_json_put(st, "metadata", cJSON_CreateObject());
		cJSON_AddStringToObject(st, "status", "Success");
		cJSON *d = cJSON_AddObjectToObject(st, "details");
		cJSON_AddStringToObject(d, "name", name);
		cJSON_AddStringToObject(d, "kind", kind);
		cJSON_AddNumberToObject(st, "code", code);
	}
	out->ctype[0] = 0;
	api_out_json(out, code, st);
}

/* ---- tokens ---------------------------------------------------------------------------- */

static void api_identity_from(struct api_server *api, struct api_identity *id, const char *user,
			      const char *groups)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->user, sizeof(id->user), "%s", user);
	id->admin = strstr(groups, "system:masters") != NULL;
	id->rbac = api;
	/* the groups as given (trailing comma dropped) plus system:authenticated */
	size_t gl = strlen(groups);
	while (gl && groups[gl - 1] == ',')
		gl--;
	snprintf(id->groups, sizeof(id->groups), "%.*s%ssystem:authenticated", (int)gl, groups,
		 gl ? "," : "");
	static const char np[] = "system:node:";
	if (!strncmp(user, np, sizeof(np) - 1))
		snprintf(id->node, sizeof(id->node), "%s", user + sizeof(np) - 1);
}

/* Parses the tokens file text into api->tokens (caller holds mu). */
static k32_status_t api_tokens_parse(struct api_server *api, char *text, struct k32_err *err)
{
	api->token_count = 0;
	char *save = NULL;
	int lineno = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		char *f[4] = {0};
		char *p = line;
		for (int i = 0; i < 4 && p; i++) {
			f[i] = p;
			if (i == 3 && *p == '"') {
				f[i] = p + 1;
				char *q = strchr(p + 1, '"');
				if (q)
					*q = 0;
				break;
			}
			char *c = strchr(p, ',');
			if (c)
				*c = 0;
			p = c ? c + 1 : NULL;
		}
		/* strip a CR (a file edited on Windows) and trailing blanks of the token */
		size_t tl = f[0] ? strcspn(f[0], " \t\r") : 0;
		if (f[0] && f[0][tl] && !f[0][tl + strspn(f[0] + tl, " \t\r")])
			f[0][tl] = 0;
		if (f[1])
			f[1][strcspn(f[1], "\r")] = 0;
		if (!f[0] || !f[1] || !f[0][0] || !f[1][0] || strlen(f[0]) > API_TOKEN_LEN ||
		    f[0][strcspn(f[0], " \t\r\"")])
			return k32_err_set(
			    err, K32_ERR_CORRUPT, "api",
			    "%s line %d: expected token,user,uid,\"groups\" with a "
			    "token of 1..%d characters without blanks or quotes and a "
			    "user name; fix or remove the line",
			    api->tokens_path, lineno, API_TOKEN_LEN);
		for (size_t i = 0; i < api->token_count; i++)
			if (!strcmp(api->tokens[i].token, f[0]))
				return k32_err_set(err, K32_ERR_CORRUPT, "api",
						   "%s line %d: the token of user %s is already "
						   "user %s's; give each identity its own token",
						   api->tokens_path, lineno, f[1],
						   api->tokens[i].id.user);
		if (api->token_count >= K32_API_MAX_TOKENS)
			return k32_err_set(
			    err, K32_ERR_NO_RESOURCES, "api",
			    "%s: more than %d identities (K32_API_MAX_TOKENS); remove some",
			    api->tokens_path, K32_API_MAX_TOKENS);
		struct api_token *t = &api->tokens[api->token_count++];
		snprintf(t->token, sizeof(t->token), "%s", f[0]);
		api_identity_from(api, &t->id, f[1], f[3] ? f[3] : "");
	}
	/* a server without identities answers every request 401, and its kubeconfig would
	 * carry an empty token: refuse to start instead, saying what to do */
	if (api->token_count == 0)
		return k32_err_set(
		    err, K32_ERR_CORRUPT, "api",
		    "%s holds no identity (empty or only comments); add a line "
		    "token,admin,admin,\"system:masters\" or delete the file to have "
		    "one generated at start",
		    api->tokens_path);
	for (size_t i = 0; i < api->token_count; i++)
		if (api->tokens[i].id.admin)
			return K32_OK;
	return k32_err_set(err, K32_ERR_CORRUPT, "api",
			   "%s: no identity is in group system:masters, so no admin kubeconfig can "
			   "be written; add a line token,admin,admin,\"system:masters\"",
			   api->tokens_path);
}

static void api_random_token(char *out)
{
	uint8_t r[API_TOKEN_LEN / 2];
	if (k32_plat()->random(r, sizeof(r)) != K32_OK) {
		uint64_t t = k32_now_us();
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (uint8_t)(t >> (i % 8 * 8)) ^ (uint8_t)(i * 37);
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* Appends a line to the tokens file (caller holds mu) and reloads. */
static k32_status_t api_tokens_append(struct api_server *api, const char *line, struct k32_err *err)
{
	const struct k32_platform_ops *plat = k32_plat();
	struct k32_file *fp;
	k32_status_t st = plat->file_open_append(api->tokens_path, &fp, err);
	if (st)
		return st;
	st = plat->file_append(fp, line, strlen(line), err);
	if (!st)
		st = plat->file_sync(fp, err);
	plat->file_close(fp);
	return st;
}

static k32_status_t api_tokens_load(struct api_server *api, struct k32_err *err)
{
	const struct k32_platform_ops *plat = k32_plat();
	uint8_t *data = NULL;
	size_t len = 0;
	const struct k32_allocator *a = k32_default_allocator();
	k32_status_t st = plat->file_read_all(api->tokens_path, a, 64 * 1024, &data, &len, err);
	if (st == K32_ERR_NOT_FOUND) {
		char tok[API_TOKEN_LEN + 1];
		char line[256];
		api_random_token(tok);
		snprintf(line, sizeof(line),
			 "# kube32 static tokens: "
			 "token,user,uid,\"groups\"\n%s,admin,admin,\"system:masters\"\n",
			 tok);
		st = plat->file_write_atomic(api->tokens_path, line, strlen(line), err);
		if (st)
			return st;
		st = plat->file_read_all(api->tokens_path, a, 64 * 1024, &data, &len, err);
	}
	if (st)
		return st;
	st = api_tokens_parse(api, (char *)data, err);
	k32_free(a, data, len + 1);
	return st;
}

const char *api_server_admin_token(const struct api_server *api)
{
	for (size_t i = 0; i < api->token_count; i++)
		if (api->tokens[i].id.admin)
			return api->tokens[i].token;
	return "";
}

k32_status_t api_server_node_token(struct api_server *api, const char *node, char *out, size_t cap,
				   struct k32_err *err)
{
	char user[96];
	if (api_check_dns_subdomain(node))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "api", "node name \"%s\": %s",
				   K32_CLIP(node), api_check_dns_subdomain(node));
	/* the identity keeps the name whole (struct api_identity's node, "system:node:" user) */
	if (strlen(node) >= sizeof(((struct api_identity *)0)->node) ||
	    strlen(node) + sizeof("system:node:") > sizeof(user))
		return k32_err_set(
		    err, K32_ERR_OUT_OF_RANGE, "api",
		    "node name %s is %zu bytes; a node's identity keeps at most %zu; "
		    "use a shorter node name",
		    K32_CLIP(node), strlen(node), sizeof(((struct api_identity *)0)->node) - 1);
	if (cap < API_TOKEN_LEN + 1)
		return k32_err_set(err, K32_ERR_BUFFER_TOO_SMALL, "api",
				   "node token buffer is %zu bytes, needs %d", cap,
				   API_TOKEN_LEN + 1);
	snprintf(user, sizeof(user), "system:node:%s", node);
	k32_mutex_lock(&api->mu);
	k32_status_t st = K32_OK;
	for (size_t i = 0; i < api->token_count; i++) {
		if (!strcmp(api->tokens[i].id.user, user)) {
			snprintf(out, cap, "%s", api->tokens[i].token);
			goto out_unlock;
		}
	}
	if (api->token_count >= K32_API_MAX_TOKENS) {
		st = k32_err_set(err, K32_ERR_NO_RESOURCES, "api",
				 "cannot add node %s: %d identities already (K32_API_MAX_TOKENS)",
				 node, K32_API_MAX_TOKENS);
		goto out_unlock;
	}
	char tok[API_TOKEN_LEN + 1], line[400];
	api_random_token(tok);
	snprintf(line, sizeof(line), "%s,%s,%s,\"system:nodes\"\n", tok, user, user);
	if (api->auth) {
		st = api_tokens_append(api, line, err);
		if (st)
			goto out_unlock;
	}
	struct api_token *t = &api->tokens[api->token_count++];
	snprintf(t->token, sizeof(t->token), "%s", tok);
	api_identity_from(api, &t->id, user, "system:nodes");
	snprintf(out, cap, "%s", tok);
out_unlock:
	k32_mutex_unlock(&api->mu);
	return st;
}

/* ---- authorization --------------------------------------------------------------------- */

static bool api_is_read(const char *verb)
{
	return !strcmp(verb, "get") || !strcmp(verb, "list") || !strcmp(verb, "watch");
}

bool api_authorize(const struct api_identity *who, const char *verb, const struct api_resource *res,
		   const char *sub, const char *ns, const char *name, const cJSON *obj, char *why,
		   size_t cap)
{
	if (who->admin)
		return true;
	if (!who->node[0]) {
		struct api_rbac_attrs a = {.verb = verb,
					   .group = res ? res->group : "",
					   .resource = res ? res->plural : "",
					   .sub = sub ? sub : "",
					   .ns = ns ? ns : "",
					   .name = name ? name : ""};
		return api_rbac_allowed(who->rbac, who, &a, why, cap);
	}
	/* NodeRestriction: a node reads everything, writes only what is its own */
	if (api_is_read(verb) || !res)
		return true;
	const char *plural = res->plural;
	sub = sub ? sub : "";
	bool ok = false;
	switch (res->strategy->node_access) {
	case API_NODE_SELF:
		ok = name && !strcmp(name, who->node);
		break;
	case API_NODE_SELF_LEASE:
		ok = ns && !strcmp(ns, "kube-node-lease") && name && !strcmp(name, who->node);
		break;
	case API_NODE_NO_DELETE:
		ok = strcmp(verb, "delete") && strcmp(verb, "deletecollection");
		break;
	case API_NODE_BOUND_POD: {
		const cJSON *nn = obj ? k32_json_find(obj, "spec.nodeName") : NULL;
		ok = strcmp(verb, "create") && cJSON_IsString(nn) &&
		     !strcmp(nn->valuestring, who->node) &&
		     (!strcmp(sub, "status") || !strcmp(verb, "delete") || !strcmp(sub, ""));
		if (ok && !sub[0] && strcmp(verb, "delete"))
			ok = false; /* a node changes a pod's status, never its spec */
		break;
	}
	case API_NODE_STATUS_OF_NODE: {
		const cJSON *nn = obj ? k32_json_find(obj, "spec.node") : NULL;
		ok = !strcmp(sub, "status") && cJSON_IsString(nn) &&
		     !strcmp(nn->valuestring, who->node);
		break;
	}
	case API_NODE_ALL:
		ok = true;
		break;
	case API_NODE_NONE:
		break;
	}
	if (!ok)
		snprintf(why, cap,
			 "User \"%s\" cannot %s resource \"%s%s%s\" in API group \"%s\"%s%s: "
			 "node %s may only modify its own Node and Lease and the pods bound to it",
			 K32_CLIP(who->user), verb, plural, sub[0] ? "/" : "", sub, res->group,
			 ns && ns[0] ? " in the namespace " : "", ns && ns[0] ? ns : "",
			 K32_CLIP(who->node));
	return ok;
}

/* Labels a node may not set, change or remove on its own Node (kube's NodeRestriction:
 * they steer workloads to nodes, so only the admin sets them). */
static const char *const api_node_admin_labels[] = {"node-restriction.kubernetes.io/",
						    "node-role.kubernetes.io/"};
/* Set by the node when it registers; a node may not change it later (its capacity is its
 * board's). */
#define API_BOARD_LABEL "kube32.io/board"

static bool api_node_admin_label(const char *key)
{
	for (size_t i = 0; i < 2; i++)
		if (!strncmp(key, api_node_admin_labels[i], strlen(api_node_admin_labels[i])))
			return true;
	return false;
}

/* A quantity in thousandths (kmeta's one parser); false when it does not parse. */
static bool api_quantity_milli(const char *s, uint64_t *out)
{
	return s && kmeta_quantity_milli(s, out, NULL);
}

/*
 * The boards kube32 is built for, with what their profile gives pods (include/k32/boards/):
 * a node whose kube32.io/board names one may never claim more memory or pod slots than that,
 * not even when it first registers. Other boards (kube32-sim's host board, sized by its
 * command line) are bounded by what they registered with (api_node_restrict).
 */
static const struct {
	const char *board;
	uint64_t memory; /* bytes of the pod pool */
	uint64_t pods;
} api_board_caps[] = {
    {"cardputer", K32_CARDPUTER_POD_POOL_BYTES, K32_CARDPUTER_MAX_PODS},
    {"devkit", K32_DEVKIT_POD_POOL_BYTES, K32_DEVKIT_MAX_PODS},
    {"cortexm", K32_CORTEXM_POD_POOL_BYTES, K32_CORTEXM_MAX_PODS},
};

static k32_status_t api_node_board_caps(const struct api_identity *who,
					const struct api_resource *res, const cJSON *upd,
					const char *name, struct api_fail *f)
{
	const char *board = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    k32_json_find(upd, "metadata.labels"), API_BOARD_LABEL));
	for (size_t b = 0; board && b < sizeof(api_board_caps) / sizeof(api_board_caps[0]); b++) {
		if (strcmp(board, api_board_caps[b].board))
			continue;
		static const char *const lists[] = {"status.capacity", "status.allocatable"};
		static const char *const keys[] = {"memory", "pods"};
		uint64_t caps[] = {api_board_caps[b].memory, api_board_caps[b].pods};
		for (size_t i = 0; i < 2; i++) {
			for (size_t k = 0; k < 2; k++) {
				const cJSON *q = cJSON_GetObjectItemCaseSensitive(
				    k32_json_find(upd, lists[i]), keys[k]);
				uint64_t v = 0;
				if (!q)
					continue;
				if (api_quantity_milli(cJSON_GetStringValue(q), &v) &&
				    v <= caps[k] * 1000u)
					continue;
				char why[240];
				snprintf(why, sizeof(why),
					 "node may not claim %s.%s %.24s: a %s board gives pods at "
					 "most %" PRIu64 " (its profile, include/k32/boards/%s.h); "
					 "the admin may",
					 lists[i], keys[k],
					 cJSON_IsString(q) ? q->valuestring : "(not a quantity)",
					 board, caps[k], board);
				return api_fail_forbidden(f, res, name ? name : who->node, why);
			}
		}
	}
	return K32_OK;
}

k32_status_t api_node_restrict(const struct api_identity *who, const struct api_resource *res,
			       const cJSON *old, const cJSON *upd, struct api_fail *f)
{
	if (!who->node[0] || who->admin || !res->strategy->node_restricted)
		return K32_OK;
	const cJSON *ol = old ? k32_json_find(old, "metadata.labels") : NULL;
	const cJSON *nl = k32_json_find(upd, "metadata.labels");
	const cJSON *sets[2] = {nl, ol};
	const char *name = api_jstr(upd, "metadata.name");
	for (size_t s = 0; s < 2; s++) {
		const cJSON *l;
		cJSON_ArrayForEach(l, sets[s])
		{
			if (!l->string)
				continue;
			bool board = !strcmp(l->string, API_BOARD_LABEL);
			if (!api_node_admin_label(l->string) && !(board && old))
				continue;
			const cJSON *a = cJSON_GetObjectItemCaseSensitive(ol, l->string);
			const cJSON *b = cJSON_GetObjectItemCaseSensitive(nl, l->string);
			if (a && b && cJSON_Compare(a, b, true))
				continue;
			return api_fail_forbidden(
			    f, res, name ? name : who->node,
			    board ? "node may not change its label " API_BOARD_LABEL
				    " (its capacity is its board's); the admin may"
				  : "node may not set, change or remove labels with the prefixes "
				    "node-restriction.kubernetes.io/ or node-role.kubernetes.io/ "
				    "(NodeRestriction); the admin may");
		}
	}
	/* capacity and allocatable: never above what the node registered with */
	static const char *const lists[] = {"status.capacity", "status.allocatable"};
	for (size_t i = 0; old && i < 2; i++) {
		const cJSON *oc = k32_json_find(old, lists[i]);
		const cJSON *nc = k32_json_find(upd, lists[i]);
		const cJSON *q;
		cJSON_ArrayForEach(q, oc)
		{
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(nc, q->string);
			uint64_t ov = 0, nv = 0;
			bool oq = api_quantity_milli(cJSON_GetStringValue(q), &ov);
			if (!oq) /* the stored value is not a quantity: nothing to compare with */
				continue;
			if (!n)
				return api_fail_forbidden(
				    f, res, name ? name : who->node,
				    "node may not remove a resource from its "
				    "capacity or allocatable (NodeRestriction)");
			if (!api_quantity_milli(cJSON_GetStringValue(n), &nv) || nv > ov) {
				char why[200];
				snprintf(
				    why, sizeof(why),
				    "node may not raise %s.%s from %.24s to %.24s: it is bounded "
				    "by its board profile as registered; the admin may",
				    lists[i], q->string, cJSON_GetStringValue(q),
				    cJSON_IsString(n) ? n->valuestring : "a non-quantity");
				return api_fail_forbidden(f, res, name ? name : who->node, why);
			}
		}
		cJSON_ArrayForEach(q, nc)
		{
			if (q->string && !cJSON_GetObjectItemCaseSensitive(oc, q->string) && oc)
				return api_fail_forbidden(
				    f, res, name ? name : who->node,
				    "node may not add a resource to its capacity "
				    "or allocatable after registering "
				    "(NodeRestriction)");
		}
	}
	return api_node_board_caps(who, res, upd, name, f);
}

static void api_ssar(struct api_server *api, struct api_req *rq, struct api_out *out, cJSON *obj)
{
	if (!rq->who->admin && !rq->who->node[0]) {
		api_rbac_ssar(api, rq, out, obj);
		return;
	}
	const cJSON *ra = k32_json_find(obj, "spec.resourceAttributes");
	const cJSON *nra = k32_json_find(obj, "spec.nonResourceAttributes");
	bool allowed;
	char why[256] = "";
	if (ra) {
		const char *verb = cJSON_GetStringValue(cJSON_GetObjectItem(ra, "verb"));
		const char *group = cJSON_GetStringValue(cJSON_GetObjectItem(ra, "group"));
		const char *resource = cJSON_GetStringValue(cJSON_GetObjectItem(ra, "resource"));
		const char *ns = cJSON_GetStringValue(cJSON_GetObjectItem(ra, "namespace"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(ra, "name"));
		const char *sub = cJSON_GetStringValue(cJSON_GetObjectItem(ra, "subresource"));
		const struct api_resource *all[API_REGISTRY_MAX], *res = NULL;
		size_t n = api_registry_list(all, API_REGISTRY_MAX);
		for (size_t i = 0; resource && i < n; i++)
			if (!strcmp(all[i]->plural, resource) &&
			    (!group || !strcmp(all[i]->group, group) || !strcmp(group, "*")))
				res = all[i];
		if (!res && !rq->who->admin) {
			allowed = false;
			snprintf(why, sizeof(why), "resource %s is not served",
				 resource ? resource : "");
		} else {
			allowed = api_authorize(rq->who, verb ? verb : "", res, sub, ns, name, NULL,
						why, sizeof(why));
			/* a node may write pods bound to it: "maybe" is reported as allowed
			 * only for the admin; nodes get the precise per-object check later */
		}
	} else if (nra) {
		allowed = rq->who->admin || rq->who->node[0];
	} else {
		struct api_fail *f = &rq->fail; /* off the stack (2.8 KB) */
		api_fail_clear(f);
		api_fail_add_cause(f, "FieldValueRequired", "spec.resourceAttributes",
				   "Required value: exactly one of nonResourceAttributes or "
				   "resourceAttributes must be specified");
		api_fail_invalid(f, "SelfSubjectAccessReview", "");
		api_out_fail(out, f);
		return;
	}
	cJSON_DeleteItemFromObject(obj, "status");
	cJSON *st = cJSON_AddObjectToObject(obj, "status");
	cJSON_AddBoolToObject(st, "allowed", allowed);
	if (!allowed && why[0])
		cJSON_AddStringToObject(st, "reason", why);
	else if (allowed)
		cJSON_AddStringToObject(st, "reason",
					rq->who->admin ? "admin (system:masters)" : "node");
	out->ctype[0] = 0;
	api_out_json(out, 201, cJSON_Duplicate(obj, true));
}

static void api_ssrr(struct api_server *api, struct api_req *rq, struct api_out *out, cJSON *obj)
{
	if (!rq->who->admin && !rq->who->node[0]) {
		api_rbac_ssrr(api, rq, out, obj);
		return;
	}
	cJSON_DeleteItemFromObject(obj, "status");
	cJSON *st = cJSON_AddObjectToObject(obj, "status");
	cJSON *rr = cJSON_AddArrayToObject(st, "resourceRules");
	cJSON *nr = cJSON_AddArrayToObject(st, "nonResourceRules");
	cJSON *r = cJSON_CreateObject();
	if (rq->who->admin) {
		api_json_put(r, "verbs", cJSON_CreateStringArray((const char *[]){"*"}, 1));
		api_json_put(r, "apiGroups", cJSON_CreateStringArray((const char *[]){"*"}, 1));
		api_json_put(r, "resources", cJSON_CreateStringArray((const char *[]){"*"}, 1));
	} else {
		api_json_put(r, "verbs",
			     cJSON_CreateStringArray((const char *[]){"get", "list", "watch"}, 3));
		api_json_put(r, "apiGroups", cJSON_CreateStringArray((const char *[]){"*"}, 1));
		api_json_put(r, "resources", cJSON_CreateStringArray((const char *[]){"*"}, 1));
	}
	cJSON_AddItemToArray(rr, r);
	cJSON *n = cJSON_CreateObject();
	api_json_put(n, "verbs", cJSON_CreateStringArray((const char *[]){"get"}, 1));
	api_json_put(n, "nonResourceURLs", cJSON_CreateStringArray((const char *[]){"*"}, 1));
	cJSON_AddItemToArray(nr, n);
	cJSON_AddBoolToObject(st, "incomplete", false);
	out->ctype[0] = 0;
	api_out_json(out, 201, cJSON_Duplicate(obj, true));
}

/* SelfSubjectReview: who the caller is (kubectl auth whoami). */
static void api_ssr(struct api_req *rq, struct api_out *out, cJSON *obj)
{
	cJSON_DeleteItemFromObject(obj, "status");
	cJSON *st = cJSON_AddObjectToObject(obj, "status");
	cJSON *ui = cJSON_AddObjectToObject(st, "userInfo");
	cJSON_AddStringToObject(ui, "username", rq->who->user);
	cJSON *groups = cJSON_AddArrayToObject(ui, "groups");
	char g[K32_API_GROUPS_LEN];
	snprintf(g, sizeof(g), "%s", rq->who->groups);
	char *save = NULL;
	for (char *t = strtok_r(g, ",", &save); t; t = strtok_r(NULL, ",", &save))
		cJSON_AddItemToArray(groups, cJSON_CreateString(t));
	out->ctype[0] = 0;
	api_out_json(out, 201, cJSON_Duplicate(obj, true));
}

/* ---- routing --------------------------------------------------------------------------- */

/* Splits path into at most cap segments (in place); returns the count. */
static size_t api_split(char *path, char **seg, size_t cap)
{
	size_t n = 0;
	char *p = path;
	while (*p == '/')
		p++;
	while (*p && n < cap) {
		seg[n++] = p;
		char *s = strchr(p, '/');
		if (!s)
			break;
		*s = 0;
		p = s + 1;
	}
	if (n && !seg[n - 1][0])
		n--;
	return n;
}

static void api_not_found_path(struct api_out *out, const char *path)
{
	struct api_fail f;
	api_fail_clear(&f);
	api_fail_set(&f, 404, "NotFound",
		     "the server could not find the requested resource (path %.200s)", path);
	api_out_fail(out, &f);
}

/* /openapi/v2 as protobuf when the client asks for it (kubectl 1.27/1.28), else as JSON. */
static void api_openapi_v2_serve(const struct api_req *rq, struct api_out *out)
{
	struct api_fail f;
	api_fail_clear(&f);
	cJSON *doc = api_openapi_v2();
	if (!doc) {
		api_fail_set(&f, 500, "InternalError", "out of memory building /openapi/v2");
		api_out_fail(out, &f);
		return;
	}
	if (!strstr(rq->accept, "protobuf")) {
		api_out_json(out, 200, doc);
		return;
	}
	struct k32_err err;
	k32_buf_reset(out->body);
	if (api_openapi_v2_pb(doc, out->body, &err)) {
		k32_buf_reset(out->body);
		api_fail_set(&f, 500, "InternalError", "/openapi/v2: %s", err.msg);
		api_out_fail(out, &f);
	} else {
		out->code = 200;
		snprintf(out->ctype, sizeof(out->ctype), "%s",
			 "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
	}
	cJSON_Delete(doc);
}

static bool api_route_resource(struct api_req *rq, char **seg, size_t n, struct api_fail *f)
{
	/* seg: [namespaces, ns,] plural [, name [, sub]] */
	size_t i = 0;
	const char *plural = NULL;
	if (n >= 1 && !strcmp(seg[0], "namespaces") && n >= 3 &&
	    !(n == 3 && (!strcmp(seg[2], "status") || !strcmp(seg[2], "finalize")))) {
		snprintf(rq->ns, sizeof(rq->ns), "%s", seg[1]);
		i = 2;
	}
	if (i >= n)
		return false;
	plural = seg[i++];
	if (i < n)
		snprintf(rq->name, sizeof(rq->name), "%s", seg[i++]);
	if (i < n)
		snprintf(rq->sub, sizeof(rq->sub), "%s", seg[i++]);
	if (i < n)
		return false;
	rq->res = api_registry_find(rq->group, rq->version, plural);
	if (!rq->res)
		return false;
	if (rq->ns[0] && !rq->res->namespaced) {
		api_fail_set(f, 404, "NotFound",
			     "the server could not find the requested resource: %s is "
			     "cluster-scoped; drop the namespaces/%s part",
			     plural, rq->ns);
		return false;
	}
	if (!strcmp(rq->sub, "finalize"))
		snprintf(rq->sub, sizeof(rq->sub), "status");
	if (rq->sub[0]) {
		static const struct {
			const char *name;
			uint32_t bit;
		} subs[] = {{"status", API_SUB_STATUS},	  {"scale", API_SUB_SCALE},
			    {"binding", API_SUB_BINDING}, {"eviction", API_SUB_EVICTION},
			    {"log", API_SUB_LOG},	  {"token", API_SUB_TOKEN}};
		if (!strcmp(plural, "pods") &&
		    (!strcmp(rq->sub, "exec") || !strcmp(rq->sub, "attach") ||
		     !strcmp(rq->sub, "portforward") || !strcmp(rq->sub, "proxy"))) {
			api_fail_set(f, 400, "BadRequest",
				     "pods/%s is not supported by kube32 (a pod is a Wasm module); "
				     "reach its HTTP handler with kubectl get --raw "
				     "/api/v1/namespaces/%s/pods/%s/proxy/",
				     rq->sub, rq->ns, rq->name);
			return false;
		}
		if (!strcmp(plural, "pods") && !strcmp(rq->sub, "ephemeralcontainers")) {
			/* kubectl debug reads details of this 404 (and panicked without them) */
			api_fail_set(
			    f, 404, "NotFound",
			    "pods/ephemeralcontainers is not supported by kube32: a pod is "
			    "one WebAssembly module, with no containers to add; read its "
			    "output with kubectl logs %s, or deploy a debug build of the "
			    "module",
			    rq->name);
			snprintf(f->kind, sizeof(f->kind), "pods");
			return false;
		}
		bool ok = false;
		for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++)
			if (!strcmp(rq->sub, subs[k].name) && (rq->res->subresources & subs[k].bit))
				ok = true;
		if (!ok)
			return false;
	}
	return true;
}

bool api_route_target(struct api_req *rq, struct api_fail *f)
{
	char buf[512];
	char *seg[10];
	snprintf(buf, sizeof(buf), "%s", rq->path);
	size_t n = api_split(buf, seg, 10);
	if (n >= 3 && !strcmp(seg[0], "api")) {
		rq->group[0] = 0;
		snprintf(rq->version, sizeof(rq->version), "%s", seg[1]);
		return api_route_resource(rq, seg + 2, n - 2, f);
	}
	if (n >= 4 && !strcmp(seg[0], "apis")) {
		snprintf(rq->group, sizeof(rq->group), "%s", seg[1]);
		snprintf(rq->version, sizeof(rq->version), "%s", seg[2]);
		return api_route_resource(rq, seg + 3, n - 3, f);
	}
	return false;
}

static void api_route(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	char buf[512];
	char *seg[10];
	snprintf(buf, sizeof(buf), "%s", rq->path);
	size_t n = api_split(buf, seg, 10);
	bool get = !strcmp(rq->method, "GET");
	struct api_fail *f = &rq->fail;
	api_fail_clear(f);
	/* non-resource paths (discovery under /api and /apis is open to every user) */
	if (!(n >= 1 && (!strcmp(seg[0], "api") || !strcmp(seg[0], "apis"))) &&
	    !api_rbac_gate(api, rq, out))
		return;
	if (n == 1 && !strcmp(seg[0], "version")) {
		api_out_json(out, 200, api_discovery_version());
		return;
	}
	if (api_health_path(rq->path)) {
		api_health(api, rq, out);
		return;
	}
	if (n == 1 && !strcmp(seg[0], "metrics") && get) {
		api_metrics_serve(api, out);
		return;
	}
	if (n == 2 && !strcmp(seg[0], "openapi") && !strcmp(seg[1], "v2")) {
		api_openapi_v2_serve(rq, out);
		return;
	}
	if (n >= 1 && !strcmp(seg[0], "openapi")) {
		cJSON *doc = NULL;
		if (n == 2 && !strcmp(seg[1], "v3"))
			doc = api_openapi_index();
		else if (n == 4 && !strcmp(seg[1], "v3") && !strcmp(seg[2], "api"))
			doc = api_openapi_group_version("", seg[3]);
		else if (n == 5 && !strcmp(seg[1], "v3") && !strcmp(seg[2], "apis"))
			doc = api_openapi_group_version(seg[3], seg[4]);
		if (!doc) {
			api_not_found_path(out, rq->path);
			return;
		}
		api_out_json(out, 200, doc);
		return;
	}
	bool core = n >= 1 && !strcmp(seg[0], "api");
	bool apis = n >= 1 && !strcmp(seg[0], "apis");
	if ((core || apis) && n == 1 && get) {
		enum api_disc_fmt fmt = api_discovery_pick(rq->accept);
		if (fmt == API_DISC_V2)
			snprintf(out->ctype, sizeof(out->ctype), "%s", API_CT_DISC_V2);
		else if (fmt == API_DISC_V2BETA1)
			snprintf(out->ctype, sizeof(out->ctype), "%s", API_CT_DISC_V2BETA1);
		api_out_json(out, 200, api_discovery_root(core, fmt, api->server_addr));
		return;
	}
	if (core && n == 2 && get) {
		cJSON *l = api_discovery_group_version("", seg[1]);
		if (l)
			api_out_json(out, 200, l);
		else
			api_not_found_path(out, rq->path);
		return;
	}
	if (apis && n == 2 && get) {
		cJSON *g = api_discovery_group(seg[1]);
		if (g)
			api_out_json(out, 200, g);
		else
			api_not_found_path(out, rq->path);
		return;
	}
	if (apis && n == 3 && get) {
		cJSON *l = api_discovery_group_version(seg[1], seg[2]);
		if (l)
			api_out_json(out, 200, l);
		else
			api_not_found_path(out, rq->path);
		return;
	}
	size_t base;
	if (core && n >= 3) {
		rq->group[0] = 0;
		snprintf(rq->version, sizeof(rq->version), "%s", seg[1]);
		base = 2;
	} else if (apis && n >= 4) {
		snprintf(rq->group, sizeof(rq->group), "%s", seg[1]);
		snprintf(rq->version, sizeof(rq->version), "%s", seg[2]);
		base = 3;
	} else {
		api_not_found_path(out, rq->path);
		return;
	}
	if (!api_route_resource(rq, seg + base, n - base, f)) {
		if (f->code)
			api_out_fail(out, f);
		else
			api_not_found_path(out, rq->path);
		return;
	}
	if (!api_rbac_gate(api, rq, out))
		return;
	if (rq->res->subresources & API_SUB_TOKEN && !strcmp(rq->sub, "token")) {
		api_token_request(api, rq, out);
		return;
	}
	/* reviews: computed, never stored */
	if (rq->res->strategy->review) {
		if (strcmp(rq->method, "POST") || rq->name[0]) {
			api_fail_set(f, 405, "MethodNotAllowed",
				     "%s %s is not supported: only create (POST) is", rq->method,
				     rq->res->plural);
			api_out_fail(out, f);
			return;
		}
		cJSON *obj = NULL;
		if (api_decode_body(rq, &obj, f)) {
			api_out_fail(out, f);
			return;
		}
		if (!cJSON_IsObject(obj)) {
			cJSON_Delete(obj);
			api_fail_set(f, 400, "BadRequest", "the request body is not a JSON object");
			api_out_fail(out, f);
			return;
		}
		char av[API_VERSION_LEN];
		cJSON_DeleteItemFromObject(obj, "apiVersion");
		cJSON_DeleteItemFromObject(obj, "kind");
		cJSON_AddStringToObject(obj, "apiVersion",
					api_resource_api_version(rq->res, av, sizeof(av)));
		cJSON_AddStringToObject(obj, "kind", rq->res->kind);
		if (!strcmp(rq->res->plural, "selfsubjectaccessreviews"))
			api_ssar(api, rq, out, obj);
		else if (!strcmp(rq->res->plural, "selfsubjectrulesreviews"))
			api_ssrr(api, rq, out, obj);
		else
			api_ssr(rq, out, obj);
		cJSON_Delete(obj);
		return;
	}
	api_crud(api, rq, out);
	/* a CRD written: its resources appear, change or go (with their objects) */
	if (rq->res->strategy == &api_strategy_crd && strcmp(rq->method, "GET") && out->code < 300)
		api_crd_sync(api, true);
	/* a ClusterRole written: the aggregated ones follow (clusterrole-aggregation) */
	if (!strcmp(rq->res->plural, "clusterroles") && strcmp(rq->method, "GET") &&
	    out->code < 300 && !api_dry_run(rq))
		api_rbac_aggregate(api);
	/* a new namespace gets its ServiceAccount "default" (kube's serviceaccount controller) */
	if (api->auth && out->code == 201 && rq->res->strategy->is_namespace && !api_dry_run(rq) &&
	    !out->gzip) {
		cJSON *o = cJSON_ParseWithLength(k32_buf_cstr(out->body), out->body->len);
		const char *name = api_jstr(o, "metadata.name");
		const char *kind = api_jstr(o, "kind");
		if (name && kind && !strcmp(kind, "Namespace"))
			api_token_default_sa(api, name);
		cJSON_Delete(o);
	}
}

/* ---- HTTP glue ------------------------------------------------------------------------- */

static void api_header_copy(const struct http_request *req, const char *name, char *dst, size_t cap)
{
	struct k32_str v;
	dst[0] = 0;
	if (http_request_header(req, name, &v))
		k32_str_copy(v, dst, cap);
}

/* Adds `Warning: 299 - "text"` (RFC 7234's warn-code 299, agent "-", as kube-apiserver
 * sends them); quotes and backslashes escaped, control characters (a field name may hold
 * any) shown as '?' so the header stays one line. */
static void api_warning_header(struct http_response *resp, const char *text)
{
	char v[2 * K32_API_WARNING_LEN + 16];
	size_t n = (size_t)snprintf(v, sizeof(v), "299 - \"");
	for (const char *p = text; *p && n + 4 < sizeof(v); p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			v[n++] = '\\';
		v[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	v[n++] = '"';
	v[n] = 0;
	http_response_header(resp, "Warning", v);
}

/* Whether the first n bytes of a and b are equal ignoring ASCII case (header names). */
static bool api_ascii_ieq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] + 32) : a[i];
		char y = b[i] >= 'A' && b[i] <= 'Z' ? (char)(b[i] + 32) : b[i];
		if (x != y)
			return false;
	}
	return true;
}

static bool api_header_is(const struct http_header *h, const char *name)
{
	size_t n = strlen(name);
	return h->name.len == n && api_ascii_ieq(h->name.p, name, n);
}

/*
 * Impersonation (kubectl --as USER [--as-group G]...: Impersonate-User, Impersonate-Group,
 * Impersonate-Uid, Impersonate-Extra-*): only the admin may impersonate (kube-apiserver's
 * "impersonate" verb, held by system:masters); the request then runs as that user with
 * those groups: admin when they include system:masters, node N when the user is
 * system:node:N. Returns false with f filled (403 for other callers, 400 for groups
 * without a user or a bad value); true when there is nothing to do or rq->who was switched.
 */
static bool api_impersonate(struct api_server *api, struct api_req *rq,
			    const struct http_request *req, struct api_fail *f)
{
	char user[sizeof(rq->as.user)] = "", groups[256] = "";
	bool any = false;
	size_t gl = 0;
	for (size_t i = 0; i < req->header_count; i++) {
		const struct http_header *h = &req->headers[i];
		bool is_user = api_header_is(h, "Impersonate-User");
		bool is_group = api_header_is(h, "Impersonate-Group");
		if (!is_user && !is_group && !api_header_is(h, "Impersonate-Uid") &&
		    !(h->name.len > 18 && api_ascii_ieq(h->name.p, "Impersonate-Extra-", 18)))
			continue;
		any = true;
		if (is_user && !k32_str_copy(h->value, user, sizeof(user))) {
			api_fail_set(f, 400, "BadRequest",
				     "Impersonate-User is over %zu bytes; name a shorter user",
				     sizeof(user) - 1);
			return false;
		}
		if (is_group) {
			if (gl + h->value.len + 2 > sizeof(groups)) {
				api_fail_set(
				    f, 400, "BadRequest",
				    "Impersonate-Group headers are over %zu bytes together",
				    sizeof(groups) - 2);
				return false;
			}
			memcpy(groups + gl, h->value.p, h->value.len);
			gl += h->value.len;
			groups[gl++] = ',';
			groups[gl] = 0;
		}
	}
	if (!any)
		return true;
	if (!user[0]) {
		api_fail_set(f, 400, "BadRequest",
			     "impersonation of groups or extra fields without a user "
			     "(Impersonate-User) is not allowed; kubectl: add --as USER");
		return false;
	}
	if (k32_utf8_check(user, strlen(user), NULL) || k32_utf8_check(groups, gl, NULL)) {
		api_fail_set(f, 400, "BadRequest",
			     "Impersonate-User and Impersonate-Group must be UTF-8 without NUL");
		return false;
	}
	/* kube-apiserver: the impersonate verb on users (serviceaccounts for a ServiceAccount
	 * user) and groups, from RBAC; the admin holds it */
	if (api_rbac_may_impersonate(api, rq->who, user, groups, f))
		return false;
	static const char sa[] = "system:serviceaccount:";
	const char *c =
	    !strncmp(user, sa, sizeof(sa) - 1) ? strchr(user + sizeof(sa) - 1, ':') : NULL;
	if (c && !gl) { /* a ServiceAccount user without groups gets its own */
		char ns[64];
		snprintf(ns, sizeof(ns), "%.*s", (int)(c - user - (sizeof(sa) - 1)),
			 user + sizeof(sa) - 1);
		api_sa_groups(ns, groups, sizeof(groups));
	}
	api_identity_from(api, &rq->as, user, groups);
	rq->who = &rq->as;
	return true;
}

static void api_serve(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail;
	api_fail_clear(f);
	uint64_t t0 = k32_now_us();
	rq->table = strstr(rq->accept, "as=Table") != NULL;
	if (api_proxy_route(api, rq, out)) {
		/* pods/proxy, services/proxy: the query is the pod's (api_proxy.c) */
	} else if (api_query_check(rq, f)) {
		api_out_fail(out, f);
		api_fail_clear(f);
		(void)api_route_target(rq, f); /* only to name the resource in /metrics */
	} else
		api_route(api, rq, out);
	api_metrics_record(&api->metrics, rq, out->code, k32_now_us() - t0);
}

void api_http_release_identity(struct http_request *req)
{
	struct api_identity *id = req->identity;
	if (id && id->owned) {
		api_free(id, sizeof(*id));
		req->identity = NULL;
	}
}

bool api_http_authenticate(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct api_server *api = ctx;
	if (!api->auth) {
		req->identity = &api->admin;
		return true;
	}
	const struct api_identity *id = NULL;
	k32_mutex_lock(&api->mu);
	for (size_t i = 0; i < api->token_count && req->bearer_token.len; i++) {
		const char *t = api->tokens[i].token;
		if (strlen(t) == req->bearer_token.len &&
		    !memcmp(t, req->bearer_token.p, req->bearer_token.len))
			id = &api->tokens[i].id;
	}
	k32_mutex_unlock(&api->mu);
	if (!id && req->bearer_token.len && req->bearer_token.len <= K32_API_SA_TOKEN_LEN &&
	    memchr(req->bearer_token.p, '.', req->bearer_token.len)) {
		/* a ServiceAccount token: verified here, once; the identity goes to the handler
		 * with the request (owned: the handler frees it) */
		struct api_identity *sa = api_zalloc(sizeof(*sa));
		char why[160];
		if (sa && api_token_identity(api, req->bearer_token.p, req->bearer_token.len, sa,
					     why, sizeof(why))) {
			sa->owned = true;
			req->identity = sa;
			return true;
		}
		if (sa)
			api_free(sa, sizeof(*sa));
	}
	/* discovery of the version is open (the kubectl dispatcher asks before it has a
	 * token for the right binary; kube-apiserver allows /version anonymously too), and so
	 * are the health checks (kube-apiserver's system:public-info-viewer role) */
	char path[32];
	if (!id && ((req->path.len == 8 && !memcmp(req->path.p, "/version", 8)) ||
		    (req->path.len < sizeof(path) && k32_str_copy(req->path, path, sizeof(path)) &&
		     api_health_path(path)))) {
		req->identity = NULL;
		return true;
	}
	if (id) {
		req->identity = (void *)id;
		return true;
	}
	static const char body[] =
	    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
	    "\"message\":\"Unauthorized: a valid bearer token is required (see <data-dir>/tokens "
	    "or the generated kubeconfig)\",\"reason\":\"Unauthorized\",\"code\":401}";
	http_response_set(resp, 401, "application/json", body, sizeof(body) - 1);
	return false;
}

void api_http_handler(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct api_server *api = ctx;
	static const struct api_identity anonymous = {.user = "system:anonymous",
						      .groups = "system:unauthenticated"};
	struct api_req *rq = api_zalloc(sizeof(*rq));
	if (!rq) {
		static const char oom[] =
		    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
		    "\"Failure\",\"message\":\"out of memory; retry "
		    "later\",\"reason\":\"InternalError\",\"code\":500}";
		http_response_set(resp, 500, "application/json", oom, sizeof(oom) - 1);
		api_http_release_identity(req);
		return;
	}
	rq->method = req->method;
	rq->query = req->query;
	if (http_url_decode(req->path, false, rq->path, sizeof(rq->path), NULL) != K32_OK)
		snprintf(rq->path, sizeof(rq->path), "/invalid-path");
	api_header_copy(req, "Accept", rq->accept, sizeof(rq->accept));
	api_header_copy(req, "Content-Type", rq->ctype, sizeof(rq->ctype));
	api_header_copy(req, "User-Agent", rq->user_agent, sizeof(rq->user_agent));
	api_header_copy(req, "Upgrade", rq->upgrade, sizeof(rq->upgrade));
	api_header_copy(req, "X-Stream-Protocol-Version", rq->stream_protocol,
			sizeof(rq->stream_protocol));
	api_header_copy(req, "Sec-WebSocket-Key", rq->ws_key, sizeof(rq->ws_key));
	api_header_copy(req, "Sec-WebSocket-Version", rq->ws_version, sizeof(rq->ws_version));
	api_header_copy(req, "Sec-WebSocket-Protocol", rq->ws_protocol, sizeof(rq->ws_protocol));
	rq->body = req->body;
	rq->body_len = req->body_len;
	rq->who = req->identity ? req->identity : &anonymous;
	rq->http = resp;
	rq->gzip = http_request_accepts_gzip(req);
	struct api_out out = {.code = 200, .body = &resp->body};
	if (!req->identity && strcmp(rq->path, "/version") && !api_health_path(rq->path)) {
		api_fail_clear(&rq->fail);
		api_fail_set(&rq->fail, 401, "Unauthorized", "Unauthorized");
		api_out_fail(&out, &rq->fail);
	} else {
		api_fail_clear(&rq->fail);
		if (req->identity && ((struct api_identity *)req->identity)->owned) {
			/* the ServiceAccount authenticate verified: into the request */
			rq->as = *(struct api_identity *)req->identity;
			rq->as.owned = false;
			rq->who = &rq->as;
			api_http_release_identity(req);
			req->identity = &rq->as;
		}
		if (rq->fail.code)
			api_out_fail(&out, &rq->fail);
		else if (req->identity && !api_impersonate(api, rq, req, &rq->fail))
			api_out_fail(&out, &rq->fail);
		else
			api_serve(api, rq, &out);
	}
	if (out.code > 0) { /* 0: the response became a stream */
		resp->status = out.code;
		http_response_header(resp, "Content-Type",
				     out.ctype[0] ? out.ctype : "application/json");
		http_response_header(resp, "Cache-Control", "no-cache, private");
		for (size_t i = 0; i < rq->warn.count && i < K32_API_MAX_WARNINGS; i++)
			api_warning_header(resp, rq->warn.text[i]);
		if (out.gzip) { /* compressed here already; the http layer leaves it */
			http_response_header(resp, "Content-Encoding", "gzip");
			http_response_header(resp, "Vary", "Accept-Encoding");
		}
	}
	api_free(rq, sizeof(*rq));
}

k32_status_t api_do(struct api_server *api, const char *method, const char *target,
		    const char *content_type, const void *body, size_t body_len, int *out_code,
		    struct k32_buf *outbuf, struct k32_err *err)
{
	return api_do_as(api, NULL, method, target, content_type, body, body_len, out_code, outbuf,
			 err);
}

k32_status_t api_do_as(struct api_server *api, const char *token, const char *method,
		       const char *target, const char *content_type, const void *body,
		       size_t body_len, int *out_code, struct k32_buf *outbuf, struct k32_err *err)
{
	const struct api_identity *who = &api->admin;
	if (token) {
		who = NULL;
		k32_mutex_lock(&api->mu);
		for (size_t i = 0; i < api->token_count; i++)
			if (!strcmp(api->tokens[i].token, token))
				who = &api->tokens[i].id;
		k32_mutex_unlock(&api->mu);
	}
	struct api_req *rq = api_zalloc(sizeof(*rq));
	if (!rq)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api", "api_do: out of memory");
	char why[160];
	if (!who && api_token_identity(api, token, strlen(token), &rq->as, why, sizeof(why)))
		who = &rq->as;
	if (!who) {
		api_free(rq, sizeof(*rq));
		return k32_err_set(err, K32_ERR_ACCESS_DENIED, "api",
				   "api_do_as: unknown token; use one from the tokens file or a "
				   "ServiceAccount token");
	}
	const char *q = strchr(target, '?');
	size_t plen = q ? (size_t)(q - target) : strlen(target);
	struct k32_str raw = {target, plen};
	rq->method = method;
	if (http_url_decode(raw, false, rq->path, sizeof(rq->path), NULL) != K32_OK) {
		api_free(rq, sizeof(*rq));
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, "api",
		    "api_do: bad path \"%.80s\" (percent-encoding or over %zu bytes)", target,
		    sizeof(rq->path) - 1);
	}
	rq->query = q ? k32_str_from(q + 1) : k32_str_from("");
	snprintf(rq->accept, sizeof(rq->accept), "application/json");
	snprintf(rq->ctype, sizeof(rq->ctype), "%s", content_type ? content_type : "");
	rq->body = body ? body : (const uint8_t *)"";
	rq->body_len = body_len;
	rq->who = who;
	struct api_out out = {.code = 200, .body = outbuf};
	api_serve(api, rq, &out);
	*out_code = out.code;
	api_free(rq, sizeof(*rq));
	return K32_OK;
}

/* ---- lifecycle ------------------------------------------------------------------------- */

static k32_status_t api_bootstrap(struct api_server *api, struct k32_err *err)
{
	static const char *const names[] = {"default", "kube-system", "kube-public",
					    "kube-node-lease"};
	for (size_t i = 0; i < 4; i++) {
		char body[160];
		int len = snprintf(
		    body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		    names[i]);
		struct k32_buf out;
		int code = 0;
		k32_buf_init(&out, k32_default_allocator(), 64 * 1024, "bootstrap response");
		k32_status_t st = api_do(api, "POST", "/api/v1/namespaces", "application/json",
					 body, (size_t)len, &code, &out, err);
		if (!st && code != 201 && code != 409)
			st = k32_err_set(err, K32_ERR_INTERNAL, "api",
					 "creating namespace %s at start: HTTP %d: %.80s", names[i],
					 code, k32_buf_cstr(&out));
		k32_buf_fini(&out);
		if (st)
			return st;
	}
	/* RBAC's objects matter only when there are tokens (without a data dir every request
	 * is the admin's): the default ServiceAccounts and ClusterRoles */
	if (!api->auth)
		return K32_OK;
	for (size_t i = 0; i < 4; i++)
		api_token_default_sa(api, names[i]);
	api_rbac_bootstrap(api);
	return K32_OK;
}

k32_status_t api_server_new(const struct api_config *cfg, struct api_server **out,
			    struct k32_err *err)
{
	*out = NULL;
	if (!cfg || !cfg->store)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "api",
				   "api_server_new: a store is required");
	struct api_server *api = api_zalloc(sizeof(*api));
	if (!api)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api", "api_server_new: out of memory");
	api->store = cfg->store;
	api->bookmark_s = cfg->bookmark_s ? cfg->bookmark_s : K32_API_BOOKMARK_S;
	api->log_fn = cfg->log_fn;
	api->log_ctx = cfg->log_ctx;
	k32_plat()->mutex_init(&api->mu);
	api_rbac_cache_init(api);
	api_cache_init(&api->lists);
	api_metrics_init(&api->metrics);
	snprintf(api->admin.user, sizeof(api->admin.user), "admin");
	snprintf(api->admin.groups, sizeof(api->admin.groups),
		 "system:masters,system:authenticated");
	api->admin.admin = true;
	api->admin.rbac = api;
	snprintf(api->server_addr, sizeof(api->server_addr), "%s",
		 cfg->server_addr ? cfg->server_addr : "");
	k32_status_t st = K32_OK;
	if (cfg->data_dir) {
		api->auth = true;
		int n = snprintf(api->tokens_path, sizeof(api->tokens_path), "%s/tokens",
				 cfg->data_dir);
		if (n < 0 || (size_t)n >= sizeof(api->tokens_path)) {
			st = k32_err_set(err, K32_ERR_INVALID_ARGS, "api",
					 "data dir path is too long (%d bytes, limit %zu)", n,
					 sizeof(api->tokens_path) - 8);
			goto out_free;
		}
		st = api_tokens_load(api, err);
		if (st)
			goto out_free;
	}
	st = api_token_key_load(api, cfg->data_dir, err);
	if (st)
		goto out_free;
	if (cfg->bootstrap) {
		st = api_bootstrap(api, err);
		if (st)
			goto out_free;
	}
	api_crd_sync(api, false); /* the resources of the stored CRDs */
	st = api_ns_janitor_start(api, err);
	if (st)
		goto out_free;
	*out = api;
	return K32_OK;
out_free:
	api_cache_fini(&api->lists);
	api_metrics_fini(&api->metrics);
	api_rbac_cache_fini(api);
	k32_plat()->mutex_fini(&api->mu);
	api_free(api, sizeof(*api));
	return st;
}

void api_server_attach_http(struct api_server *api, struct http_server *srv)
{
	atomic_store(&api->http, srv);
	if (srv)
		api_service_bootstrap(api, http_server_port(srv));
}

void api_server_free(struct api_server *api)
{
	if (!api)
		return;
	api_ns_janitor_stop(api);
	api_cache_fini(&api->lists);
	api_metrics_fini(&api->metrics);
	api_rbac_cache_fini(api);
	k32_plat()->mutex_fini(&api->mu);
	api_free(api, sizeof(*api));
}
