/*
 * kube32-cli - deploy Wasm pods, look at them and talk to board consoles, for people with or
 * without kubectl.
 *
 *   kube32-cli deploy FILE.wasm --name N [--namespace NS] [--node NODE] [--memory 24Ki]
 *                     [--hardware none|i2c:...] [--budget off|N] [--dry-run]
 *                     [--timeout 60s | --no-wait]
 *   kube32-cli get pods|nodes|modules [NAME] [-n NS | -A]
 *   kube32-cli delete [pod] POD [-n NS] [--keep-module]
 *   kube32-cli logs POD [-n NS] [--previous] [--tail N] [--follow]
 *   kube32-cli top pods|nodes [-n NS | -A]
 *   kube32-cli console NODE CMD
 *   kube32-cli status [-w]
 *   (each with [--kubeconfig PATH], before or after the command)
 *
 * deploy uploads the module into the cluster's module store (a ConfigMap named N.wasm whose
 * binaryData key N.wasm holds it, labelled kube32.io/module=N: where the kubelet looks when
 * the image is not in the node's image directory, src/kubelet/README.md "Images") and creates
 * a Pod with image N.wasm (a Pod of that name is deleted first, so it runs the new module),
 * then waits for its real state: Running and Ready (or Succeeded), or a failure printed with
 * the pod's reason and message (exit 1), for --timeout (default 60s; --no-wait: no wait). --dry-run
 * prints the Pod as YAML and uploads nothing. delete removes the Pod (waiting until its kubelet has
 * stopped it) and the module ConfigMap deploy made for it. get prints tables (pods: READY, STATUS
 * as kubectl shows it, RESTARTS, NODE, IMAGE; nodes: STATUS, BOARD, POD POOL bytes, PODS
 * running/capacity, HARDWARE; modules: the module store). top reads metrics.k8s.io (what `kubectl
 * top` reads). logs prints pods/POD/log (the control plane fills it from the node's log ring);
 * --follow streams it.
 *
 * console finds the node's pod server (status.addresses InternalIP and
 * status.daemonEndpoints.kubeletEndpoint.Port of its Node) and POSTs "K32_CMD:CMD" to its
 * /console, printing the answer (PODS, MEM, TASKS, BENCH).
 *
 * The argument parsers are in cli_args.c (unit-tested and fuzzed); this file does the I/O.
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
#include "base/k32_base64.h"
#include "base/k32_json.h"
#include "base/k32_status.h"
#include "cli_args.h"
#include "http/http.h"
#include "platform/k32_platform.h"

#define CLI_MODULE_MAX	    K32_KLET_IMAGE_MAX_BYTES /* the largest module a kubelet takes */
#define CLI_KUBECONFIG_MAX  (256u * 1024)	     /* largest kubeconfig read */
#define CLI_STR		    512			     /* kubeconfig strings except the CA */
#define CLI_YAML_DEPTH	    16			     /* nesting emitted by the YAML printer */
#define CLI_LIST_MAX	    (8u * 1024 * 1024)	     /* largest list answer read */
#define CLI_TABLE_ROWS	    1024		     /* rows a table prints (then "... more") */
#define CLI_DELETE_WAIT_S   30			     /* how long delete waits for the kubelet */
#define CLI_STATUS_EVERY_US 2000000		     /* status -w: refresh period */
#define CLI_FOLLOW_IDLE_US  (24ll * 3600 * 1000000)  /* logs -f: silence allowed */

static const char *prog = "kube32-cli";

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage:\n"
	    "  kube32-cli deploy FILE.wasm --name N [--namespace NS] [--node NODE]\n"
	    "                    [--memory 24Ki] [--hardware none|i2c:DEV[,i2c:DEV...]]\n"
	    "                    [--budget off|N] [--dry-run] [--timeout 60s | --no-wait]\n"
	    "      upload FILE.wasm as ConfigMap N.wasm (binaryData key N.wasm) and create Pod N\n"
	    "      with image N.wasm (replacing a Pod N, so it runs the new module), then wait\n"
	    "      until it is Running and Ready, or Succeeded (exit 1 with the pod's reason and\n"
	    "      message if it fails or cannot start, or after --timeout: 90s, 2m, 0 = no\n"
	    "      limit; --no-wait: do not wait); --dry-run prints the Pod as YAML and\n"
	    "      uploads nothing\n"
	    "  kube32-cli get pods|nodes|modules [NAME] [-n NS | -A]\n"
	    "      list pods (status, restarts, node), nodes (board, pod pool, pods, hardware) or\n"
	    "      the module store's ConfigMaps\n"
	    "  kube32-cli delete [pod] POD [-n NS] [--keep-module]\n"
	    "      delete the pod (waiting until its node stopped it) and the module ConfigMap\n"
	    "      POD.wasm that deploy made for it\n"
	    "  kube32-cli logs POD [-n NS] [--previous|-p] [--tail N] [--follow|-f]\n"
	    "      print the pod's log (its current container, or with --previous the last one);\n"
	    "      --follow keeps printing new lines until the container ends\n"
	    "  kube32-cli top pods|nodes [-n NS | -A]\n"
	    "      CPU and memory bytes per pod or node (metrics.k8s.io)\n"
	    "  kube32-cli console NODE CMD\n"
	    "      send K32_CMD:CMD (PODS, MEM, TASKS, BENCH...) to NODE's console and print the\n"
	    "      answer\n"
	    "  kube32-cli status [-w]\n"
	    "      the cluster at a glance: boards with their pod pool used/free and pod server,\n"
	    "      pods with the curl line that reaches them, Devices with their latest\n"
	    "      readings; -w refreshes it every 2 s\n"
	    "  kube32-cli --help\n"
	    "every command but --dry-run talks to the cluster of the kubeconfig: --kubeconfig "
	    "PATH\n"
	    "(before or after the command), else $KUBECONFIG, else var/kubeconfig\n");
}

/* A parser's result: usage message printed, or help. -1: go on. */
static int parse_result(int rc, const char *msg)
{
	if (rc == CLI_HELP) {
		usage(stdout);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		return 2;
	}
	return -1;
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

/* malloc'd encoding of in, NULL when out of memory. */
static char *b64_encode(const uint8_t *in, size_t len)
{
	char *out = malloc(k32_base64_len(len) + 1);
	if (out)
		k32_base64_encode(in, len, out);
	return out;
}

/* malloc'd bytes of base64 text and their count, NULL on bad input or out of memory. */
static uint8_t *b64_decode(const char *in, size_t *out_len)
{
	size_t cap = k32_base64_max_decoded(strlen(in));
	uint8_t *out = malloc(cap);
	if (out && k32_base64_decode(in, out, cap, out_len) != K32_OK) {
		free(out);
		out = NULL;
	}
	return out;
}

static const char *jstr(const cJSON *o, const char *path)
{
	return cJSON_GetStringValue(k32_json_find(o, path));
}

static double jnum(const cJSON *o, const char *path)
{
	const cJSON *n = k32_json_find(o, path);
	return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

/* ---- API client ------------------------------------------------------------------------ */

struct api {
	struct http_client *c;
	char ca_tmp[CLI_STR]; /* the decoded CA, removed at the end */
	char where[CLI_STR];  /* the server, for messages */
	char token[CLI_STR];  /* the kubeconfig's token: also what a node's /console needs */
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
	snprintf(api->token, sizeof(api->token), "%s", kc->token);
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

static cJSON *pod_manifest(const struct cli_deploy *o, char *image, size_t icap)
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
static int upload_module(struct api *api, const struct cli_deploy *o, const char *image,
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

/* Loads the kubeconfig and opens the API client: 0, or the exit code (message printed). */
static int connect_api(const char *kcpath, struct api *api)
{
	struct kubeconfig kc;
	memset(api, 0, sizeof(*api));
	int rc = kubeconfig_load(default_kubeconfig(kcpath), &kc);
	if (rc)
		return rc;
	rc = api_open(&kc, api);
	free(kc.ca_data);
	if (rc)
		api_close(api);
	return rc;
}

/* GET target into *out (parsed): 0; 1 with the failure printed (any status but 200). */
static int api_get_json(struct api *api, const char *target, cJSON **out)
{
	struct http_client_response r = {0};
	int rc = 1;
	*out = NULL;
	if (api_call(api, "GET", target, NULL, &r))
		goto out;
	if (r.status != 200) {
		report_fail(api->where, "GET", target, K32_OK, NULL, &r);
		goto out;
	}
	if (k32_json_parse((const char *)r.body.data, r.body.len, out, NULL)) {
		fprintf(stderr, "%s: GET %s answered no JSON\n", prog, target);
		goto out;
	}
	rc = 0;
out:
	http_client_response_fini(&r);
	return rc;
}

/* Polls GET target until it answers 404 (up to CLI_DELETE_WAIT_S): 0 gone, 1 not (or the
 * request failed, printed). */
static int wait_gone(struct api *api, const char *target)
{
	struct http_client_response r = {0};
	for (int i = 0; i < CLI_DELETE_WAIT_S * 10; i++) {
		http_client_response_fini(&r);
		if (api_call(api, "GET", target, NULL, &r))
			return 1;
		if (r.status == 404) {
			http_client_response_fini(&r);
			return 0;
		}
		k32_plat()->sleep_us(100000);
	}
	http_client_response_fini(&r);
	return 1;
}

/* The status ("True", "False") of the pod's condition type, or NULL. */
static const char *pod_cond(const cJSON *pod, const char *type)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, k32_json_find(pod, "status.conditions"))
	{
		const char *t = jstr(c, "type");
		if (t && !strcmp(t, type))
			return jstr(c, "status");
	}
	return NULL;
}

/*
 * Waits for pod NS/NAME's real state, as kubectl rollout status does: Running with its
 * Ready condition True (the kubelet sets Ready when the container runs, after k32_init
 * returned; a readiness check would hold it), or Succeeded for a job: 0. A terminal failure
 * or one the pod will not leave by itself (Failed; a container that cannot start: a
 * waiting reason other than ContainerCreating; a crash before Ready; Unschedulable) or
 * timeout_ms (0: none) without Ready: 1, with the pod's own reason and message printed.
 */
static int deploy_wait(struct api *api, const char *ns, const char *name, uint64_t timeout_ms)
{
	char target[512];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
	char last[512] = "Pending (not scheduled yet)";
	uint64_t start_ms = k32_now_us() / 1000;
	for (int i = 0;; i++) {
		if (timeout_ms && k32_now_us() / 1000 - start_ms >= timeout_ms)
			break;
		if (i)
			k32_plat()->sleep_us(100000);
		cJSON *pod = NULL;
		if (api_get_json(api, target, &pod))
			return 1;
		const char *phase = cJSON_GetStringValue(k32_json_find(pod, "status.phase"));
		const char *node = cJSON_GetStringValue(k32_json_find(pod, "spec.nodeName"));
		const cJSON *cs =
		    cJSON_GetArrayItem(k32_json_find(pod, "status.containerStatuses"), 0);
		const char *wr = cJSON_GetStringValue(k32_json_find(cs, "state.waiting.reason"));
		const char *wm = cJSON_GetStringValue(k32_json_find(cs, "state.waiting.message"));
		const cJSON *term = k32_json_find(cs, "state.terminated");
		const cJSON *lterm = k32_json_find(cs, "lastState.terminated");
		const cJSON *restarts = cJSON_GetObjectItem(cs, "restartCount");
		const char *ready = pod_cond(pod, "Ready");
		const char *why = NULL, *detail = NULL;
		if (phase && !strcmp(phase, "Succeeded")) {
			printf("pod/%s ran to completion on %s (exit code 0): kube32-cli logs %s\n",
			       name, node ? node : "?", name);
			cJSON_Delete(pod);
			return 0;
		}
		if (phase && !strcmp(phase, "Running") && ready && !strcmp(ready, "True") &&
		    cJSON_IsTrue(cJSON_GetObjectItem(cs, "ready"))) {
			printf("pod/%s running and ready on %s\n", name, node ? node : "?");
			cJSON_Delete(pod);
			return 0;
		}
		if (phase && !strcmp(phase, "Failed")) {
			why = cJSON_GetStringValue(k32_json_find(pod, "status.reason"));
			detail = cJSON_GetStringValue(k32_json_find(pod, "status.message"));
			if (term) {
				why = why ? why : jstr(term, "reason");
				detail = detail ? detail : jstr(term, "message");
			}
			why = why ? why : "Failed";
		} else if (wr && strcmp(wr, "ContainerCreating") && strcmp(wr, "PodInitializing")) {
			why = wr;
			detail = wm;
			if (lterm) { /* why the last run ended says more than the back-off */
				snprintf(last, sizeof(last),
					 "its last run ended: %s (exit code %d)%s%s",
					 jstr(lterm, "reason") ? jstr(lterm, "reason") : "?",
					 (int)jnum(lterm, "exitCode"),
					 jstr(lterm, "message") ? ": " : "",
					 jstr(lterm, "message") ? jstr(lterm, "message") : "");
				detail = last;
			}
		} else if (term || (cJSON_IsNumber(restarts) && restarts->valuedouble > 0)) {
			const cJSON *t = term ? term : lterm;
			why = jstr(t, "reason") ? jstr(t, "reason") : "Error";
			detail = jstr(t, "message");
		} else if (!node) {
			const cJSON *c;
			cJSON_ArrayForEach(c, k32_json_find(pod, "status.conditions"))
			{
				const char *t = jstr(c, "type"), *st = jstr(c, "status");
				const char *r = jstr(c, "reason");
				if (t && st && r && !strcmp(t, "PodScheduled") &&
				    !strcmp(st, "False") && !strcmp(r, "Unschedulable")) {
					why = r;
					detail = jstr(c, "message");
				}
			}
		}
		if (why) {
			fprintf(stderr, "%s: pod/%s did not start%s%s: %s%s%s\n", prog, name,
				node ? " on " : "", node ? node : "", why, detail ? ": " : "",
				detail ? detail : "");
			fprintf(stderr,
				"%s: the pod stays as it is: kube32-cli logs %s, kubectl describe "
				"pod %s; kube32-cli delete %s removes it\n",
				prog, name, name, name);
			cJSON_Delete(pod);
			return 1;
		}
		snprintf(last, sizeof(last), "%s%s%s%s", phase ? phase : "Pending",
			 node ? " on " : " (not scheduled yet)", node ? node : "",
			 phase && !strcmp(phase, "Running") ? ", not Ready" : "");
		cJSON_Delete(pod);
	}
	fprintf(stderr,
		"%s: pod/%s is not ready after %.1f s: still %s (kubectl describe pod %s says "
		"why; --timeout waits longer, --no-wait not at all)\n",
		prog, name, (double)timeout_ms / 1000, last, name);
	return 1;
}

/*
 * Creates the pod; if one of that name exists, deletes it (waiting until its kubelet stopped
 * it) and creates it again, so it runs the module just uploaded: 0, or 1 with the failure
 * printed.
 */
static int create_pod(struct api *api, const struct cli_deploy *o, const cJSON *pod,
		      const char *image)
{
	char target[512], one[512];
	char *body = cJSON_PrintUnformatted(pod);
	struct http_client_response r = {0};
	int rc = 1;
	bool replaced = false;
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", o->ns);
	snprintf(one, sizeof(one), "/api/v1/namespaces/%s/pods/%s", o->ns, o->name);
	if (!body) {
		fprintf(stderr, "%s: out of memory building the pod\n", prog);
		return 1;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		http_client_response_fini(&r);
		if (api_call(api, "POST", target, body, &r))
			break;
		if (r.status == 201 || r.status == 200) {
			printf("pod/%s %s (image %s%s%s)\n", o->name,
			       replaced ? "replaced: it runs the new module" : "created", image,
			       o->node ? ", node " : "", o->node ? o->node : "");
			rc = 0;
			break;
		}
		if (r.status != 409 || attempt) {
			report_fail(api->where, "POST", target, K32_OK, NULL, &r);
			break;
		}
		/* the pod exists: roll it to the new module (a Pod's image is fixed once made) */
		http_client_response_fini(&r);
		if (api_call(api, "DELETE", one, NULL, &r))
			break;
		if (r.status != 200 && r.status != 202 && r.status != 404) {
			report_fail(api->where, "DELETE", one, K32_OK, NULL, &r);
			break;
		}
		if (wait_gone(api, one)) {
			fprintf(stderr,
				"%s: pod/%s (the old one) is still terminating after %d s: its "
				"node has not stopped it (kube32-cli get nodes: is it NotReady?)\n",
				prog, o->name, CLI_DELETE_WAIT_S);
			break;
		}
		printf("pod/%s deleted (the old module)\n", o->name);
		replaced = true;
	}
	http_client_response_fini(&r);
	cJSON_free(body);
	return rc;
}

static int cmd_deploy(int argc, char **argv)
{
	struct cli_deploy o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_deploy(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
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
	rc = 1;
	if (o.dry_run) {
		rc = print_yaml(pod) ? 1 : 0;
		goto out;
	}
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		goto out;
	rc = upload_module(&api, &o, image, mod, len);
	if (!rc)
		rc = create_pod(&api, &o, pod, image);
	if (!rc && !o.no_wait)
		rc = deploy_wait(&api, o.ns, o.name, o.timeout_ms);
	api_close(&api);
out:
	cJSON_Delete(pod);
	k32_free(al, mod, len + 1);
	return rc;
}

/* ---- console --------------------------------------------------------------------------- */

static int cmd_console(int argc, char **argv)
{
	struct cli_console o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_console(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		return rc;
	char target[512], ip[64] = "127.0.0.1";
	cJSON *j = NULL;
	uint16_t port = 0;
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", o.node);
	rc = api_get_json(&api, target, &j);
	if (rc)
		goto out;
	rc = 1;
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
			prog, o.node);
		goto out;
	}
	struct http_client_config cfg;
	struct http_client *pc = NULL;
	struct k32_err err = {0};
	http_client_config_init(&cfg);
	cfg.host = ip;
	cfg.port = port;
	cfg.bearer_token = api.token[0] ? api.token : NULL; /* the node's endpoints want it */
	if (http_client_new(&cfg, &pc, &err)) {
		fprintf(stderr, "%s: console: %s\n", prog, err.msg);
		goto out;
	}
	struct http_client_request req = {.method = "POST",
					  .target = "/console",
					  .content_type = "text/plain",
					  .body = o.line,
					  .body_len = strlen(o.line)};
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
	api_close(&api);
	return rc;
}

/* ---- logs ------------------------------------------------------------------------------ */

static k32_status_t logs_out(void *ctx, const uint8_t *data, size_t len)
{
	(void)ctx;
	if (data && len) {
		fwrite(data, 1, len, stdout);
		fflush(stdout);
	}
	return ferror(stdout) ? K32_ERR_IO : K32_OK;
}

static int cmd_logs(int argc, char **argv)
{
	struct cli_logs o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_logs(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		return rc;
	char target[512];
	int n =
	    snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s/log?previous=%s%s",
		     o.ns, o.pod, o.previous ? "true" : "false", o.follow ? "&follow=true" : "");
	if (o.tail >= 0 && n > 0 && (size_t)n < sizeof(target))
		snprintf(target + n, sizeof(target) - (size_t)n, "&tailLines=%lld",
			 (long long)o.tail);
	rc = 1;
	if (o.follow) {
		/* streamed as it comes; ends when the container ends (or with Ctrl-C) */
		struct http_client_request req = {
		    .method = "GET", .target = target, .timeout_us = CLI_FOLLOW_IDLE_US};
		struct k32_err err = {0};
		int code = 0;
		k32_status_t st =
		    http_client_stream(api.c, &req, false, logs_out, NULL, &code, &err);
		if (st)
			fprintf(stderr, "%s: GET %s%s failed: %s (%s)\n", prog, api.where, target,
				err.msg[0] ? err.msg : "stream ended", k32_status_name(st));
		else if (code != 200)
			fprintf(stderr, "%s: GET %s answered HTTP %d (above)\n", prog, target,
				code);
		else
			rc = 0;
		api_close(&api);
		return rc;
	}
	struct http_client_response r = {0};
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

/* ---- tables ---------------------------------------------------------------------------- */

#define CLI_TABLE_COLS 8
#define CLI_CELL       256 /* wide enough for a Device's readings */

/* Rows kept for printing with aligned columns (static: no allocation per row). */
static struct {
	int ncols;
	int nrows;
	int more; /* rows past CLI_TABLE_ROWS, counted and not printed */
	char cell[CLI_TABLE_ROWS][CLI_TABLE_COLS][CLI_CELL];
} tbl;

static void table_start(int ncols)
{
	tbl.ncols = ncols;
	tbl.nrows = 0;
	tbl.more = 0;
}

/* Adds a row of ncols strings (NULL or "" print as "-"; a long one is cut). */
static void table_row(const char *const *cells)
{
	if (tbl.nrows >= (int)CLI_TABLE_ROWS) {
		tbl.more++;
		return;
	}
	for (int c = 0; c < tbl.ncols; c++)
		snprintf(tbl.cell[tbl.nrows][c], CLI_CELL, "%s",
			 cells[c] && cells[c][0] ? cells[c] : "-");
	tbl.nrows++;
}

static void table_print(const char *const *hdr, const char *empty)
{
	if (!tbl.nrows) {
		fprintf(stderr, "%s\n", empty);
		return;
	}
	int w[CLI_TABLE_COLS];
	for (int c = 0; c < tbl.ncols; c++) {
		w[c] = (int)strlen(hdr[c]);
		for (int r = 0; r < tbl.nrows; r++)
			if ((int)strlen(tbl.cell[r][c]) > w[c])
				w[c] = (int)strlen(tbl.cell[r][c]);
	}
	for (int r = -1; r < tbl.nrows; r++) {
		for (int c = 0; c < tbl.ncols; c++) {
			const char *s = r < 0 ? hdr[c] : tbl.cell[r][c];
			if (c + 1 < tbl.ncols)
				printf("%-*s   ", w[c], s);
			else
				printf("%s\n", s);
		}
	}
	if (tbl.more)
		printf("... %d more not shown\n", tbl.more);
}

/* ---- get ------------------------------------------------------------------------------- */

/* STATUS as kubectl prints it: Terminating, a container's waiting or terminated reason,
 * else the phase; *ready and *restarts from the first container. */
static const char *pod_status(const cJSON *pod, bool *ready, int *restarts)
{
	const cJSON *cs = cJSON_GetArrayItem(k32_json_find(pod, "status.containerStatuses"), 0);
	*ready = cJSON_IsTrue(cJSON_GetObjectItem(cs, "ready"));
	*restarts = (int)jnum(cs, "restartCount");
	if (jstr(pod, "metadata.deletionTimestamp"))
		return "Terminating";
	const char *r = jstr(pod, "status.reason");
	if (r)
		return r;
	r = jstr(cs, "state.waiting.reason");
	if (r)
		return r;
	r = jstr(cs, "state.terminated.reason");
	if (r)
		return r;
	r = jstr(pod, "status.phase");
	return r ? r : "Pending";
}

static void get_pod_rows(const cJSON *items, bool all_ns)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, items)
	{
		bool ready;
		int restarts;
		const char *st = pod_status(p, &ready, &restarts);
		char rd[8], rs[16];
		snprintf(rd, sizeof(rd), "%d/1", ready ? 1 : 0);
		snprintf(rs, sizeof(rs), "%d", restarts);
		const char *image =
		    jstr(cJSON_GetArrayItem(k32_json_find(p, "spec.containers"), 0), "image");
		const char *row[] = {jstr(p, "metadata.namespace"),
				     jstr(p, "metadata.name"),
				     rd,
				     st,
				     rs,
				     jstr(p, "spec.nodeName"),
				     image};
		table_row(all_ns ? row : row + 1);
	}
}

static void get_node_rows(const cJSON *items, const cJSON *pods)
{
	const cJSON *n;
	cJSON_ArrayForEach(n, items)
	{
		const char *name = jstr(n, "metadata.name");
		const char *ready = "NotReady";
		const cJSON *c;
		cJSON_ArrayForEach(c, k32_json_find(n, "status.conditions"))
		{
			const char *t = jstr(c, "type"), *s = jstr(c, "status");
			if (t && s && !strcmp(t, "Ready") && !strcmp(s, "True"))
				ready = "Ready";
		}
		char status[48];
		snprintf(status, sizeof(status), "%s%s", ready,
			 cJSON_IsTrue(k32_json_find(n, "spec.unschedulable"))
			     ? ",SchedulingDisabled"
			     : "");
		/* pods bound to it that have not finished */
		int running = 0;
		const cJSON *p;
		cJSON_ArrayForEach(p, pods)
		{
			const char *pn = jstr(p, "spec.nodeName"), *ph = jstr(p, "status.phase");
			if (pn && name && !strcmp(pn, name) &&
			    !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
				running++;
		}
		char npods[32];
		const char *cap = jstr(n, "status.capacity.pods");
		snprintf(npods, sizeof(npods), "%d/%s", running, cap ? cap : "?");
		const cJSON *an = k32_json_find(n, "metadata.annotations");
		const char *hw =
		    cJSON_GetStringValue(cJSON_GetObjectItem(an, "kube32.io/hardware"));
		const cJSON *lb = k32_json_find(n, "metadata.labels");
		const char *board =
		    cJSON_GetStringValue(cJSON_GetObjectItem(lb, "kube32.io/board"));
		const char *row[] = {name,  status, board, jstr(n, "status.allocatable.memory"),
				     npods, hw};
		table_row(row);
	}
}

/* Decoded bytes of a base64 text. */
static size_t b64_len(const char *s)
{
	size_t n = 0, pad = 0;
	for (; *s; s++) {
		if (*s == '=')
			pad++;
		else if (*s != '\n' && *s != '\r')
			n++;
	}
	(void)pad;
	return n * 3 / 4;
}

static bool ends_wasm(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n > 5 && !strcmp(s + n - 5, ".wasm");
}

/*
 * A ConfigMap of the module store: what the kubelet would load for image NAME.wasm (a name
 * ending in .wasm with the key of that name in binaryData or data), whether deploy made it
 * (label kube32.io/module) or `kubectl create configmap NAME.wasm --from-file=...` did.
 * Returns the module's base64 text (NULL for a data key or none) in *b64 and true if it is
 * one.
 */
static bool module_of(const cJSON *m, const char **b64, bool *in_data)
{
	const char *name = jstr(m, "metadata.name");
	const cJSON *lb = k32_json_find(m, "metadata.labels");
	bool labelled = cJSON_GetObjectItem(lb, "kube32.io/module") != NULL;
	const cJSON *bin =
	    name ? cJSON_GetObjectItem(cJSON_GetObjectItem(m, "binaryData"), name) : NULL;
	const cJSON *txt = name ? cJSON_GetObjectItem(cJSON_GetObjectItem(m, "data"), name) : NULL;
	*b64 = cJSON_GetStringValue(bin);
	*in_data = txt != NULL && !bin;
	/* a versioned module has keys per tag (docs/pod-sdk.md "Versions"), maybe no NAME key */
	const cJSON *bd = cJSON_GetObjectItem(m, "binaryData");
	return labelled || (ends_wasm(name) && (bin || txt || (bd && bd->child)));
}

static void get_module_rows(const cJSON *items, bool all_ns)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, items)
	{
		const char *b64 = NULL;
		bool in_data = false;
		if (!module_of(m, &b64, &in_data))
			continue;
		const char *name = jstr(m, "metadata.name");
		const cJSON *lb = k32_json_find(m, "metadata.labels");
		const char *pod = cJSON_GetStringValue(cJSON_GetObjectItem(lb, "kube32.io/module"));
		const cJSON *txt = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "data"), name);
		char bytes[24];
		if (b64 || in_data) /* the untagged module's bytes ("-": only tags) */
			snprintf(bytes, sizeof(bytes), "%zu",
				 b64 ? b64_len(b64)
				     : strlen(cJSON_GetStringValue(txt) ? txt->valuestring : ""));
		else
			snprintf(bytes, sizeof(bytes), "-");
		/* the versions: the tags (keys other than NAME.wasm) */
		char tags[CLI_CELL] = "";
		size_t at = 0;
		const cJSON *kv;
		cJSON_ArrayForEach(kv, cJSON_GetObjectItem(m, "binaryData"))
		{
			if (!strcmp(kv->string, name))
				continue;
			int w = snprintf(tags + at, sizeof(tags) - at, "%s%s", at ? "," : "",
					 kv->string);
			if (w < 0 || (size_t)w >= sizeof(tags) - at - 4) {
				snprintf(tags + at, sizeof(tags) - at, ",...");
				break;
			}
			at += (size_t)w;
		}
		const char *row[] = {jstr(m, "metadata.namespace"), name, pod, bytes, tags};
		table_row(all_ns ? row : row + 1);
	}
}

static int cmd_get(int argc, char **argv)
{
	struct cli_get o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_get(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		return rc;
	char target[512], empty[160], modname[256];
	cJSON *j = NULL, *pods = NULL;
	const cJSON *items;
	snprintf(empty, sizeof(empty), "No resources found in %s namespace.", o.ns);
	switch (o.kind) {
	case CLI_KIND_PODS:
		if (o.name)
			snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", o.ns,
				 o.name);
		else if (o.all_ns)
			snprintf(target, sizeof(target), "/api/v1/pods");
		else
			snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", o.ns);
		break;
	case CLI_KIND_NODES:
		if (o.name)
			snprintf(target, sizeof(target), "/api/v1/nodes/%s", o.name);
		else
			snprintf(target, sizeof(target), "/api/v1/nodes");
		snprintf(empty, sizeof(empty), "No nodes found.");
		break;
	default:
		/* the module store: ConfigMaps deploy labelled kube32.io/module */
		if (o.name) {
			size_t nl = strlen(o.name);
			snprintf(modname, sizeof(modname), "%s%s", o.name,
				 nl > 5 && !strcmp(o.name + nl - 5, ".wasm") ? "" : ".wasm");
			snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps/%s",
				 o.ns, modname);
		} else if (o.all_ns) {
			/* every ConfigMap: a module made with kubectl carries no label */
			snprintf(target, sizeof(target), "/api/v1/configmaps");
		} else {
			snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps", o.ns);
		}
		break;
	}
	if (o.all_ns)
		snprintf(empty, sizeof(empty), "No resources found.");
	rc = api_get_json(&api, target, &j);
	if (!rc && o.kind == CLI_KIND_NODES)
		rc = api_get_json(&api, "/api/v1/pods", &pods);
	if (rc)
		goto out;
	/* one object is printed as a list of one */
	cJSON *one = NULL;
	if (o.name) {
		one = cJSON_CreateArray();
		cJSON_AddItemReferenceToArray(one, j);
		items = one;
	} else {
		items = cJSON_GetObjectItem(j, "items");
	}
	static const char *const pod_hdr[] = {"NAMESPACE", "NAME", "READY", "STATUS",
					      "RESTARTS",  "NODE", "IMAGE"};
	static const char *const node_hdr[] = {"NAME", "STATUS",  "BOARD", "POD POOL (bytes)",
					       "PODS", "HARDWARE"};
	static const char *const mod_hdr[] = {"NAMESPACE", "NAME", "POD", "BYTES", "TAGS"};
	switch (o.kind) {
	case CLI_KIND_PODS:
		table_start(o.all_ns ? 7 : 6);
		get_pod_rows(items, o.all_ns);
		table_print(o.all_ns ? pod_hdr : pod_hdr + 1, empty);
		break;
	case CLI_KIND_NODES:
		table_start(6);
		get_node_rows(items, cJSON_GetObjectItem(pods, "items"));
		table_print(node_hdr, empty);
		break;
	default:
		table_start(o.all_ns ? 5 : 4);
		get_module_rows(items, o.all_ns);
		table_print(o.all_ns ? mod_hdr : mod_hdr + 1, empty);
		break;
	}
	cJSON_Delete(one);
	rc = 0;
out:
	cJSON_Delete(j);
	cJSON_Delete(pods);
	api_close(&api);
	return rc;
}

/* ---- delete ---------------------------------------------------------------------------- */

/* Deletes ConfigMap NS/POD.wasm if deploy made it for POD (label kube32.io/module=POD). */
static int delete_module(struct api *api, const struct cli_delete *o)
{
	char target[512];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps/%s.wasm", o->ns, o->pod);
	struct http_client_response r = {0};
	int rc = 1;
	cJSON *cm = NULL;
	if (api_call(api, "GET", target, NULL, &r))
		goto out;
	if (r.status == 404) {
		rc = 0; /* no module in the store (the image came from the nodes' SD cards) */
		goto out;
	}
	if (r.status != 200 || k32_json_parse((const char *)r.body.data, r.body.len, &cm, NULL)) {
		report_fail(api->where, "GET", target, K32_OK, NULL, &r);
		goto out;
	}
	const cJSON *lb = k32_json_find(cm, "metadata.labels");
	const char *owner = cJSON_GetStringValue(cJSON_GetObjectItem(lb, "kube32.io/module"));
	if (!owner || strcmp(owner, o->pod)) {
		printf(
		    "configmap/%s.wasm kept: it is not labelled kube32.io/module=%s (not made by "
		    "kube32-cli deploy for this pod)\n",
		    o->pod, o->pod);
		rc = 0;
		goto out;
	}
	http_client_response_fini(&r);
	if (api_call(api, "DELETE", target, NULL, &r))
		goto out;
	if (r.status != 200 && r.status != 202 && r.status != 404) {
		report_fail(api->where, "DELETE", target, K32_OK, NULL, &r);
		goto out;
	}
	printf("configmap/%s.wasm deleted\n", o->pod);
	rc = 0;
out:
	cJSON_Delete(cm);
	http_client_response_fini(&r);
	return rc;
}

static int cmd_delete(int argc, char **argv)
{
	struct cli_delete o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_delete(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		return rc;
	char target[512];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", o.ns, o.pod);
	struct http_client_response r = {0};
	rc = 1;
	if (api_call(&api, "DELETE", target, NULL, &r))
		goto out;
	if (r.status != 200 && r.status != 202) {
		report_fail(api.where, "DELETE", target, K32_OK, NULL, &r);
		goto out;
	}
	/* graceful: the pod's kubelet stops it, then removes it; wait for that */
	if (wait_gone(&api, target)) {
		fprintf(stderr,
			"%s: pod/%s is still terminating after %d s: its node has not stopped it "
			"(kube32-cli get nodes: is it NotReady?)\n",
			prog, o.pod, CLI_DELETE_WAIT_S);
		goto out;
	}
	printf("pod/%s deleted\n", o.pod);
	rc = o.keep_module ? 0 : delete_module(&api, &o);
out:
	http_client_response_fini(&r);
	api_close(&api);
	return rc;
}

/* ---- top ------------------------------------------------------------------------------- */

/* A metrics.k8s.io CPU quantity ("1234n", "5m", "1") as millicores, in text. */
static void cpu_text(const char *q, char *out, size_t cap)
{
	char *end;
	double v = q ? strtod(q, &end) : 0;
	if (!q || end == q) {
		snprintf(out, cap, "-");
		return;
	}
	if (*end == 'n')
		v /= 1e6;
	else if (*end == 'u')
		v /= 1e3;
	else if (*end != 'm')
		v *= 1e3;
	snprintf(out, cap, "%.3fm", v);
}

static int cmd_top(int argc, char **argv)
{
	struct cli_top o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_top(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		return rc;
	char target[512];
	if (o.kind == CLI_KIND_NODES)
		snprintf(target, sizeof(target), "/apis/metrics.k8s.io/v1beta1/nodes");
	else if (o.all_ns)
		snprintf(target, sizeof(target), "/apis/metrics.k8s.io/v1beta1/pods");
	else
		snprintf(target, sizeof(target), "/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods",
			 o.ns);
	cJSON *j = NULL;
	rc = api_get_json(&api, target, &j);
	if (rc)
		goto out;
	bool pods = o.kind == CLI_KIND_PODS;
	int ncols = pods ? (o.all_ns ? 4 : 3) : 3;
	table_start(ncols);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items"))
	{
		/* a pod's usage is the sum of its containers' (one per kube32 pod) */
		const cJSON *u =
		    pods
			? k32_json_find(
			      cJSON_GetArrayItem(cJSON_GetObjectItem(it, "containers"), 0), "usage")
			: cJSON_GetObjectItem(it, "usage");
		char cpu[32];
		cpu_text(jstr(u, "cpu"), cpu, sizeof(cpu));
		const char *row[] = {jstr(it, "metadata.namespace"), jstr(it, "metadata.name"), cpu,
				     jstr(u, "memory")};
		table_row(pods && o.all_ns ? row : row + 1);
	}
	static const char *const hdr[] = {"NAMESPACE", "NAME", "CPU(millicores)", "MEMORY(bytes)"};
	char empty[160];
	snprintf(empty, sizeof(empty), "No metrics found%s%s%s.", pods && !o.all_ns ? " in " : "",
		 pods && !o.all_ns ? o.ns : "", pods && !o.all_ns ? " namespace" : "");
	table_print(pods && o.all_ns ? hdr : hdr + 1, empty);
out:
	cJSON_Delete(j);
	api_close(&api);
	return rc;
}

/* ---- status ---------------------------------------------------------------------------- */

/* A node's pod server as "IP:PORT" (status.addresses InternalIP, kubeletEndpoint.Port). */
static void node_endpoint(const cJSON *n, char *out, size_t cap)
{
	const char *ip = "127.0.0.1";
	const cJSON *a;
	cJSON_ArrayForEach(a, k32_json_find(n, "status.addresses"))
	{
		const char *t = jstr(a, "type"), *v = jstr(a, "address");
		if (t && v && !strcmp(t, "InternalIP"))
			ip = v;
	}
	double port = jnum(n, "status.daemonEndpoints.kubeletEndpoint.Port");
	if (port > 0 && port < 65536)
		snprintf(out, cap, "%s:%u", ip, (unsigned)port);
	else
		snprintf(out, cap, "-");
}

static const cJSON *find_named(const cJSON *items, const char *name)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		const char *n = jstr(it, "metadata.name");
		if (n && name && !strcmp(n, name))
			return it;
	}
	return NULL;
}

/* One picture of the cluster: 0, or 1 with the failure printed. */
static int status_once(struct api *api)
{
	cJSON *nodes = NULL, *pods = NULL, *nm = NULL, *devs = NULL;
	int rc = api_get_json(api, "/api/v1/nodes", &nodes);
	if (!rc)
		rc = api_get_json(api, "/api/v1/pods", &pods);
	if (rc)
		goto out;
	/* optional: metrics (pool in use) and Devices; without them their columns show "-" */
	struct http_client_response r = {0};
	if (!api_call(api, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", NULL, &r) &&
	    r.status == 200)
		k32_json_parse((const char *)r.body.data, r.body.len, &nm, NULL);
	http_client_response_fini(&r);
	if (!api_call(api, "GET", "/apis/kube32.io/v1alpha1/devices", NULL, &r) && r.status == 200)
		k32_json_parse((const char *)r.body.data, r.body.len, &devs, NULL);
	http_client_response_fini(&r);

	const cJSON *pitems = cJSON_GetObjectItem(pods, "items");
	const cJSON *n;
	table_start(8);
	cJSON_ArrayForEach(n, cJSON_GetObjectItem(nodes, "items"))
	{
		const char *name = jstr(n, "metadata.name");
		const char *ready = "NotReady";
		const cJSON *c;
		cJSON_ArrayForEach(c, k32_json_find(n, "status.conditions"))
		{
			const char *t = jstr(c, "type"), *st = jstr(c, "status");
			if (t && st && !strcmp(t, "Ready") && !strcmp(st, "True"))
				ready = "Ready";
		}
		const cJSON *lb = k32_json_find(n, "metadata.labels");
		const char *board =
		    cJSON_GetStringValue(cJSON_GetObjectItem(lb, "kube32.io/board"));
		const char *pool = jstr(n, "status.allocatable.memory");
		uint64_t pool_b = 0, used_b = 0;
		bool have_pool = pool && !cli_parse_quantity(pool, &pool_b);
		const cJSON *m = find_named(cJSON_GetObjectItem(nm, "items"), name);
		const char *used = jstr(m, "usage.memory");
		bool have_used = used && !cli_parse_quantity(used, &used_b);
		if (used && !strcmp(used, "0")) {
			have_used = true;
			used_b = 0;
		}
		char pool_s[32], used_s[32], free_s[32], npods[32], ep[128];
		snprintf(pool_s, sizeof(pool_s), "%s", have_pool ? pool : "-");
		snprintf(used_s, sizeof(used_s), "%llu", (unsigned long long)used_b);
		snprintf(free_s, sizeof(free_s), "%llu",
			 (unsigned long long)(pool_b > used_b ? pool_b - used_b : 0));
		int running = 0;
		const cJSON *p;
		cJSON_ArrayForEach(p, pitems)
		{
			const char *pn = jstr(p, "spec.nodeName"), *ph = jstr(p, "status.phase");
			if (pn && name && !strcmp(pn, name) &&
			    !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
				running++;
		}
		const char *cap = jstr(n, "status.capacity.pods");
		snprintf(npods, sizeof(npods), "%d/%s", running, cap ? cap : "?");
		node_endpoint(n, ep, sizeof(ep));
		const char *row[] = {name,
				     ready,
				     board,
				     pool_s,
				     have_used ? used_s : "-",
				     have_pool && have_used ? free_s : "-",
				     npods,
				     ep};
		table_row(row);
	}
	static const char *const bhdr[] = {"BOARD",
					   "STATUS",
					   "PROFILE",
					   "POOL (bytes)",
					   "POOL USED (bytes)",
					   "POOL FREE (bytes)",
					   "PODS",
					   "POD SERVER"};
	table_print(bhdr, "No boards (nodes) registered.");

	printf("\n");
	table_start(5);
	const cJSON *p;
	cJSON_ArrayForEach(p, pitems)
	{
		bool rd;
		int restarts;
		const char *st = pod_status(p, &rd, &restarts);
		const char *node = jstr(p, "spec.nodeName");
		char name[300], ep[128] = "-", how[512] = "-";
		snprintf(name, sizeof(name), "%s/%s", jstr(p, "metadata.namespace"),
			 jstr(p, "metadata.name"));
		const cJSON *nd = find_named(cJSON_GetObjectItem(nodes, "items"), node);
		if (nd)
			node_endpoint(nd, ep, sizeof(ep));
		if (nd && strcmp(ep, "-"))
			snprintf(how, sizeof(how), "curl -H 'X-Kube32-Pod: %s' http://%s/", name,
				 ep);
		const char *image =
		    jstr(cJSON_GetArrayItem(k32_json_find(p, "spec.containers"), 0), "image");
		const char *row[] = {name, node, st, image, how};
		table_row(row);
	}
	static const char *const phdr[] = {"POD", "BOARD", "STATUS", "IMAGE", "ENDPOINT"};
	table_print(phdr, "No pods.");

	if (devs) {
		printf("\n");
		table_start(5);
		const cJSON *d;
		cJSON_ArrayForEach(d, cJSON_GetObjectItem(devs, "items"))
		{
			char readings[CLI_CELL] = "";
			size_t at = 0;
			const cJSON *kv;
			cJSON_ArrayForEach(kv, k32_json_find(d, "status.readings"))
			{
				const char *v = cJSON_GetStringValue(kv);
				int w = snprintf(readings + at, sizeof(readings) - at, "%s%s=%s",
						 at ? " " : "", kv->string, v ? v : "-");
				if (w < 0 || (size_t)w >= sizeof(readings) - at) {
					/* no room for the whole pair: end with a marker, not a cut
					 */
					readings[at] = 0;
					snprintf(readings + at, sizeof(readings) - at, " ...");
					break;
				}
				at += (size_t)w;
			}
			const char *ready = "-";
			const cJSON *c;
			cJSON_ArrayForEach(c, k32_json_find(d, "status.conditions"))
			{
				const char *t = jstr(c, "type");
				if (t && !strcmp(t, "Ready"))
					ready = jstr(c, "status");
			}
			const char *row[] = {jstr(d, "metadata.name"), jstr(d, "spec.node"),
					     jstr(d, "spec.model"), ready, readings};
			table_row(row);
		}
		static const char *const dhdr[] = {"DEVICE", "BOARD", "MODEL", "READY",
						   "LATEST READINGS"};
		table_print(dhdr, "No Devices.");
	}
out:
	cJSON_Delete(nodes);
	cJSON_Delete(pods);
	cJSON_Delete(nm);
	cJSON_Delete(devs);
	return rc;
}

static int cmd_status(int argc, char **argv)
{
	struct cli_status o;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(cli_parse_status(argc, argv, &o, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	struct api api;
	rc = connect_api(o.kubeconfig, &api);
	if (rc)
		return rc;
	do {
		if (o.watch)
			printf("\033[H\033[2J"); /* home and clear: the table refreshes in place */
		rc = status_once(&api);
		fflush(stdout);
		if (o.watch)
			k32_plat()->sleep_us(CLI_STATUS_EVERY_US);
	} while (o.watch && !rc); /* -w: until Ctrl-C (or the cluster stops answering) */
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
	if (!strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	/* global options (--kubeconfig) may come before the command: move them after it */
	static char *args[4096];
	int nargs = 0;
	char msg[CLI_MSG_LEN];
	int rc = parse_result(
	    cli_hoist_globals(argc - 1, argv + 1, args, 4096, &nargs, msg, sizeof(msg)), msg);
	if (rc >= 0)
		return rc;
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"deploy", cmd_deploy}, {"get", cmd_get}, {"delete", cmd_delete},
		    {"logs", cmd_logs},	    {"top", cmd_top}, {"console", cmd_console},
		    {"status", cmd_status}};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(args[0], cmds[i].name))
			return cmds[i].fn(nargs - 1, args + 1);
	fprintf(stderr,
		"%s: unknown command %s (deploy, get, delete, logs, top, status or console; see "
		"--help)\n",
		prog, args[0]);
	return 2;
}
