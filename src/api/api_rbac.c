/*
 * api_rbac.c - role-based access control (rbac.authorization.k8s.io/v1) for every identity
 * that is neither the admin (system:masters) nor a node (NodeRestriction, api_server.c).
 *
 * Objects: Role and RoleBinding (namespaced), ClusterRole and ClusterRoleBinding, stored as
 * any other kind. A request is allowed when a ClusterRoleBinding, or a RoleBinding of the
 * request's namespace, names the caller (User, Group, ServiceAccount subject) and its role
 * has a rule that matches the request's attributes (verb, API group, resource with
 * subresource, resource name; or a non-resource URL). The four kinds are read from the store
 * and parsed once into a snapshot shared by every check until one of them is written
 * (api_rbac_note_write, called by the API's store writes and deletes, moves a generation
 * the snapshot is compared with), at most K32_API_RBAC_CACHE_OBJECTS objects; past that a
 * check reads the bindings from the store (references, no copy), skips those whose text
 * cannot name the caller before parsing them, and parses only the candidates and roles. Discovery,
 * OpenAPI, /version and the health checks are open to every authenticated user, and so are
 * the self reviews (kube-apiserver's system:discovery and system:basic-user bindings).
 *
 * Aggregation: a ClusterRole with an aggregationRule holds the union of the rules of the
 * ClusterRoles its clusterRoleSelectors match, rewritten after every ClusterRole write and
 * at start (api_rbac_aggregate, what kube-controller-manager's clusterrole-aggregation
 * controller does); the default admin, edit and view roles are built that way.
 *
 * Escalation: a caller checked by RBAC may create or change a Role or ClusterRole only with
 * the "escalate" verb on it, and a binding only with the "bind" verb on the role it names
 * (stricter than kube-apiserver, which also allows a caller who already holds every rule).
 *
 * Context: any thread (the snapshot is reference counted, swapped under api->rbac_mu).
 */
#include "api/api_srv.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_json.h"
#include "base/k32_log.h"
#include "kmeta/kmeta.h"
#include "platform/k32_platform.h"

/* ---- the evaluator (pure) -------------------------------------------------------------- */

/* Whether the string array arr (NULL: absent) holds v, or "*" when star. */
static bool rbac_has(const cJSON *arr, const char *v, bool star)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		const char *s = cJSON_GetStringValue(it);
		if (s && ((star && !strcmp(s, "*")) || !strcmp(s, v)))
			return true;
	}
	return false;
}

static bool rbac_resource_matches(const cJSON *resources, const char *res, const char *sub)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, resources)
	{
		const char *s = cJSON_GetStringValue(it);
		if (!s)
			continue;
		if (!strcmp(s, "*"))
			return true;
		size_t rl = strlen(res);
		if (!sub[0]) {
			if (!strcmp(s, res))
				return true;
			continue;
		}
		/* "pods/log" or "*\/log" */
		if (!strncmp(s, res, rl) && s[rl] == '/' && !strcmp(s + rl + 1, sub))
			return true;
		if (s[0] == '*' && s[1] == '/' && !strcmp(s + 2, sub))
			return true;
	}
	return false;
}

static bool rbac_url_matches(const cJSON *urls, const char *path)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, urls)
	{
		const char *s = cJSON_GetStringValue(it);
		if (!s)
			continue;
		size_t n = strlen(s);
		if (!strcmp(s, "*") || !strcmp(s, path))
			return true;
		if (n && s[n - 1] == '*' && !strncmp(s, path, n - 1))
			return true;
	}
	return false;
}

bool api_rbac_rule_allows(const cJSON *rule, const struct api_rbac_attrs *a)
{
	if (!cJSON_IsObject(rule) || !a->verb)
		return false;
	if (!rbac_has(cJSON_GetObjectItemCaseSensitive(rule, "verbs"), a->verb, true))
		return false;
	if (!a->resource) {
		const cJSON *urls = cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs");
		return a->path && rbac_url_matches(urls, a->path);
	}
	if (!rbac_has(cJSON_GetObjectItemCaseSensitive(rule, "apiGroups"), a->group ? a->group : "",
		      true))
		return false;
	if (!rbac_resource_matches(cJSON_GetObjectItemCaseSensitive(rule, "resources"), a->resource,
				   a->sub ? a->sub : ""))
		return false;
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(rule, "resourceNames");
	if (cJSON_GetArraySize(names) == 0)
		return true;
	return a->name && a->name[0] && rbac_has(names, a->name, false);
}

/* Whether the comma-separated list holds g. */
static bool rbac_in_groups(const char *groups, const char *g)
{
	size_t gl = strlen(g);
	for (const char *p = groups; p && *p;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n == gl && !memcmp(p, g, n))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

/* The string member key of o, or NULL. */
static const char *rbac_member(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

bool api_rbac_subject_matches(const cJSON *subject, const struct api_identity *who,
			      const char *binding_ns)
{
	/* direct members, not dotted paths: this runs for every subject of every binding */
	const char *kind = rbac_member(subject, "kind");
	const char *name = rbac_member(subject, "name");
	if (!kind || !name || !name[0])
		return false;
	if (!strcmp(kind, "User"))
		return !strcmp(who->user, name);
	if (!strcmp(kind, "Group"))
		return rbac_in_groups(who->groups, name);
	if (!strcmp(kind, "ServiceAccount")) {
		const char *ns = rbac_member(subject, "namespace");
		if (!ns || !ns[0])
			ns = binding_ns;
		static const char pre[] = "system:serviceaccount:";
		const char *u = who->user;
		size_t nl = strlen(ns);
		return !strncmp(u, pre, sizeof(pre) - 1) && !strncmp(u + sizeof(pre) - 1, ns, nl) &&
		       u[sizeof(pre) - 1 + nl] == ':' && !strcmp(u + sizeof(pre) + nl, name);
	}
	return false;
}

/* ---- reading the bindings --------------------------------------------------------------- */

/* Strings one of which a binding's text must hold as a whole JSON string to name the
 * caller: the user name, a ServiceAccount's own name, each group. Built once per check. */
#define RBAC_MAX_NEEDLES 10
struct rbac_needles {
	const char *v[RBAC_MAX_NEEDLES];
	size_t len[RBAC_MAX_NEEDLES];
	size_t count;
	bool always; /* a name JSON would escape, or too many groups: never skip */
};

static void rbac_needle(struct rbac_needles *nd, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
			nd->always = true;
	if (nd->count == RBAC_MAX_NEEDLES) {
		nd->always = true;
		return;
	}
	nd->v[nd->count] = s;
	nd->len[nd->count++] = n;
}

static void rbac_needles_of(const struct api_identity *who, struct rbac_needles *nd)
{
	static const char pre[] = "system:serviceaccount:";
	nd->count = 0;
	nd->always = false;
	rbac_needle(nd, who->user, strlen(who->user));
	const char *c = !strncmp(who->user, pre, sizeof(pre) - 1)
			    ? strchr(who->user + sizeof(pre) - 1, ':')
			    : NULL;
	if (c)
		rbac_needle(nd, c + 1, strlen(c + 1));
	for (const char *p = who->groups; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n)
			rbac_needle(nd, p, n);
		if (!e)
			break;
		p = e + 1;
	}
}

/* Whether text (a binding's JSON, NUL-terminated) may name the caller: one pass over the
 * strings of its "subjects" list (objects of strings, so the first ']' outside a string
 * ends it), each compared with the needles of its length. A string with an escape in it
 * makes the answer yes (its end cannot be told without decoding). */
static bool rbac_may_name(const char *text, const struct rbac_needles *nd)
{
	if (nd->always)
		return true;
	const char *p = strstr(text, "subjects\":[");
	if (!p)
		return false;
	for (p += 11; *p && *p != ']'; p++) {
		if (*p != '"')
			continue;
		const char *e = strchr(p + 1, '"');
		if (!e)
			return false;
		size_t n = (size_t)(e - p - 1);
		if (memchr(p + 1, '\\', n))
			return true;
		for (size_t i = 0; i < nd->count; i++)
			if (nd->len[i] == n && !memcmp(nd->v[i], p + 1, n))
				return true;
		p = e;
	}
	return false;
}

/* What a walk over the bindings does with each rule of a role that names the caller. */
struct rbac_walk {
	const struct api_identity *who;
	const struct api_rbac_attrs *a; /* check: stop at the first rule allowing a */
	cJSON *rules;			/* collect: copies of the rules (SSRR); may be NULL */
	bool allowed;
	bool truncated;		     /* more bindings than K32_API_RBAC_MAX_BINDINGS in a scope */
	char by[320];		     /* which binding allowed (SSAR's reason) */
	struct rbac_needles needles; /* of who, filled by rbac_walk */
};

/* ---- the snapshot: RBAC's objects parsed once, shared until one is written ------------- */

/* A binding as the checks read it: found once when the snapshot is read. */
struct snap_binding {
	const char *ns; /* "" for a ClusterRoleBinding */
	const char *name;
	const cJSON *subjects;
	const char *role_kind; /* roleRef.kind, roleRef.name ("" when absent) */
	const char *role_name;
	const cJSON *rules; /* the rules of the role it names; NULL when there is none */
};

struct api_rbac_snap {
	atomic_uint refs;
	uint32_t gen;	 /* api->rbac_gen when it was read */
	cJSON *crb, *rb; /* ClusterRoleBindings; RoleBindings of every namespace (key order) */
	cJSON *croles, *roles;	/* ClusterRoles; Roles of every namespace */
	struct snap_binding *b; /* the ClusterRoleBindings, then the RoleBindings (key order) */
	uint32_t ncluster, nb;	/* how many ClusterRoleBindings; in all */
	size_t b_bytes;
};

static void snap_release(struct api_rbac_snap *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	cJSON_Delete(s->crb);
	cJSON_Delete(s->rb);
	cJSON_Delete(s->croles);
	cJSON_Delete(s->roles);
	if (s->b)
		api_free(s->b, s->b_bytes);
	api_free(s, sizeof(*s));
}

/* Every object of one RBAC resource, parsed, in key order, into a new array; NULL when there
 * are more than *budget left (which it lowers) or memory runs out. */
static cJSON *snap_list(struct api_server *api, const char *plural, uint32_t *budget)
{
	struct store_key prefix = {"rbac.authorization.k8s.io", plural, "", NULL};
	struct store_list_opts opts = {.limit = *budget + 1};
	struct store_list l;
	struct k32_err err;
	memset(&l, 0, sizeof(l));
	cJSON *arr = NULL;
	if (store_list(api->store, &prefix, &opts, &l, &err) == K32_OK && l.count <= *budget &&
	    !l.continue_token[0]) {
		arr = cJSON_CreateArray();
		for (uint32_t i = 0; arr && i < l.count; i++) {
			cJSON *o = api_parse_obj(l.items[i]);
			if (!o) {
				cJSON_Delete(arr);
				arr = NULL;
				break;
			}
			cJSON_AddItemToArray(arr, o);
		}
		*budget -= l.count;
	}
	store_list_fini(api->store, &l);
	return arr;
}

/* The role a binding's roleRef names, from the snapshot (NULL: none such). */
static const cJSON *snap_role(const struct api_rbac_snap *s, bool cluster, const char *ns,
			      const char *name)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, (cluster ? s->croles : s->roles))
	{
		const char *n = api_jstr(r, "metadata.name");
		const char *rns = api_jstr(r, "metadata.namespace");
		if (n && !strcmp(n, name) && (cluster || (rns && !strcmp(rns, ns))))
			return r;
	}
	return NULL;
}

/* Digests the bindings of s->crb and s->rb into s->b, each with its role's rules. */
static bool snap_digest(struct api_rbac_snap *s)
{
	s->ncluster = (uint32_t)cJSON_GetArraySize(s->crb);
	s->nb = s->ncluster + (uint32_t)cJSON_GetArraySize(s->rb);
	s->b_bytes = (s->nb ? s->nb : 1) * sizeof(*s->b);
	s->b = api_zalloc(s->b_bytes);
	if (!s->b)
		return false;
	uint32_t k = 0;
	for (int pass = 0; pass < 2; pass++) {
		const cJSON *b;
		cJSON_ArrayForEach(b, (pass ? s->rb : s->crb))
		{
			struct snap_binding *d = &s->b[k++];
			const cJSON *md = cJSON_GetObjectItemCaseSensitive(b, "metadata");
			const cJSON *ref = cJSON_GetObjectItemCaseSensitive(b, "roleRef");
			const char *ns = pass ? rbac_member(md, "namespace") : "";
			d->ns = ns ? ns : "";
			d->name = rbac_member(md, "name") ? rbac_member(md, "name") : "";
			d->subjects = cJSON_GetObjectItemCaseSensitive(b, "subjects");
			d->role_kind = rbac_member(ref, "kind") ? rbac_member(ref, "kind") : "";
			d->role_name = rbac_member(ref, "name") ? rbac_member(ref, "name") : "";
			bool cluster = !strcmp(d->role_kind, "ClusterRole");
			const cJSON *role = NULL;
			if (cluster || (!strcmp(d->role_kind, "Role") && d->ns[0]))
				role = snap_role(s, cluster, d->ns, d->role_name);
			d->rules = role ? cJSON_GetObjectItemCaseSensitive(role, "rules") : NULL;
		}
	}
	return true;
}

static struct api_rbac_snap *snap_build(struct api_server *api, uint64_t gen)
{
	struct api_rbac_snap *s = api_zalloc(sizeof(*s));
	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	s->gen = gen;
	uint32_t budget = K32_API_RBAC_CACHE_OBJECTS;
	s->crb = snap_list(api, "clusterrolebindings", &budget);
	s->rb = s->crb ? snap_list(api, "rolebindings", &budget) : NULL;
	s->croles = s->rb ? snap_list(api, "clusterroles", &budget) : NULL;
	s->roles = s->croles ? snap_list(api, "roles", &budget) : NULL;
	if (!s->roles || !snap_digest(s)) {
		snap_release(s);
		return NULL;
	}
	return s;
}

/* The current snapshot (a reference), read again when an RBAC object changed since; NULL
 * when the objects are over K32_API_RBAC_CACHE_OBJECTS (the check then walks the store). */
static struct api_rbac_snap *snap_get(struct api_server *api)
{
	uint32_t gen = atomic_load(&api->rbac_gen);
	k32_mutex_lock(&api->rbac_mu);
	struct api_rbac_snap *s = api->rbac_snap;
	if (s && s->gen == gen) {
		atomic_fetch_add(&s->refs, 1);
		k32_mutex_unlock(&api->rbac_mu);
		atomic_fetch_add(&api->rbac_hits, 1);
		return s;
	}
	k32_mutex_unlock(&api->rbac_mu);
	/* read outside the lock: checks meanwhile use the old one or read their own */
	s = snap_build(api, gen);
	if (!s) {
		atomic_fetch_add(&api->rbac_uncached, 1);
		return NULL;
	}
	atomic_fetch_add(&api->rbac_builds, 1);
	struct api_rbac_snap *old = NULL;
	k32_mutex_lock(&api->rbac_mu);
	if (!api->rbac_snap || api->rbac_snap->gen <= gen) {
		old = api->rbac_snap;
		atomic_fetch_add(&s->refs, 1); /* the cache's */
		api->rbac_snap = s;
	}
	k32_mutex_unlock(&api->rbac_mu);
	snap_release(old);
	return s;
}

void api_rbac_note_write(struct api_server *api, const struct api_resource *res)
{
	if (api && res && !strcmp(res->group, "rbac.authorization.k8s.io"))
		atomic_fetch_add(&api->rbac_gen, 1);
}

void api_rbac_cache_init(struct api_server *api)
{
	k32_plat()->mutex_init(&api->rbac_mu);
	api->rbac_snap = NULL;
}

void api_rbac_cache_fini(struct api_server *api)
{
	snap_release(api->rbac_snap);
	api->rbac_snap = NULL;
	k32_plat()->mutex_fini(&api->rbac_mu);
}

void api_rbac_cache_stats(const struct api_server *api, struct api_rbac_cache_stats *out)
{
	out->builds = atomic_load(&api->rbac_builds);
	out->hits = atomic_load(&api->rbac_hits);
	out->uncached = atomic_load(&api->rbac_uncached);
}

/* ---- the walk ------------------------------------------------------------------------------ */

/* Applies a role's rules for the binding that names it. */
static void rbac_apply_rules(struct rbac_walk *w, const char *bkind, const char *bns,
			     const char *bname, const char *kind, const char *name,
			     const cJSON *rules)
{
	const cJSON *rule;
	cJSON_ArrayForEach(rule, rules)
	{
		if (w->a && api_rbac_rule_allows(rule, w->a)) {
			w->allowed = true;
			if (bns[0])
				snprintf(w->by, sizeof(w->by),
					 "RBAC: allowed by %s \"%.100s/%.63s\" of %s \"%.100s\"",
					 bkind, bname, bns, kind, name);
			else
				snprintf(w->by, sizeof(w->by),
					 "RBAC: allowed by %s \"%.100s\" of %s \"%.100s\"", bkind,
					 bname, kind, name);
			break;
		}
		if (w->rules)
			cJSON_AddItemToArray(w->rules, cJSON_Duplicate(rule, true));
	}
}

/* Applies the rules of the role a binding names, read from the store. */
static void rbac_role_rules(struct api_server *api, struct rbac_walk *w, const char *bkind,
			    const char *bns, const char *bname, const cJSON *ref)
{
	const char *kind = api_jstr(ref, "kind");
	const char *name = api_jstr(ref, "name");
	if (!kind || !name)
		return;
	bool cluster = !strcmp(kind, "ClusterRole");
	if (!cluster && (strcmp(kind, "Role") || !bns[0]))
		return;
	struct store_obj *o = NULL;
	struct store_key key = {"rbac.authorization.k8s.io", cluster ? "clusterroles" : "roles",
				cluster ? "" : bns, name};
	struct k32_err err;
	if (store_get(api->store, &key, &o, &err))
		return;
	cJSON *role = api_parse_obj(o);
	store_obj_unref(api->store, o);
	rbac_apply_rules(w, bkind, bns, bname, kind, name,
			 cJSON_GetObjectItemCaseSensitive(role, "rules"));
	cJSON_Delete(role);
}

/* One binding b of scope ns (read from the store): its role's rules when it names the
 * caller. */
static void rbac_binding(struct api_server *api, struct rbac_walk *w, const char *ns,
			 const cJSON *b)
{
	const cJSON *s;
	bool named = false;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(b, "subjects"))
	{
		if (api_rbac_subject_matches(s, w->who, ns)) {
			named = true;
			break;
		}
	}
	const char *bname = api_jstr(b, "metadata.name");
	if (named)
		rbac_role_rules(api, w, ns[0] ? "RoleBinding" : "ClusterRoleBinding", ns,
				bname ? bname : "", cJSON_GetObjectItemCaseSensitive(b, "roleRef"));
}

/* Walks the bindings of one scope (ns "" : ClusterRoleBindings), the first
 * K32_API_RBAC_MAX_BINDINGS of it in name order, from the snapshot or the store. */
static void rbac_walk_scope(struct api_server *api, const struct api_rbac_snap *snap,
			    struct rbac_walk *w, const char *ns)
{
	if (snap) {
		uint32_t seen = 0;
		uint32_t from = ns[0] ? snap->ncluster : 0, to = ns[0] ? snap->nb : snap->ncluster;
		for (uint32_t i = from; i < to && !w->allowed; i++) {
			const struct snap_binding *d = &snap->b[i];
			if (ns[0] && strcmp(d->ns, ns))
				continue;
			if (++seen > K32_API_RBAC_MAX_BINDINGS) {
				w->truncated = true;
				break;
			}
			const cJSON *sub;
			bool named = false;
			cJSON_ArrayForEach(sub, d->subjects)
			{
				if (api_rbac_subject_matches(sub, w->who, ns)) {
					named = true;
					break;
				}
			}
			if (named && d->rules)
				rbac_apply_rules(w, ns[0] ? "RoleBinding" : "ClusterRoleBinding",
						 ns, d->name, d->role_kind, d->role_name, d->rules);
		}
		return;
	}
	struct store_key prefix = {"rbac.authorization.k8s.io",
				   ns[0] ? "rolebindings" : "clusterrolebindings", ns, NULL};
	struct store_list_opts opts = {.limit = K32_API_RBAC_MAX_BINDINGS};
	struct store_list l;
	struct k32_err err;
	memset(&l, 0, sizeof(l));
	if (store_list(api->store, &prefix, &opts, &l, &err) == K32_OK) {
		if (l.continue_token[0])
			w->truncated = true;
		for (uint32_t i = 0; i < l.count && !w->allowed; i++) {
			const char *text = store_obj_data(l.items[i]);
			if (!rbac_may_name(text, &w->needles))
				continue;
			cJSON *b = api_parse_obj(l.items[i]);
			rbac_binding(api, w, ns, b);
			cJSON_Delete(b);
		}
	}
	store_list_fini(api->store, &l);
}

static void rbac_walk(struct api_server *api, struct rbac_walk *w, const char *ns)
{
	rbac_needles_of(w->who, &w->needles);
	struct api_rbac_snap *snap = snap_get(api);
	rbac_walk_scope(api, snap, w, "");
	if (!w->allowed && ns && ns[0])
		rbac_walk_scope(api, snap, w, ns);
	snap_release(snap);
}

/* kube-apiserver's words for a denial. */
static void rbac_denial(const struct api_identity *who, const struct api_rbac_attrs *a,
			bool truncated, char *why, size_t cap)
{
	int n;
	if (!a->resource)
		n = snprintf(why, cap, "User \"%s\" cannot %s path \"%s\"", K32_CLIP(who->user),
			     a->verb, K32_CLIP(a->path));
	else
		n = snprintf(why, cap,
			     "User \"%s\" cannot %s resource \"%s%s%s\" in API group "
			     "\"%s\"%s%s%s",
			     K32_CLIP(who->user), a->verb, a->resource,
			     a->sub && a->sub[0] ? "/" : "", a->sub ? a->sub : "",
			     K32_CLIP(a->group),
			     a->ns && a->ns[0] ? " in the namespace \"" : " at the cluster scope",
			     a->ns && a->ns[0] ? a->ns : "", a->ns && a->ns[0] ? "\"" : "");
	if (truncated && n > 0 && (size_t)n < cap)
		snprintf(why + n, cap - (size_t)n,
			 " (read the first %d bindings of a scope only, "
			 "K32_API_RBAC_MAX_BINDINGS: remove unused ones)",
			 K32_API_RBAC_MAX_BINDINGS);
}

bool api_rbac_allowed(struct api_server *api, const struct api_identity *who,
		      const struct api_rbac_attrs *a, char *why, size_t cap)
{
	if (who->admin)
		return true;
	struct rbac_walk w = {.who = who, .a = a};
	if (api)
		rbac_walk(api, &w, a->resource ? a->ns : NULL);
	if (!w.allowed && why)
		rbac_denial(who, a, w.truncated, why, cap);
	return w.allowed;
}

/* ---- the router's gate ------------------------------------------------------------------ */

/* Paths every authenticated user may GET (system:discovery, system:public-info-viewer). */
static bool rbac_open_path(const char *path)
{
	static const char *const open[] = {"/api", "/apis", "/openapi", "/version"};
	if (api_health_path(path))
		return true;
	for (size_t i = 0; i < sizeof(open) / sizeof(open[0]); i++) {
		size_t n = strlen(open[i]);
		if (!strncmp(path, open[i], n) && (path[n] == 0 || path[n] == '/'))
			return true;
	}
	return false;
}

/* The RBAC verb of a resource request. */
static const char *rbac_verb(const struct api_req *rq)
{
	const char *m = rq->method;
	if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
		return api_q_bool(rq, "watch", false) ? "watch" : rq->name[0] ? "get" : "list";
	if (!strcmp(m, "POST"))
		return "create";
	if (!strcmp(m, "PUT"))
		return "update";
	if (!strcmp(m, "PATCH"))
		return "patch";
	if (!strcmp(m, "DELETE"))
		return rq->name[0] ? "delete" : "deletecollection";
	return "";
}

static bool rbac_is(const struct api_resource *res, const char *plural)
{
	return !strcmp(res->group, "rbac.authorization.k8s.io") && !strcmp(res->plural, plural);
}

/* Escalation: "escalate" to write roles, "bind" on the role a binding names. */
static bool rbac_escalation_ok(struct api_server *api, struct api_req *rq, const char *verb,
			       struct api_fail *f)
{
	const struct api_resource *res = rq->res;
	bool role = rbac_is(res, "roles") || rbac_is(res, "clusterroles");
	bool binding = rbac_is(res, "rolebindings") || rbac_is(res, "clusterrolebindings");
	if ((!role && !binding) ||
	    (strcmp(verb, "create") && strcmp(verb, "update") && strcmp(verb, "patch")))
		return true;
	char why[400];
	struct api_rbac_attrs a = {.verb = role ? "escalate" : "bind",
				   .group = "rbac.authorization.k8s.io",
				   .resource = res->plural,
				   .sub = "",
				   .ns = rq->ns,
				   .name = rq->name};
	char refname[254] = "";
	if (binding) {
		cJSON *obj = NULL;
		struct api_fail ignored;
		api_fail_clear(&ignored);
		/* the role named by the body; a patch may name any, so it needs bind on all */
		if (strcmp(verb, "patch") && !api_decode_body(rq, &obj, &ignored)) {
			const char *k = api_jstr(obj, "roleRef.kind");
			const char *n = api_jstr(obj, "roleRef.name");
			snprintf(refname, sizeof(refname), "%s", n ? n : "");
			a.resource = k && !strcmp(k, "Role") ? "roles" : "clusterroles";
		} else {
			a.resource = rbac_is(res, "rolebindings") ? "roles" : "clusterroles";
		}
		cJSON_Delete(obj);
		a.name = refname;
		if (!strcmp(a.resource, "clusterroles") && rbac_is(res, "clusterrolebindings"))
			a.ns = "";
	}
	if (api_rbac_allowed(api, rq->who, &a, why, sizeof(why)))
		return true;
	size_t n = strlen(why);
	snprintf(why + n, sizeof(why) - n,
		 role ? ": writing a role needs the escalate verb on it"
		      : ": binding a role needs the bind verb on it");
	api_fail_forbidden(f, res, rq->name, why);
	return false;
}

bool api_rbac_gate(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	const struct api_identity *who = rq->who;
	if (who->admin || who->node[0])
		return true;
	/* the request's own failure record: a 2.6 KB struct api_fail stays off the stack */
	struct api_fail *f = &rq->fail;
	api_fail_clear(f);
	char why[400];
	if (!rq->res) {
		if (rbac_open_path(rq->path) && !strcmp(rq->method, "GET"))
			return true;
		char verb[16];
		size_t i = 0;
		for (; i < sizeof(verb) - 1 && rq->method[i]; i++)
			verb[i] = (char)(rq->method[i] | 0x20);
		verb[i] = 0;
		if (!strcmp(verb, "head"))
			snprintf(verb, sizeof(verb), "get");
		struct api_rbac_attrs a = {.verb = verb, .path = rq->path};
		if (api_rbac_allowed(api, who, &a, why, sizeof(why)))
			return true;
		api_fail_set(f, 403, "Forbidden", "forbidden: %s", why);
		api_out_fail(out, f);
		return false;
	}
	if (rq->res->strategy->review)
		return true;
	struct api_rbac_attrs a = {.verb = rbac_verb(rq),
				   .group = rq->res->group,
				   .resource = rq->res->plural,
				   .sub = rq->sub,
				   .ns = rq->ns,
				   .name = rq->name};
	if (!strcmp(rq->res->plural, "namespaces") && rq->res->group[0] == 0 && rq->name[0])
		a.ns = rq->name; /* a namespace is in itself (kube-apiserver's attributes) */
	if (!api_rbac_allowed(api, who, &a, why, sizeof(why))) {
		api_fail_forbidden(f, rq->res, rq->name, why);
		api_out_fail(out, f);
		return false;
	}
	if (!rbac_escalation_ok(api, rq, a.verb, f)) {
		api_out_fail(out, f);
		return false;
	}
	return true;
}

/* ---- reviews ---------------------------------------------------------------------------- */

static const char *rbac_str(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
	return s ? s : "";
}

void api_rbac_ssar(struct api_server *api, struct api_req *rq, struct api_out *out, cJSON *obj)
{
	const cJSON *ra = k32_json_find(obj, "spec.resourceAttributes");
	const cJSON *nra = k32_json_find(obj, "spec.nonResourceAttributes");
	struct api_rbac_attrs a;
	memset(&a, 0, sizeof(a));
	if (ra) {
		a.verb = rbac_str(ra, "verb");
		a.group = rbac_str(ra, "group");
		a.resource = rbac_str(ra, "resource");
		a.sub = rbac_str(ra, "subresource");
		a.ns = rbac_str(ra, "namespace");
		a.name = rbac_str(ra, "name");
	} else if (nra) {
		a.verb = rbac_str(nra, "verb");
		a.path = rbac_str(nra, "path");
	} else {
		struct api_fail f;
		api_fail_clear(&f);
		api_fail_add_cause(&f, "FieldValueRequired", "spec.resourceAttributes",
				   "Required value: exactly one of nonResourceAttributes or "
				   "resourceAttributes must be specified");
		api_fail_invalid(&f, "SelfSubjectAccessReview", "");
		api_out_fail(out, &f);
		return;
	}
	struct rbac_walk w = {.who = rq->who, .a = &a};
	bool open = false;
	if (!a.resource)
		open = rbac_open_path(a.path) && !strcmp(a.verb, "get");
	else if (!strcmp(a.group, "authorization.k8s.io") && !strcmp(a.verb, "create") &&
		 (!strcmp(a.resource, "selfsubjectaccessreviews") ||
		  !strcmp(a.resource, "selfsubjectrulesreviews")))
		open = true;
	if (open)
		snprintf(w.by, sizeof(w.by), "RBAC: allowed to every authenticated user");
	else
		rbac_walk(api, &w, a.resource ? a.ns : NULL);
	cJSON_DeleteItemFromObject(obj, "status");
	cJSON *st = cJSON_AddObjectToObject(obj, "status");
	cJSON_AddBoolToObject(st, "allowed", open || w.allowed);
	if (open || w.allowed)
		cJSON_AddStringToObject(st, "reason", w.by);
	out->ctype[0] = 0;
	api_out_json(out, 201, cJSON_Duplicate(obj, true));
}

static cJSON *rbac_strs(const char *const *v, int n)
{
	return cJSON_CreateStringArray(v, n);
}

void api_rbac_ssrr(struct api_server *api, struct api_req *rq, struct api_out *out, cJSON *obj)
{
	const char *ns = api_jstr(obj, "spec.namespace");
	struct rbac_walk w = {.who = rq->who, .rules = cJSON_CreateArray()};
	rbac_walk(api, &w, ns ? ns : "");
	cJSON_DeleteItemFromObject(obj, "status");
	cJSON *st = cJSON_AddObjectToObject(obj, "status");
	cJSON *rr = cJSON_AddArrayToObject(st, "resourceRules");
	cJSON *nr = cJSON_AddArrayToObject(st, "nonResourceRules");
	/* what every authenticated user has (system:basic-user, system:discovery) */
	cJSON *r = cJSON_CreateObject();
	api_json_put(r, "verbs", rbac_strs((const char *[]){"create"}, 1));
	api_json_put(r, "apiGroups", rbac_strs((const char *[]){"authorization.k8s.io"}, 1));
	api_json_put(
	    r, "resources",
	    rbac_strs((const char *[]){"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, 2));
	cJSON_AddItemToArray(rr, r);
	cJSON *n = cJSON_CreateObject();
	api_json_put(n, "verbs", rbac_strs((const char *[]){"get"}, 1));
	api_json_put(n, "nonResourceURLs",
		     rbac_strs((const char *[]){"/api", "/api/*", "/apis", "/apis/*", "/healthz",
						"/livez", "/openapi", "/openapi/*", "/readyz",
						"/version", "/version/"},
			       11));
	cJSON_AddItemToArray(nr, n);
	cJSON *rule;
	while (w.rules && (rule = w.rules->child) != NULL) {
		cJSON_DetachItemViaPointer(w.rules, rule);
		bool urls = cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs") != NULL;
		cJSON_AddItemToArray(urls ? nr : rr, rule);
	}
	cJSON_Delete(w.rules);
	cJSON_AddBoolToObject(st, "incomplete", w.truncated);
	out->ctype[0] = 0;
	api_out_json(out, 201, cJSON_Duplicate(obj, true));
}

/* ---- impersonation ---------------------------------------------------------------------- */

k32_status_t api_rbac_may_impersonate(struct api_server *api, const struct api_identity *who,
				      const char *user, const char *groups, struct api_fail *f)
{
	if (who->admin)
		return K32_OK;
	char why[400];
	static const char pre[] = "system:serviceaccount:";
	struct api_rbac_attrs a = {.verb = "impersonate", .group = "", .sub = "", .ns = ""};
	char ns[64] = "";
	if (!strncmp(user, pre, sizeof(pre) - 1) && strchr(user + sizeof(pre) - 1, ':')) {
		const char *p = user + sizeof(pre) - 1;
		const char *c = strchr(p, ':');
		snprintf(ns, sizeof(ns), "%.*s", (int)(c - p), p);
		a.resource = "serviceaccounts";
		a.ns = ns;
		a.name = c + 1;
	} else {
		a.resource = "users";
		a.name = user;
	}
	const struct api_resource *res = api_registry_find("", "v1", a.resource);
	if (!api_rbac_allowed(api, who, &a, why, sizeof(why))) {
		if (res)
			return api_fail_forbidden(f, res, a.name, why);
		return api_fail_set(f, 403, "Forbidden", "%s \"%.100s\" is forbidden: %s",
				    a.resource, a.name, why);
	}
	char g[K32_API_GROUPS_LEN];
	snprintf(g, sizeof(g), "%s", groups);
	char *save = NULL;
	for (char *t = strtok_r(g, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct api_rbac_attrs ga = {.verb = "impersonate",
					    .group = "",
					    .resource = "groups",
					    .sub = "",
					    .ns = "",
					    .name = t};
		if (!api_rbac_allowed(api, who, &ga, why, sizeof(why)))
			return api_fail_set(f, 403, "Forbidden",
					    "groups \"%.100s\" is forbidden: %s", t, why);
	}
	return K32_OK;
}

/* ---- default ClusterRoles --------------------------------------------------------------- */

#define RBAC_READ  "\"get\",\"list\",\"watch\""
#define RBAC_WRITE "\"create\",\"delete\",\"deletecollection\",\"patch\",\"update\""
#define RBAC_VIEW_RULES                                                                            \
	"{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"pods/log\",\"pods/status\","              \
	"\"configmaps\",\"events\",\"serviceaccounts\",\"namespaces\",\"namespaces/status\"],"     \
	"\"verbs\":[" RBAC_READ "]},"                                                              \
	"{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\",\"deployments/scale\","          \
	"\"deployments/status\",\"replicasets\",\"replicasets/scale\",\"replicasets/status\","     \
	"\"daemonsets\",\"daemonsets/status\"],\"verbs\":[" RBAC_READ "]},"                        \
	"{\"apiGroups\":[\"batch\"],\"resources\":[\"jobs\",\"jobs/status\",\"cronjobs\","         \
	"\"cronjobs/status\"],\"verbs\":[" RBAC_READ "]},"                                         \
	"{\"apiGroups\":[\"events.k8s.io\"],\"resources\":[\"events\"],\"verbs\":[" RBAC_READ      \
	"]},"                                                                                      \
	"{\"apiGroups\":[\"kube32.io\"],\"resources\":[\"devices\",\"devices/status\"],"           \
	"\"verbs\":[" RBAC_READ "]}"
#define RBAC_EDIT_RULES                                                                            \
	"{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"configmaps\",\"secrets\","                \
	"\"serviceaccounts\",\"events\"],\"verbs\":[" RBAC_WRITE "]},"                             \
	"{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[" RBAC_READ "]},"            \
	"{\"apiGroups\":[\"\"],\"resources\":[\"pods/eviction\",\"serviceaccounts/token\"],"       \
	"\"verbs\":[\"create\"]},"                                                                 \
	"{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\",\"deployments/scale\","          \
	"\"replicasets\",\"replicasets/scale\",\"daemonsets\"],\"verbs\":[" RBAC_WRITE "]},"       \
	"{\"apiGroups\":[\"batch\"],\"resources\":[\"jobs\",\"cronjobs\"],\"verbs\":[" RBAC_WRITE  \
	"]},"                                                                                      \
	"{\"apiGroups\":[\"kube32.io\"],\"resources\":[\"devices\"],\"verbs\":[" RBAC_WRITE "]}"

/* The default roles, as kube-apiserver defines them: admin, edit and view hold no rules of
 * their own but aggregate those of the ClusterRoles labelled aggregate-to-admin/-edit/-view
 * (system:aggregate-to-* hold the rules; edit is labelled for admin and view for edit, so
 * admin >= edit >= view), and a user extends them by labelling a ClusterRole of their own
 * (a CRD's read rules into view, say). */
#define RBAC_AGG_LABEL "rbac.authorization.k8s.io/aggregate-to-"
#define RBAC_AGG_RULE(to)                                                                          \
	"\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{\"" RBAC_AGG_LABEL to    \
	"\":\"true\"}}]}"
static const struct {
	const char *name;
	const char *labels;    /* more labels, each ",\"key\":\"value\"" */
	const char *rules;     /* the rules (a JSON array's inside) */
	const char *aggregate; /* ,"aggregationRule":{...} or "" */
} rbac_defaults[] = {
    {"cluster-admin", "",
     "{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]},"
     "{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}",
     ""},
    {"system:aggregate-to-admin", ",\"" RBAC_AGG_LABEL "admin\":\"true\"",
     "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"roles\",\"rolebindings\"],"
     "\"verbs\":[\"*\"]}",
     ""},
    {"system:aggregate-to-edit", ",\"" RBAC_AGG_LABEL "edit\":\"true\"", RBAC_EDIT_RULES, ""},
    {"system:aggregate-to-view", ",\"" RBAC_AGG_LABEL "view\":\"true\"", RBAC_VIEW_RULES, ""},
    {"admin", "", "", "," RBAC_AGG_RULE("admin")},
    {"edit", ",\"" RBAC_AGG_LABEL "admin\":\"true\"", "", "," RBAC_AGG_RULE("edit")},
    {"view", ",\"" RBAC_AGG_LABEL "edit\":\"true\"", "", "," RBAC_AGG_RULE("view")},
};

void api_rbac_bootstrap(struct api_server *api)
{
	const struct k32_allocator *al = k32_default_allocator();
	for (size_t i = 0; i < sizeof(rbac_defaults) / sizeof(rbac_defaults[0]); i++) {
		struct k32_buf body, out;
		struct k32_err err;
		k32_err_clear(&err);
		k32_buf_init(&body, al, 8 * 1024, "default ClusterRole");
		k32_buf_init(&out, al, 64 * 1024, "bootstrap response");
		k32_status_t st = k32_buf_printf(
		    &body, &err,
		    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
		    "\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/bootstrapping\":"
		    "\"rbac-defaults\"%s},\"annotations\":{\"rbac.authorization.kubernetes.io/"
		    "autoupdate\":\"true\"}},\"rules\":[%s]%s}",
		    rbac_defaults[i].name, rbac_defaults[i].labels, rbac_defaults[i].rules,
		    rbac_defaults[i].aggregate);
		int code = 0;
		if (!st)
			st = api_do(api, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
				    "application/json", k32_buf_cstr(&body), body.len, &code, &out,
				    &err);
		if (st || (code != 201 && code != 409))
			k32_log(K32_LOG_WARN, "api",
				"default ClusterRole %s not created at start (HTTP %d: %.160s); "
				"bindings to it grant nothing until an admin creates it",
				rbac_defaults[i].name, code, st ? err.msg : k32_buf_cstr(&out));
		k32_buf_fini(&body);
		k32_buf_fini(&out);
	}
	api_rbac_aggregate(api); /* admin, edit and view get their rules */
}

/* ---- aggregated ClusterRoles (kube-controller-manager's clusterrole-aggregation) ---------- */

/* Aggregation requests (a ClusterRole written) and whether a run is under way: process-wide,
 * as one API server per process writes RBAC objects (the CRD registry is alike). */
static _Atomic uint32_t rbac_agg_requests;
static _Atomic bool rbac_agg_running;

/* Whether the rule array holds a rule equal to r. */
static bool rbac_rules_have(const cJSON *rules, const cJSON *r)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, rules)
	{
		if (cJSON_Compare(it, r, true))
			return true;
	}
	return false;
}

/* Whether any of the selectors matches labels. */
static bool rbac_selected(const cJSON *selectors, const cJSON *labels)
{
	const cJSON *sel;
	cJSON_ArrayForEach(sel, selectors)
	{
		if (kmeta_label_selector_matches(sel, labels))
			return true;
	}
	return false;
}

/* One pass over the ClusterRoles: each with an aggregationRule gets as its rules the union of
 * the rules of the ClusterRoles its selectors match (in name order, duplicates once), written
 * when that differs from what it holds. Returns whether it wrote. */
static bool rbac_aggregate_pass(struct api_server *api)
{
	struct store_key prefix = {"rbac.authorization.k8s.io", "clusterroles", "", NULL};
	struct store_list_opts opts = {.limit = K32_API_RBAC_MAX_CLUSTERROLES};
	struct store_list l;
	struct k32_err err;
	memset(&l, 0, sizeof(l));
	bool wrote = false;
	if (store_list(api->store, &prefix, &opts, &l, &err)) {
		store_list_fini(api->store, &l);
		return false;
	}
	bool any = false;
	for (uint32_t i = 0; i < l.count && !any; i++)
		any = strstr(store_obj_data(l.items[i]), "\"aggregationRule\"") != NULL;
	if (!any) {
		store_list_fini(api->store, &l);
		return false;
	}
	if (l.continue_token[0])
		K32_LOGW("api",
			 "aggregating ClusterRoles: only the first %d were read "
			 "(K32_API_RBAC_MAX_CLUSTERROLES); the rules of the others are left out",
			 K32_API_RBAC_MAX_CLUSTERROLES);
	const uint32_t n = l.count;
	size_t cap = (n ? n : 1) * sizeof(cJSON *);
	cJSON **roles = api_zalloc(cap);
	for (uint32_t i = 0; roles && i < n; i++)
		roles[i] = api_parse_obj(l.items[i]);
	store_list_fini(api->store, &l);
	for (uint32_t i = 0; roles && i < n; i++) {
		const cJSON *sels = k32_json_find(roles[i], "aggregationRule.clusterRoleSelectors");
		if (!cJSON_IsArray(sels))
			continue;
		const char *name = api_jstr(roles[i], "metadata.name");
		cJSON *rules = cJSON_CreateArray();
		int count = 0;
		bool cut = false;
		for (uint32_t j = 0; rules && j < n; j++) {
			if (j == i ||
			    !rbac_selected(sels, k32_json_find(roles[j], "metadata.labels")))
				continue;
			const cJSON *r;
			cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(roles[j], "rules"))
			{
				if (rbac_rules_have(rules, r))
					continue;
				if (count == K32_API_RBAC_MAX_RULES) {
					cut = true;
					break;
				}
				cJSON_AddItemToArray(rules, cJSON_Duplicate(r, true));
				count++;
			}
		}
		if (cut)
			K32_LOGW(
			    "api",
			    "ClusterRole %s aggregates over %d rules (K32_API_RBAC_MAX_RULES); "
			    "the rest are left out: select fewer roles or merge their rules",
			    name ? name : "?", K32_API_RBAC_MAX_RULES);
		const cJSON *have = cJSON_GetObjectItemCaseSensitive(roles[i], "rules");
		bool same = rules && (have ? cJSON_Compare(have, rules, true)
					   : cJSON_GetArraySize(rules) == 0);
		if (!rules || same || !name) {
			cJSON_Delete(rules);
			continue;
		}
		/* the later roles read this one's new rules (a chain: admin <- edit <- view) */
		if (have)
			cJSON_ReplaceItemInObjectCaseSensitive(roles[i], "rules", rules);
		else
			cJSON_AddItemToObject(roles[i], "rules", rules);
		char *body = cJSON_PrintUnformatted(roles[i]);
		char target[320];
		snprintf(target, sizeof(target),
			 "/apis/rbac.authorization.k8s.io/v1/clusterroles/%s", name);
		struct k32_buf out;
		k32_buf_init(&out, k32_default_allocator(), 64 * 1024, "aggregation response");
		int code = 0;
		if (body &&
		    !api_do(api, "PUT", target, "application/json", body, strlen(body), &code, &out,
			    &err) &&
		    code == 200)
			wrote = true;
		else if (code != 409) /* 409: changed meanwhile; its write asks for a pass */
			K32_LOGW("api", "aggregating ClusterRole %s: HTTP %d: %.160s", name, code,
				 k32_buf_cstr(&out));
		k32_buf_fini(&out);
		cJSON_free(body);
	}
	for (uint32_t i = 0; roles && i < n; i++)
		cJSON_Delete(roles[i]);
	api_free(roles, cap);
	return wrote;
}

void api_rbac_aggregate(struct api_server *api)
{
	atomic_fetch_add(&rbac_agg_requests, 1);
	for (;;) {
		bool idle = false;
		/* one run at a time: a write during a run (its own included) asks the run for
		 * another pass instead of nesting */
		if (!atomic_compare_exchange_strong(&rbac_agg_running, &idle, true))
			return;
		uint32_t seen = 0;
		for (int pass = 0; pass < K32_API_RBAC_AGGREGATE_PASSES; pass++) {
			seen = atomic_load(&rbac_agg_requests);
			if (!rbac_aggregate_pass(api) && atomic_load(&rbac_agg_requests) == seen)
				break;
			if (pass + 1 == K32_API_RBAC_AGGREGATE_PASSES)
				K32_LOGW("api",
					 "aggregating ClusterRoles: still changing after %d passes "
					 "(K32_API_RBAC_AGGREGATE_PASSES): do two roles aggregate "
					 "each other?",
					 K32_API_RBAC_AGGREGATE_PASSES);
		}
		atomic_store(&rbac_agg_running, false);
		/* a request that came after the last look and found the run under way */
		if (atomic_load(&rbac_agg_requests) == seen)
			return;
	}
}
