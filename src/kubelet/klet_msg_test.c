/*
 * klet_msg_test.c - the kubelet's messages end whole (issue #17: "...nosuchthi", "...lower
 * resour"). Every path that writes a pod's status message, an Event or a kubelet log line is
 * driven with the longest names this kubelet keeps (node 63 bytes, namespace 63, pod 127,
 * container 63, images up to 255 (with a digest) and ConfigMaps of ~100) and each message must end
 * with its complete advice sentence: not filling its buffer, not ending in "...", not cut mid-word.
 *
 * One table row per producing path: the pod it creates, where its message lands
 * (containerStatuses[0].state.waiting, lastState.terminated, or status for a rejected pod),
 * the reasons it may carry, a fixed part of its sentence and the words it must end with.
 */
#include "kubelet/klet_testfx.h"

#include <inttypes.h>

#include "base/k32_log.h"
#include "kubelet/klet_int.h"

static const struct klet_profile prof = {.name = "host",
					 .pod_pool_bytes = 1024 * 1024,
					 .interp_stack = 28 * 1024,
					 .max_pods = 24,
					 .hardware = ""};

/* the longest names the API and the kubelet keep (KLET_NAME_LEN, KLET_NS_LEN) */
static char node[KLET_NAME_LEN], ns[KLET_NS_LEN], cname[64];

struct mfx {
	struct fx_cp cp;
	struct klet *k;
};

enum where { AT_WAITING, AT_LAST, AT_STATUS };

struct mcase {
	const char *tag;     /* the pod's name starts with it (padded to 127 bytes) */
	const char *image;   /* %s: 90 bytes of the case's pad letter */
	char pad;	     /* that letter */
	const char *mem;     /* resources.limits.memory, or NULL */
	const char *ann;     /* annotations members (JSON), or NULL */
	bool via_store;	     /* written past the API's validation (straight into the store) */
	enum where where;    /* where the message lands */
	const char *reasons; /* "|"-separated reasons it may carry */
	const char *has;     /* a fixed part of the sentence */
	const char *tail;    /* its last words */
};

static const struct mcase cases[] = {
    {"notfound", "registry.example/team/%s.wasm", 'a', NULL, NULL, false, AT_WAITING,
     "ErrImagePull|ImagePullBackOff", "not found: no file", "or kube-system"},
    {"badtag", "%s.wasm:.bad", 'b', NULL, NULL, false, AT_WAITING, "CreateContainerError",
     "a tag is 1..128 of", "(not starting with . or -)"},
    {"badname", "registry.example/%s!.wasm", 'c', NULL, NULL, false, AT_WAITING,
     "CreateContainerError", "expected NAME[.wasm]", "starting and ending with a letter or digit"},
    {"version", "%s.wasm:v9", 'v', NULL, NULL, false, AT_WAITING, "ErrImagePull|ImagePullBackOff",
     "has no key v9 (the tag)", "its keys: v1"},
    {"digest", "%s.wasm@sha256:0000000000000000000000000000000000000000000000000000000000000000",
     'v', NULL, NULL, false, AT_WAITING, "ErrImagePull|ImagePullBackOff",
     "has sha256:000000000000...", "its keys: v1"},
    {"tagdigest",
     "%s.wasm:v1@sha256:0000000000000000000000000000000000000000000000000000000000000000", 'v',
     NULL, NULL, false, AT_WAITING, "ErrImagePull|ImagePullBackOff", "key v1 is sha256:",
     "not the image's sha256:000000000000...; upload that module under the key or fix the digest"},
    {"nofit", "t_big.wasm", 0, "2Mi", NULL, false, AT_WAITING, "CreateContainerError",
     "does not fit node", "lower resources.limits.memory or stop a pod"},
    {"capped", "t_big.wasm", 0, "8Ki", NULL, false, AT_WAITING, "CreateContainerError",
     "262144 bytes of linear memory", "raise resources.limits.memory to at least 262144"},
    {"link", "t_hw.wasm", 0, NULL, NULL, false, AT_WAITING, "LinkError",
     "is not a host function of node", "(sdk/k32.h and k32_klet.h list them)"},
    {"badtype", "t_badtype.wasm", 0, NULL, NULL, false, AT_WAITING, "LinkError",
     "import kube32.k32_time_ms does not have the type of node",
     "(sdk/k32.h and k32_klet.h give the signatures)"},
    {"longimport", "t_longimport.wasm", 0, NULL, NULL, false, AT_WAITING, "LinkError",
     "...xxxxxxxx_end is not a host function of node", "(sdk/k32.h and k32_klet.h list them)"},
    {"nothing", "t_none.wasm", 0, NULL, NULL, false, AT_WAITING, "CreateContainerError",
     "exports none of k32_init", "nothing to run"},
    {"broken", "%s.wasm", 'k', NULL, NULL, false, AT_WAITING, "CreateContainerError", "ConfigMap ",
     NULL},
    {"device", "t_ok.wasm", 0, NULL, "\"kube32.io/device\":\"%s\"", false, AT_WAITING,
     "CreateContainerError", "has no I2C buses", "schedule it on a board with hardware"},
    {"frames", "t_deep.wasm", 0, NULL, "\"kube32.io/call-depth\":\"16\"", false, AT_LAST, "Error",
     "call stack exhausted", "(now 16 frames, at most 1024) or recurse less"},
    {"stack", "t_deep.wasm", 0, NULL,
     "\"kube32.io/call-depth\":\"1024\",\"kube32.io/stack-bytes\":\"256\"", false, AT_LAST, "Error",
     "call stack exhausted", "(now 256, at most 1048576) or use fewer locals and less recursion"},
    {"gas", "t_loop.wasm", 0, NULL, "\"kube32.io/execution-budget\":\"100000\"", false, AT_LAST,
     "Error",
     "out of gas after 100000 units: raise kube32.io/execution-budget (kube32-cli --budget, "
     "kube32-wasm --gas) (in ",
     ")"},
    {"deadline", "t_loop.wasm", 0, NULL,
     "\"kube32.io/execution-budget\":\"off\",\"kube32.io/call-deadline-ms\":\"50\"", false, AT_LAST,
     "DeadlineExceeded",
     "ran past its deadline of 50 ms (annotation kube32.io/call-deadline-ms, at most 10000 "
     "ms); return sooner (keep state between ticks) or raise it (in ",
     ")"},
    {"crash", "t_trap.wasm", 0, NULL, NULL, false, AT_WAITING, "CrashLoopBackOff",
     "restarting failed container=", NULL},
    {"badtick", "t_ok.wasm", 'n', NULL, "\"kube32.io/tick-ms\":\"-%s\"", true, AT_STATUS,
     "InvalidPodSpec", "metadata.annotations[kube32.io/tick-ms]: Invalid value: \"-nnn",
     "(ms between ticks, K32_POD_TICK_MS_MAX)"},
    {"longimage", "registry.example/%s/%s/%s/ticker.wasm:v12", 'i', NULL, NULL, true, AT_STATUS,
     "InvalidPodSpec", "this kubelet keeps 255 (KLET_IMAGE_LEN)", "shorten the image reference"},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void pad_of(char c, char *out, size_t n)
{
	memset(out, c, n);
	out[n] = 0;
}

static void pod_name(const struct mcase *c, char *out)
{
	size_t t = strlen(c->tag);
	memcpy(out, c->tag, t);
	out[t] = '-';
	memset(out + t + 1, 'p', KLET_NAME_LEN - 2 - t);
	out[KLET_NAME_LEN - 1] = 0;
}

static void ns_do(struct mfx *t, const char *method, const char *what, const char *body, int want)
{
	char target[300];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/%s", ns, what);
	int code;
	cJSON_Delete(fx_do(&t->cp, method, target, body, &code));
	if (code != want)
		fail_msg("%s %s: HTTP %d, want %d", method, target, code, want);
}

static void pod_make(struct mfx *t, const struct mcase *c)
{
	char name[KLET_NAME_LEN], pad[128], image[400], ann[256] = "", lim[96] = "", body[2048];
	pod_name(c, name);
	pad_of(c->pad, pad, 90);
	snprintf(image, sizeof(image), c->image, pad, pad, pad);
	if (c->ann) {
		char a[192];
		pad_of(c->pad ? c->pad : 'd', pad, c->via_store ? 100 : 63);
		snprintf(a, sizeof(a), c->ann, pad);
		snprintf(ann, sizeof(ann), ",\"annotations\":{%s}", a);
	}
	if (c->mem)
		snprintf(lim, sizeof(lim), ",\"resources\":{\"limits\":{\"memory\":\"%s\"}}",
			 c->mem);
	snprintf(
	    body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	    "\"namespace\":\"%s\",\"uid\":\"u-%s\"%s},\"spec\":{\"nodeName\":\"%s\","
	    "\"restartPolicy\":\"Always\",\"containers\":[{\"name\":\"%s\",\"image\":\"%s\"%s}]}"
	    "%s}",
	    name, ns, c->tag, ann, node, cname, image, lim,
	    c->via_store ? ",\"status\":{\"phase\":\"Pending\"}" : "");
	if (!c->via_store) {
		ns_do(t, "POST", "pods", body, 201);
		return;
	}
	struct store_key key = {.group = "", .resource = "pods", .ns = ns, .name = name};
	struct store_value val = {.data = body, .len = strlen(body), .rv_off = STORE_NO_STAMP};
	struct k32_err err;
	if (store_create(t->cp.store, &key, &val, NULL, &err))
		fail_msg("store_create %s: %s", c->tag, err.msg);
}

/* The message of case c's pod and its reason, once there is one (NULL: not yet). */
static const char *msg_of(const cJSON *pod, const struct mcase *c, const char **reason)
{
	const cJSON *cs = fx_cs(pod);
	const char *m = NULL;
	*reason = NULL;
	if (c->where == AT_WAITING) {
		*reason = fx_str(cs, "state.waiting.reason");
		m = fx_str(cs, "state.waiting.message");
	} else if (c->where == AT_LAST) {
		*reason = fx_str(cs, "lastState.terminated.reason");
		m = fx_str(cs, "lastState.terminated.message");
	} else {
		*reason = fx_str(pod, "status.reason");
		m = fx_str(pod, "status.message");
	}
	if (!m || !*reason || !strcmp(*reason, "ContainerCreating"))
		return NULL;
	return m;
}

/* m is whole: shorter than the buffer it came through, no "..." at its end, and it ends
 * with tail (when given) or at least with a whole word or a closing mark. */
static void assert_whole(const char *what, const char *m, size_t cap, const char *has,
			 const char *tail)
{
	size_t n = strlen(m);
	bool ok =
	    n > 0 && n < cap - 1 && (n < 3 || strcmp(m + n - 3, "...")) && (!has || strstr(m, has));
	if (ok && tail)
		ok = n >= strlen(tail) && !strcmp(m + n - strlen(tail), tail);
	if (!ok)
		fail_msg(
		    "%s: message cut or changed (%zu bytes, buffer %zu): \"%s\"; should contain "
		    "\"%s\" and end with \"%s\"",
		    what, n, cap, m, has ? has : "", tail ? tail : "(any whole end)");
}

static int setup(void **state)
{
	static struct mfx t;
	memset(&t, 0, sizeof(t));
	/* node and namespace: DNS labels of 63 (the API's limit for both) */
	memcpy(node, "node-", 5);
	memset(node + 5, 'n', 58);
	node[63] = 0;
	memcpy(ns, "ns-", 3);
	memset(ns + 3, 's', 60);
	ns[63] = 0;
	memset(cname, 'c', 63);
	cname[63] = 0;
	fx_cp_start(&t.cp);
	struct klet_config c;
	fx_klet_config(&c, &t.cp, node, &prof);
	c.image_dir = KLET_TEST_IMAGES;
	struct k32_err err;
	if (klet_new(&c, &t.k, &err) || klet_start(t.k, &err))
		fail_msg("kubelet: %s", err.msg);
	*state = &t;
	return 0;
}

static int teardown(void **state)
{
	struct mfx *t = *state;
	klet_free(t->k);
	fx_cp_stop(&t->cp);
	return 0;
}

static void test_messages_whole(void **state)
{
	struct mfx *t = *state;
	k32_log_set_stderr(false);
	uint64_t log_from = 0; /* the ring's lines before this test's pods */
	{
		struct k32_log_line all[K32_LOG_RING_LINES];
		size_t n = k32_log_read(0, all, K32_LOG_RING_LINES, NULL);
		log_from = n ? all[n - 1].seq : 0;
	}
	char body[1024], pad[128];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		 ns);
	int code;
	cJSON_Delete(fx_do(&t->cp, "POST", "/api/v1/namespaces", body, &code));
	assert_int_equal(code, 201);
	/* the module store: VVV.wasm has only tag v1; KKK.wasm holds no module */
	pad_of('v', pad, 90);
	snprintf(
	    body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s.wasm\"},"
	    "\"binaryData\":{\"v1\":\"AGFzbQEAAAA=\"}}",
	    pad);
	ns_do(t, "POST", "configmaps", body, 201);
	pad_of('k', pad, 90);
	snprintf(
	    body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s.wasm\"},"
	    "\"data\":{\"%s.wasm\":\"not a module\"}}",
	    pad, pad);
	ns_do(t, "POST", "configmaps", body, 201);

	for (size_t i = 0; i < NCASES; i++)
		pod_make(t, &cases[i]);

	/* each pod's message: whole, with its reason */
	for (size_t i = 0; i < NCASES; i++) {
		const struct mcase *c = &cases[i];
		char name[KLET_NAME_LEN], target[400];
		pod_name(c, name);
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
		const char *m = NULL, *reason = NULL;
		cJSON *pod = NULL;
		for (int tries = 0; tries < 1000 && !m; tries++) {
			cJSON_Delete(pod);
			pod = fx_do(&t->cp, "GET", target, NULL, &code);
			if (code == 200)
				m = msg_of(pod, c, &reason);
			if (!m)
				k32_plat()->sleep_us(10000);
		}
		if (!m)
			fail_msg("%s: no message at its place after 10 s", c->tag);
		char reasons[64];
		snprintf(reasons, sizeof(reasons), "|%s|", c->reasons);
		char want[40];
		snprintf(want, sizeof(want), "|%s|", reason);
		if (!strstr(reasons, want))
			fail_msg("%s: reason %s, want one of %s (message \"%s\")", c->tag, reason,
				 c->reasons, m);
		print_message("%-9s %s: %s\n", c->tag, reason, m);
		assert_whole(c->tag, m, KLET_MSG_LEN, c->has, c->tail);
		/* a status message also fits the error it came from (the advice added to a
		 * trap is the kubelet's own, in KLET_MSG_LEN) */
		if (c->where == AT_WAITING)
			assert_whole(c->tag, m, K32_ERR_MSG_LEN, c->has, c->tail);
		if (!strcmp(c->tag, "frames") || !strcmp(c->tag, "stack")) {
			/* the trap names the function of the name section, clipped around "..." */
			assert_non_null(strstr(m, "(in 'recurse_without_end_"));
			if (!strstr(m, "...") || !strstr(m, "_message_keeps' at byte "))
				fail_msg("%s: %s", c->tag, m);
		}
		if (!strcmp(c->tag, "crash")) {
			char uid[64]; /* Kubernetes' wording ends with the pod's uid */
			snprintf(uid, sizeof(uid), "(%s)", fx_str(pod, "metadata.uid"));
			assert_whole(c->tag, m, K32_ERR_MSG_LEN, NULL, uid);
		}
		cJSON_Delete(pod);
	}

	/* the Events about them: whole too (Failed carries the status message, BackOff and
	 * Started name the container and pod, DeadlineExceeded the trap) */
	char target[400];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events", ns);
	cJSON *list = NULL;
	bool seen_failed = false, seen_backoff = false, seen_started = false, seen_deadline = false,
	     seen_invalid = false;
	for (int tries = 0; tries < 1500; tries++) { /* up to 30 s: ASan under CI's load */
		cJSON_Delete(list);
		list = fx_do(&t->cp, "GET", target, NULL, &code);
		const cJSON *e;
		seen_failed = seen_backoff = seen_started = seen_deadline = seen_invalid = false;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "items"))
		{
			const char *r = fx_str(e, "reason");
			seen_failed |= r && !strcmp(r, "Failed");
			seen_backoff |= r && !strcmp(r, "BackOff");
			seen_started |= r && !strcmp(r, "Started");
			seen_deadline |= r && !strcmp(r, "DeadlineExceeded");
			seen_invalid |= r && !strcmp(r, "InvalidPodSpec");
		}
		if (seen_failed && seen_backoff && seen_started && seen_deadline && seen_invalid)
			break;
		k32_plat()->sleep_us(20000);
	}
	if (!(seen_failed && seen_backoff && seen_started && seen_deadline && seen_invalid)) {
		struct klet_stats ks;
		klet_get_stats(t->k, &ks);
		fail_msg("Events missing:%s%s%s%s%s (kubelet: %" PRIu64 " sent, %" PRIu64
			 " dropped: queue full or write failed)",
			 seen_failed ? "" : " Failed", seen_backoff ? "" : " BackOff",
			 seen_started ? "" : " Started", seen_deadline ? "" : " DeadlineExceeded",
			 seen_invalid ? "" : " InvalidPodSpec", ks.events_sent, ks.events_dropped);
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "items"))
	{
		const char *r = fx_str(e, "reason"), *m = fx_str(e, "message");
		const char *who = fx_str(e, "involvedObject.name");
		assert_non_null(r);
		assert_non_null(m);
		const char *tail = NULL;
		for (size_t i = 0; who && i < NCASES; i++)
			if (!strncmp(who, cases[i].tag, strlen(cases[i].tag)) &&
			    who[strlen(cases[i].tag)] == '-' &&
			    (!strcmp(r, "Failed") || !strcmp(r, "InvalidPodSpec")))
				tail = cases[i].where == AT_LAST ? NULL : cases[i].tail;
		if (!strcmp(r, "Started") || !strcmp(r, "BackOff"))
			tail = ")";
		if (!strcmp(r, "DeadlineExceeded"))
			tail = ")"; /* "... or raise it (in FUNC at byte N)" */
		char what[64];
		snprintf(what, sizeof(what), "event %s", r);
		assert_whole(what, m, KLET_MSG_LEN, NULL, tail);
	}
	cJSON_Delete(list);

	/* the kubelet's own log lines about them: none cut */
	struct k32_log_line lines[K32_LOG_RING_LINES];
	size_t n = k32_log_read(log_from, lines, K32_LOG_RING_LINES, NULL);
	size_t about = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(lines[i].component, KLET_MOD))
			continue;
		about++;
		assert_whole("kubelet log line", lines[i].text, K32_LOG_LINE_LEN, NULL, NULL);
	}
	assert_true(about > 0);

	/* the crash's line in the pod's previous log: whole */
	char cpod[KLET_NAME_LEN];
	for (size_t i = 0; i < NCASES; i++)
		if (!strcmp(cases[i].tag, "frames"))
			pod_name(&cases[i], cpod);
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "logs");
	assert_int_equal(klet_pod_logs(t->k, ns, cpod, true, -1, false, NULL, &b, &err), K32_OK);
	assert_non_null(
	    strstr(k32_buf_cstr(&b), "(now 16 frames, at most 1024) or recurse less\n"));
	k32_buf_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_messages_whole),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
