/*
 * kube32-cli - deploy Wasm pods and talk to board consoles.
 *
 *   kube32-cli deploy FILE.wasm --name N [--namespace NS] [--node NODE] [--memory 24Ki]
 *                     [--hardware none|i2c:...] [--budget off|N] [--dry-run]
 *                     [--kubeconfig PATH]
 *   kube32-cli console NODE CMD [--kubeconfig PATH]
 *   kube32-cli logs POD [-n NS] [--previous] [--tail N] [--kubeconfig PATH]
 *
 * deploy uploads the module into the cluster's module store (a ConfigMap named N.wasm whose
 * binaryData key N.wasm holds it: where the kubelet looks when the image is not in the
 * node's image directory, src/kubelet/README.md "Images") and creates a Pod with image
 * N.wasm. --dry-run prints the Pod as YAML and uploads nothing.
 *
 * console finds the node's pod server (status.addresses InternalIP and
 * status.daemonEndpoints.kubeletEndpoint.Port of its Node) and POSTs "K32_CMD:CMD" to its
 * /console, printing the answer (PODS, MEM, TASKS, BENCH). logs prints pods/POD/log (the
 * control plane fills it from the node's log ring).
 *
 * The kubeconfig (--kubeconfig, else $KUBECONFIG, else ./var/kubeconfig) is read with
 * libyaml: the current-context's cluster (server, certificate-authority-data or
 * certificate-authority) and user (token); without a current-context the first of each.
 *
 * Exit codes: 0 done, 1 the request failed (server unreachable, API error), 2 bad usage or
 * input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/k32_alloc.h"
#include "base/k32_json.h"
#include "base/k32_status.h"
#include "http/http.h"
#include "platform/k32_platform.h"

#define CLI_MODULE_MAX	   K32_KLET_IMAGE_MAX_BYTES /* the largest module a kubelet takes */
#define CLI_KUBECONFIG_MAX (256u * 1024)	    /* largest kubeconfig read */
#define CLI_STR		   512			    /* kubeconfig strings except the CA */
#define CLI_YAML_DEPTH	   16			    /* nesting emitted by the YAML printer */

static const char *prog = "kube32-cli";

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage:\n"
	    "  kube32-cli deploy FILE.wasm --name N [--namespace NS] [--node NODE]\n"
	    "                    [--memory 24Ki] [--hardware none|i2c:DEV[,i2c:DEV...]]\n"
	    "                    [--budget off|N] [--dry-run] [--kubeconfig PATH]\n"
	    "      upload FILE.wasm as ConfigMap N.wasm (binaryData key N.wasm) and create Pod N\n"
	    "      with image N.wasm; --dry-run prints the Pod as YAML and uploads nothing\n"
	    "  kube32-cli console NODE CMD [--kubeconfig PATH]\n"
	    "      send K32_CMD:CMD (PODS, MEM, TASKS, BENCH...) to NODE's console and print the\n"
	    "      answer\n"
	    "  kube32-cli logs POD [-n NS] [--previous] [--tail N] [--kubeconfig PATH]\n"
	    "      print the pod's log (its current container, or with --previous the last one)\n"
	    "  kube32-cli --help\n"
	    "kubeconfig: --kubeconfig, else $KUBECONFIG, else var/kubeconfig\n");
}

/* ---- kubeconfig ------------------------------------------------------------------------ */

struct kubeconfig {
	char server[CLI_STR];
	char ca_path[CLI_STR];
	char *ca_data; /* base64 (malloc'd) or NULL */
	char token[CLI_STR];
};

static yaml_node_t *ymap_get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static const char *yscalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The entry of list `seq` whose "name" is name (NULL: the first), then its member `inner`. */
static yaml_node_t *ynamed(yaml_document_t *d, yaml_node_t *seq, const char *name,
			   const char *inner)
{
	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top;
	     i++) {
		yaml_node_t *e = yaml_document_get_node(d, *i);
		const char *n = yscalar(ymap_get(d, e, "name"));
		if (!name || (n && !strcmp(n, name)))
			return ymap_get(d, e, inner);
	}
	return NULL;
}

static int kubeconfig_load(const char *path, struct kubeconfig *kc)
{
	const struct k32_platform_ops *pl = k32_plat();
	const struct k32_allocator *a = k32_default_allocator();
	struct k32_err err = {0};
	uint8_t *text = NULL;
	size_t len = 0;
	memset(kc, 0, sizeof(*kc));
	if (pl->file_read_all(path, a, CLI_KUBECONFIG_MAX, &text, &len, &err)) {
		fprintf(stderr,
			"%s: cannot read kubeconfig %s: %s (pass --kubeconfig PATH or set "
			"KUBECONFIG)\n",
			prog, path, err.msg);
		return 2;
	}
	yaml_parser_t p;
	yaml_document_t d;
	int rc = 2;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, text, len);
	if (!yaml_parser_load(&p, &d)) {
		fprintf(stderr, "%s: kubeconfig %s is not valid YAML: %s at line %zu\n", prog, path,
			p.problem ? p.problem : "parse error", p.problem_mark.line + 1);
		yaml_parser_delete(&p);
		k32_free(a, text, len + 1);
		return 2;
	}
	yaml_node_t *root = yaml_document_get_root_node(&d);
	const char *cur = yscalar(ymap_get(&d, root, "current-context"));
	const char *cname = NULL, *uname = NULL;
	if (cur && *cur) {
		yaml_node_t *ctx = ynamed(&d, ymap_get(&d, root, "contexts"), cur, "context");
		if (!ctx) {
			fprintf(stderr,
				"%s: kubeconfig %s: current-context %s is not in contexts\n", prog,
				path, cur);
			goto out;
		}
		cname = yscalar(ymap_get(&d, ctx, "cluster"));
		uname = yscalar(ymap_get(&d, ctx, "user"));
	}
	yaml_node_t *cl = ynamed(&d, ymap_get(&d, root, "clusters"), cname, "cluster");
	yaml_node_t *us = ynamed(&d, ymap_get(&d, root, "users"), uname, "user");
	const char *server = yscalar(ymap_get(&d, cl, "server"));
	if (!server) {
		fprintf(stderr, "%s: kubeconfig %s has no clusters[].cluster.server%s%s\n", prog,
			path, cname ? " for cluster " : "", cname ? cname : "");
		goto out;
	}
	snprintf(kc->server, sizeof(kc->server), "%s", server);
	const char *cad = yscalar(ymap_get(&d, cl, "certificate-authority-data"));
	const char *cap = yscalar(ymap_get(&d, cl, "certificate-authority"));
	const char *tok = yscalar(ymap_get(&d, us, "token"));
	if (cad) {
		size_t n = strlen(cad) + 1;
		kc->ca_data = malloc(n);
		if (kc->ca_data)
			memcpy(kc->ca_data, cad, n);
		if (!kc->ca_data) {
			fprintf(stderr, "%s: out of memory reading the kubeconfig\n", prog);
			goto out;
		}
	}
	if (cap)
		snprintf(kc->ca_path, sizeof(kc->ca_path), "%s", cap);
	if (tok)
		snprintf(kc->token, sizeof(kc->token), "%s", tok);
	rc = 0;
out:
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	k32_free(a, text, len + 1);
	return rc;
}

/* ---- base64 ---------------------------------------------------------------------------- */

static const char b64t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const uint8_t *in, size_t len)
{
	char *out = malloc((len + 2) / 3 * 4 + 1);
	size_t o = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = b64t[(v >> 18) & 63];
		out[o++] = b64t[(v >> 12) & 63];
		out[o++] = i + 1 < len ? b64t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? b64t[v & 63] : '=';
	}
	out[o] = 0;
	return out;
}

/* Decodes in place-independent: returns malloc'd bytes and their count, NULL on bad input. */
static uint8_t *b64_decode(const char *in, size_t *out_len)
{
	size_t n = strlen(in);
	uint8_t *out = malloc(n / 4 * 3 + 3);
	uint32_t v = 0;
	int bits = 0;
	size_t o = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *p = strchr(b64t, in[i]);
		if (in[i] == '=' || in[i] == '\n' || in[i] == '\r' || in[i] == ' ')
			continue;
		if (!p || !in[i]) {
			free(out);
			return NULL;
		}
		v = v << 6 | (uint32_t)(p - b64t);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(v >> bits);
		}
	}
	*out_len = o;
	return out;
}

/* ---- API client ------------------------------------------------------------------------ */

struct api {
	struct http_client *c;
	char ca_tmp[CLI_STR]; /* the decoded CA, removed at the end */
	char where[CLI_STR];  /* the server, for messages */
};

static int url_split(const char *url, bool *tls, char *host, size_t hcap, uint16_t *port)
{
	const char *h;
	if (!strncmp(url, "https://", 8)) {
		*tls = true;
		h = url + 8;
	} else if (!strncmp(url, "http://", 7)) {
		*tls = false;
		h = url + 7;
	} else {
		return -1;
	}
	const char *colon = strchr(h, ':');
	const char *slash = strchr(h, '/');
	size_t hl = colon ? (size_t)(colon - h) : slash ? (size_t)(slash - h) : strlen(h);
	if (!hl || hl >= hcap)
		return -1;
	memcpy(host, h, hl);
	host[hl] = 0;
	long p = *tls ? 443 : 80;
	if (colon) {
		char *end;
		p = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || (*end && *end != '/') || p <= 0 || p > 65535)
			return -1;
	}
	*port = (uint16_t)p;
	return 0;
}

static int api_open(const struct kubeconfig *kc, struct api *api)
{
	struct http_client_config cfg;
	char host[256];
	struct k32_err err = {0};
	memset(api, 0, sizeof(*api));
	http_client_config_init(&cfg);
	snprintf(api->where, sizeof(api->where), "%s", kc->server);
	if (url_split(kc->server, &cfg.tls, host, sizeof(host), &cfg.port)) {
		fprintf(stderr,
			"%s: kubeconfig server %s is not http(s)://HOST[:PORT]; fix the "
			"kubeconfig\n",
			prog, kc->server);
		return 2;
	}
	cfg.host = host;
	cfg.bearer_token = kc->token[0] ? kc->token : NULL;
	if (cfg.tls) {
		if (kc->ca_data) {
			size_t n = 0;
			uint8_t *pem = b64_decode(kc->ca_data, &n);
			if (!pem) {
				fprintf(stderr,
					"%s: kubeconfig certificate-authority-data is not base64; "
					"fix the kubeconfig\n",
					prog);
				return 2;
			}
			const char *tmp = getenv("TMPDIR");
			uint32_t r = 0;
			k32_plat()->random(&r, sizeof(r));
			snprintf(api->ca_tmp, sizeof(api->ca_tmp), "%s/kube32-cli-ca-%08x.pem",
				 tmp && *tmp ? tmp : "/tmp", (unsigned)r);
			k32_status_t st = k32_plat()->file_write_atomic(api->ca_tmp, pem, n, &err);
			free(pem);
			if (st) {
				fprintf(stderr, "%s: cannot write the CA to %s: %s\n", prog,
					api->ca_tmp, err.msg);
				api->ca_tmp[0] = 0;
				return 1;
			}
			cfg.ca_file = api->ca_tmp;
		} else if (kc->ca_path[0]) {
			cfg.ca_file = kc->ca_path;
		} else {
			fprintf(stderr,
				"%s: kubeconfig server %s is HTTPS but the cluster has no "
				"certificate-authority(-data)\n",
				prog, kc->server);
			return 2;
		}
	}
	if (http_client_new(&cfg, &api->c, &err)) {
		fprintf(stderr, "%s: cannot make a client for %s: %s\n", prog, kc->server, err.msg);
		return 1;
	}
	return 0;
}

static void api_close(struct api *api)
{
	http_client_free(api->c);
	api->c = NULL;
	if (api->ca_tmp[0])
		k32_plat()->file_remove(api->ca_tmp, NULL);
}

/* Prints why a request failed: transport error, or the API Status's message. */
static void report_fail(const char *where, const char *method, const char *target, k32_status_t st,
			const struct k32_err *err, const struct http_client_response *r)
{
	if (st) {
		fprintf(stderr, "%s: %s %s%s failed: %s (%s)\n", prog, method, where, target,
			err->msg[0] ? err->msg : "request failed", k32_status_name(st));
		return;
	}
	const char *msg = NULL;
	cJSON *j = NULL;
	if (r->body.len && !k32_json_parse((const char *)r->body.data, r->body.len, &j, NULL))
		msg = cJSON_GetStringValue(cJSON_GetObjectItem(j, "message"));
	fprintf(stderr, "%s: %s %s answered HTTP %d: %s\n", prog, method, target, r->status,
		msg	      ? msg
		: r->body.len ? (const char *)r->body.data
			      : "(no body)");
	cJSON_Delete(j);
}

/* One request; 0 and the response on any HTTP status, else 1 with the error printed. */
static int api_call(struct api *api, const char *method, const char *target, const char *body,
		    struct http_client_response *r)
{
	struct http_client_request req = {
	    .method = method,
	    .target = target,
	    .content_type = body ? "application/json" : NULL,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	};
	struct k32_err err = {0};
	k32_status_t st = http_client_do(api->c, &req, r, &err);
	if (st) {
		report_fail(api->where, method, target, st, &err, r);
		return 1;
	}
	return 0;
}

/* ---- deploy ---------------------------------------------------------------------------- */

/* Kubernetes quantity as bytes: digits with an optional Ki/Mi/Gi/k/M/G suffix. */
static int parse_quantity(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	static const struct {
		const char *sfx;
		uint64_t mul;
	} t[] = {{"", 1},     {"Ki", 1024},   {"Mi", 1024 * 1024}, {"Gi", 1024ull << 20},
		 {"k", 1000}, {"M", 1000000}, {"G", 1000000000ull}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcmp(end, t[i].sfx)) {
			if (v == 0 || v > UINT64_MAX / t[i].mul / 2)
				return -1;
			*out = v * t[i].mul;
			return 0;
		}
	}
	return -1;
}

/* DNS-1123 label-ish: lower case letters, digits, '-', '.', 1..200 chars. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 200 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

static bool valid_hardware(const char *s)
{
	if (!strcmp(s, "none"))
		return true;
	const char *p = s;
	while (*p) {
		if (strncmp(p, "i2c:", 4))
			return false;
		p += 4;
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (!n)
			return false;
		p += n;
		if (*p == ',' && !*++p)
			return false;
	}
	return true;
}

struct deploy_opts {
	const char *file, *name, *ns, *node, *memory, *hardware, *budget, *kubeconfig;
	bool dry_run;
};

static cJSON *pod_manifest(const struct deploy_opts *o, char *image, size_t icap)
{
	snprintf(image, icap, "%s.wasm", o->name);
	cJSON *pod = cJSON_CreateObject();
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	cJSON *md = cJSON_AddObjectToObject(pod, "metadata");
	cJSON_AddStringToObject(md, "name", o->name);
	cJSON_AddStringToObject(md, "namespace", o->ns);
	cJSON *labels = cJSON_AddObjectToObject(md, "labels");
	cJSON_AddStringToObject(labels, "app", o->name);
	if (o->hardware || o->budget) {
		cJSON *an = cJSON_AddObjectToObject(md, "annotations");
		if (o->hardware)
			cJSON_AddStringToObject(an, "kube32.io/hardware", o->hardware);
		if (o->budget)
			cJSON_AddStringToObject(an, "kube32.io/execution-budget", o->budget);
	}
	cJSON *spec = cJSON_AddObjectToObject(pod, "spec");
	if (o->node)
		cJSON_AddStringToObject(spec, "nodeName", o->node);
	cJSON *cs = cJSON_AddArrayToObject(spec, "containers");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddItemToArray(cs, c);
	cJSON_AddStringToObject(c, "name", o->name);
	cJSON_AddStringToObject(c, "image", image);
	if (o->memory) {
		cJSON *lim =
		    cJSON_AddObjectToObject(cJSON_AddObjectToObject(c, "resources"), "limits");
		cJSON_AddStringToObject(lim, "memory", o->memory);
	}
	return pod;
}

/* Emits a cJSON tree as YAML events (depth-capped: the manifest is shallow). */
static int yaml_emit_json(yaml_emitter_t *e, const cJSON *j, int depth)
{
	yaml_event_t ev;
	if (depth > CLI_YAML_DEPTH)
		return -1;
	if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
		bool obj = cJSON_IsObject(j);
		if (obj)
			yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							    YAML_BLOCK_MAPPING_STYLE);
		else
			yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							     YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(e, &ev))
			return -1;
		const cJSON *it;
		cJSON_ArrayForEach(it, j)
		{
			if (obj) {
				yaml_scalar_event_initialize(&ev, NULL, NULL,
							     (yaml_char_t *)it->string, -1, 1, 1,
							     YAML_ANY_SCALAR_STYLE);
				if (!yaml_emitter_emit(e, &ev))
					return -1;
			}
			if (yaml_emit_json(e, it, depth + 1))
				return -1;
		}
		if (obj)
			yaml_mapping_end_event_initialize(&ev);
		else
			yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(e, &ev) ? 0 : -1;
	}
	char num[64];
	const char *s = cJSON_GetStringValue(j);
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
	int plain_ok = 1;
	if (!s && cJSON_IsNumber(j)) {
		snprintf(num, sizeof(num), "%.17g", j->valuedouble);
		s = num;
	} else if (!s && cJSON_IsBool(j)) {
		s = cJSON_IsTrue(j) ? "true" : "false";
	} else if (!s) {
		s = "null";
	} else {
		/* a string that would read back as a number/bool/null is quoted */
		char *end;
		(void)strtod(s, &end);
		if ((*s && !*end) || !strcmp(s, "true") || !strcmp(s, "false") ||
		    !strcmp(s, "null") || !strcmp(s, "off") || !strcmp(s, "on") ||
		    !strcmp(s, "yes") || !strcmp(s, "no")) {
			style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
			plain_ok = 0;
		}
	}
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, -1, plain_ok, 1, style);
	return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int print_yaml(const cJSON *doc)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	int rc = -1;
	yaml_emitter_initialize(&e);
	yaml_emitter_set_output_file(&e, stdout);
	yaml_emitter_set_unicode(&e, 1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (!yaml_emitter_emit(&e, &ev))
		goto out;
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	if (!yaml_emitter_emit(&e, &ev) || yaml_emit_json(&e, doc, 0))
		goto out;
	yaml_document_end_event_initialize(&ev, 1);
	if (!yaml_emitter_emit(&e, &ev))
		goto out;
	yaml_stream_end_event_initialize(&ev);
	rc = yaml_emitter_emit(&e, &ev) ? 0 : -1;
out:
	if (rc)
		fprintf(stderr, "%s: YAML output failed: %s\n", prog,
			e.problem ? e.problem : "emitter error");
	yaml_emitter_delete(&e);
	return rc;
}

static const char *default_kubeconfig(const char *flag)
{
	if (flag)
		return flag;
	const char *env = getenv("KUBECONFIG");
	if (env && *env)
		return env; /* the first path of a list is not split: one path expected */
	return "var/kubeconfig";
}

/* Creates or (on 409) replaces ConfigMap NS/N.wasm with the module. */
static int upload_module(struct api *api, const struct deploy_opts *o, const char *image,
			 const uint8_t *mod, size_t len)
{
	char *b64 = b64_encode(mod, len);
	char target[512];
	int rc = 1;
	if (!b64) {
		fprintf(stderr, "%s: out of memory encoding %zu module bytes\n", prog, len);
		return 1;
	}
	cJSON *cm = cJSON_CreateObject();
	cJSON_AddStringToObject(cm, "apiVersion", "v1");
	cJSON_AddStringToObject(cm, "kind", "ConfigMap");
	cJSON *md = cJSON_AddObjectToObject(cm, "metadata");
	cJSON_AddStringToObject(md, "name", image);
	cJSON_AddStringToObject(md, "namespace", o->ns);
	cJSON_AddObjectToObject(md, "labels");
	cJSON_AddStringToObject(cJSON_GetObjectItem(md, "labels"), "kube32.io/module", o->name);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(cm, "binaryData"), image, b64);
	free(b64);
	char *body = cJSON_PrintUnformatted(cm);
	struct http_client_response r = {0};
	if (!body) {
		fprintf(stderr, "%s: out of memory building the ConfigMap\n", prog);
		goto out;
	}
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps", o->ns);
	if (api_call(api, "POST", target, body, &r))
		goto out;
	if (r.status == 201 || r.status == 200) {
		printf("configmap/%s created (%zu module bytes)\n", image, len);
		rc = 0;
		goto out;
	}
	if (r.status != 409) {
		report_fail(api->where, "POST", target, K32_OK, NULL, &r);
		goto out;
	}
	/* it exists: replace it at its current resourceVersion */
	http_client_response_fini(&r);
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps/%s", o->ns, image);
	if (api_call(api, "GET", target, NULL, &r))
		goto out;
	cJSON *cur = NULL;
	const char *rv = NULL;
	if (r.status == 200 && !k32_json_parse((const char *)r.body.data, r.body.len, &cur, NULL))
		rv = cJSON_GetStringValue(k32_json_find(cur, "metadata.resourceVersion"));
	if (!rv) {
		report_fail(api->where, "GET", target, K32_OK, NULL, &r);
		cJSON_Delete(cur);
		goto out;
	}
	cJSON_AddStringToObject(md, "resourceVersion", rv);
	cJSON_Delete(cur);
	cJSON_free(body);
	body = cJSON_PrintUnformatted(cm);
	http_client_response_fini(&r);
	if (!body || api_call(api, "PUT", target, body, &r))
		goto out;
	if (r.status != 200) {
		report_fail(api->where, "PUT", target, K32_OK, NULL, &r);
		goto out;
	}
	printf("configmap/%s replaced (%zu module bytes)\n", image, len);
	rc = 0;
out:
	http_client_response_fini(&r);
	cJSON_free(body);
	cJSON_Delete(cm);
	return rc;
}

static int cmd_deploy(int argc, char **argv)
{
	struct deploy_opts o = {.ns = "default"};
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "--dry-run")) {
			o.dry_run = true;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--name"))
			slot = &o.name;
		else if (!strcmp(a, "--namespace") || !strcmp(a, "-n"))
			slot = &o.ns;
		else if (!strcmp(a, "--node"))
			slot = &o.node;
		else if (!strcmp(a, "--memory"))
			slot = &o.memory;
		else if (!strcmp(a, "--hardware"))
			slot = &o.hardware;
		else if (!strcmp(a, "--budget"))
			slot = &o.budget;
		else if (!strcmp(a, "--kubeconfig"))
			slot = &o.kubeconfig;
		if (slot) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: deploy: %s needs a value\n", prog, a);
				return 2;
			}
			*slot = argv[++i];
			continue;
		}
		if (a[0] == '-') {
			fprintf(stderr, "%s: deploy: unknown option %s (see --help)\n", prog, a);
			return 2;
		}
		if (o.file) {
			fprintf(stderr, "%s: deploy: one FILE.wasm expected, got %s and %s\n", prog,
				o.file, a);
			return 2;
		}
		o.file = a;
	}
	if (!o.file) {
		fprintf(stderr, "%s: deploy: FILE.wasm is missing (see --help)\n", prog);
		return 2;
	}
	if (!o.name) {
		fprintf(stderr,
			"%s: deploy: --name is required (the pod's name, e.g. --name hello)\n",
			prog);
		return 2;
	}
	if (!valid_name(o.name) || !valid_name(o.ns) || (o.node && !valid_name(o.node))) {
		fprintf(stderr,
			"%s: deploy: name, namespace and node must be lower-case letters, digits, "
			"'-' or '.' (got name %s, namespace %s%s%s)\n",
			prog, o.name, o.ns, o.node ? ", node " : "", o.node ? o.node : "");
		return 2;
	}
	uint64_t bytes = 0;
	if (o.memory && parse_quantity(o.memory, &bytes)) {
		fprintf(stderr,
			"%s: deploy: --memory %s is not a quantity: use bytes or a Ki/Mi/Gi/k/M/G "
			"suffix, e.g. 24Ki\n",
			prog, o.memory);
		return 2;
	}
	if (o.hardware && !valid_hardware(o.hardware)) {
		fprintf(stderr,
			"%s: deploy: --hardware %s: expected none or i2c:DEVICE[,i2c:DEVICE...], "
			"e.g. i2c:bme688\n",
			prog, o.hardware);
		return 2;
	}
	if (o.hardware && !strcmp(o.hardware, "none"))
		o.hardware = NULL;
	if (o.budget && strcmp(o.budget, "off")) {
		char *end;
		unsigned long long g = strtoull(o.budget, &end, 10);
		if (o.budget[0] < '0' || o.budget[0] > '9' || *end || !g) {
			fprintf(stderr,
				"%s: deploy: --budget %s: expected off or a positive number of gas "
				"units per call\n",
				prog, o.budget);
			return 2;
		}
	}
	const struct k32_allocator *al = k32_default_allocator();
	struct k32_err err = {0};
	uint8_t *mod = NULL;
	size_t len = 0;
	if (k32_plat()->file_read_all(o.file, al, CLI_MODULE_MAX, &mod, &len, &err)) {
		fprintf(stderr, "%s: deploy: cannot read %s: %s\n", prog, o.file, err.msg);
		return 2;
	}
	if (len < 8 || memcmp(mod, "\0asm", 4)) {
		fprintf(
		    stderr,
		    "%s: deploy: %s is not a Wasm module (it does not start with \\0asm); build "
		    "it with k32_add_pod or clang --target=wasm32\n",
		    prog, o.file);
		k32_free(al, mod, len + 1);
		return 2;
	}
	char image[256];
	cJSON *pod = pod_manifest(&o, image, sizeof(image));
	int rc = 1;
	if (o.dry_run) {
		rc = print_yaml(pod) ? 1 : 0;
		goto out;
	}
	struct kubeconfig kc;
	rc = kubeconfig_load(default_kubeconfig(o.kubeconfig), &kc);
	if (rc)
		goto out;
	struct api api;
	rc = api_open(&kc, &api);
	free(kc.ca_data);
	if (rc) {
		api_close(&api);
		goto out;
	}
	rc = upload_module(&api, &o, image, mod, len);
	if (!rc) {
		char target[512];
		char *body = cJSON_PrintUnformatted(pod);
		struct http_client_response r = {0};
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", o.ns);
		rc = 1;
		if (body && !api_call(&api, "POST", target, body, &r)) {
			if (r.status == 201 || r.status == 200) {
				printf("pod/%s created (image %s%s%s)\n", o.name, image,
				       o.node ? ", node " : "", o.node ? o.node : "");
				rc = 0;
			} else {
				report_fail(api.where, "POST", target, K32_OK, NULL, &r);
			}
		}
		http_client_response_fini(&r);
		cJSON_free(body);
	}
	api_close(&api);
out:
	cJSON_Delete(pod);
	k32_free(al, mod, len + 1);
	return rc;
}

/* ---- console --------------------------------------------------------------------------- */

static int cmd_console(int argc, char **argv)
{
	const char *node = NULL, *cmd = NULL, *kcpath = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--kubeconfig")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: console: --kubeconfig needs a value\n", prog);
				return 2;
			}
			kcpath = argv[++i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "%s: console: unknown option %s (see --help)\n", prog,
				argv[i]);
			return 2;
		} else if (!node) {
			node = argv[i];
		} else if (!cmd) {
			cmd = argv[i];
		} else {
			fprintf(stderr, "%s: console: expected NODE CMD, got an extra %s\n", prog,
				argv[i]);
			return 2;
		}
	}
	if (!node || !cmd) {
		fprintf(stderr,
			"%s: console: expected NODE CMD (CMD: PODS, MEM, TASKS or BENCH:...)\n",
			prog);
		return 2;
	}
	if (!valid_name(node)) {
		fprintf(stderr, "%s: console: %s is not a node name\n", prog, node);
		return 2;
	}
	char line[256];
	const char *c = !strncmp(cmd, "K32_CMD:", 8) ? cmd + 8 : cmd;
	if (!*c || strlen(c) > 127 || strchr(c, '\n')) {
		fprintf(stderr, "%s: console: CMD must be one line of 1..127 bytes\n", prog);
		return 2;
	}
	snprintf(line, sizeof(line), "K32_CMD:%s\n", c);

	struct kubeconfig kc;
	int rc = kubeconfig_load(default_kubeconfig(kcpath), &kc);
	if (rc)
		return rc;
	struct api api;
	rc = api_open(&kc, &api);
	free(kc.ca_data);
	if (rc) {
		api_close(&api);
		return rc;
	}
	char target[512], ip[64] = "127.0.0.1";
	struct http_client_response r = {0};
	cJSON *j = NULL;
	uint16_t port = 0;
	rc = 1;
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", node);
	if (api_call(&api, "GET", target, NULL, &r))
		goto out;
	if (r.status != 200) {
		report_fail(api.where, "GET", target, K32_OK, NULL, &r);
		goto out;
	}
	if (k32_json_parse((const char *)r.body.data, r.body.len, &j, NULL)) {
		fprintf(stderr, "%s: console: node %s: the API answered no JSON\n", prog, node);
		goto out;
	}
	const cJSON *p = k32_json_find(j, "status.daemonEndpoints.kubeletEndpoint.Port");
	if (cJSON_IsNumber(p) && p->valuedouble > 0 && p->valuedouble < 65536)
		port = (uint16_t)p->valuedouble;
	const cJSON *a;
	cJSON_ArrayForEach(a, k32_json_find(j, "status.addresses"))
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(a, "type"));
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(a, "address"));
		if (t && v && !strcmp(t, "InternalIP"))
			snprintf(ip, sizeof(ip), "%s", v);
	}
	if (!port) {
		fprintf(stderr,
			"%s: console: node %s reports no pod server port "
			"(status.daemonEndpoints.kubeletEndpoint.Port); is its kubelet running?\n",
			prog, node);
		goto out;
	}
	struct http_client_config cfg;
	struct http_client *pc = NULL;
	struct k32_err err = {0};
	http_client_config_init(&cfg);
	cfg.host = ip;
	cfg.port = port;
	if (http_client_new(&cfg, &pc, &err)) {
		fprintf(stderr, "%s: console: %s\n", prog, err.msg);
		goto out;
	}
	struct http_client_request req = {.method = "POST",
					  .target = "/console",
					  .content_type = "text/plain",
					  .body = line,
					  .body_len = strlen(line)};
	struct http_client_response cr = {0};
	char where[128];
	snprintf(where, sizeof(where), "http://%s:%u", ip, (unsigned)port);
	k32_status_t st = http_client_do(pc, &req, &cr, &err);
	if (st) {
		report_fail(where, "POST", "/console", st, &err, &cr);
	} else if (cr.status != 200) {
		report_fail(where, "POST", "/console", K32_OK, NULL, &cr);
	} else {
		fwrite(cr.body.data, 1, cr.body.len, stdout);
		rc = cr.body.len >= 7 && !memcmp(cr.body.data, "K32_ERR", 7) ? 1 : 0;
	}
	http_client_response_fini(&cr);
	http_client_free(pc);
out:
	cJSON_Delete(j);
	http_client_response_fini(&r);
	api_close(&api);
	return rc;
}

/* ---- logs ------------------------------------------------------------------------------ */

static int cmd_logs(int argc, char **argv)
{
	const char *pod = NULL, *ns = "default", *kcpath = NULL, *tail = NULL;
	bool previous = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--previous") || !strcmp(a, "-p")) {
			previous = true;
			continue;
		}
		if (!strcmp(a, "--namespace") || !strcmp(a, "-n"))
			slot = &ns;
		else if (!strcmp(a, "--tail"))
			slot = &tail;
		else if (!strcmp(a, "--kubeconfig"))
			slot = &kcpath;
		if (slot) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: logs: %s needs a value\n", prog, a);
				return 2;
			}
			*slot = argv[++i];
		} else if (a[0] == '-') {
			fprintf(stderr, "%s: logs: unknown option %s (see --help)\n", prog, a);
			return 2;
		} else if (!pod) {
			pod = a;
		} else {
			fprintf(stderr, "%s: logs: expected one POD, got %s and %s\n", prog, pod,
				a);
			return 2;
		}
	}
	if (!pod || !valid_name(pod) || !valid_name(ns)) {
		fprintf(stderr,
			"%s: logs: expected POD [-n NAMESPACE] (lower-case letters, digits, '-' or "
			"'.')\n",
			prog);
		return 2;
	}
	long long t = -1;
	if (tail) {
		char *end;
		t = strtoll(tail, &end, 10);
		if (tail[0] < '0' || tail[0] > '9' || *end) {
			fprintf(stderr, "%s: logs: --tail %s: expected a number of lines\n", prog,
				tail);
			return 2;
		}
	}
	struct kubeconfig kc;
	int rc = kubeconfig_load(default_kubeconfig(kcpath), &kc);
	if (rc)
		return rc;
	struct api api;
	rc = api_open(&kc, &api);
	free(kc.ca_data);
	if (rc) {
		api_close(&api);
		return rc;
	}
	char target[512];
	int n = snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s/log?previous=%s",
			 ns, pod, previous ? "true" : "false");
	if (t >= 0 && n > 0 && (size_t)n < sizeof(target))
		snprintf(target + n, sizeof(target) - (size_t)n, "&tailLines=%lld", t);
	struct http_client_response r = {0};
	rc = 1;
	if (!api_call(&api, "GET", target, NULL, &r)) {
		if (r.status == 200) {
			fwrite(r.body.data, 1, r.body.len, stdout);
			rc = 0;
		} else {
			report_fail(api.where, "GET", target, K32_OK, NULL, &r);
		}
	}
	http_client_response_fini(&r);
	api_close(&api);
	return rc;
}

int main(int argc, char **argv)
{
	/* one allocator for every cJSON object, whether parsed or built here */
	k32_json_use_allocator(NULL);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "deploy"))
		return cmd_deploy(argc - 2, argv + 2);
	if (!strcmp(argv[1], "console"))
		return cmd_console(argc - 2, argv + 2);
	if (!strcmp(argv[1], "logs"))
		return cmd_logs(argc - 2, argv + 2);
	fprintf(stderr, "%s: unknown command %s (deploy, console or logs; see --help)\n", prog,
		argv[1]);
	return 2;
}
