/*
 * api_fill_bench.c - how many pods, with their events, a store of a given size holds.
 *
 *   api-fill-bench [MAX_BYTES MAX_OBJECTS]     (default: kube32-server's
 *                                               K32_SERVER_STORE_MAX_BYTES / _OBJECTS)
 *
 * Through the API in-process (api_do, a memory store of those limits), as a cluster of
 * 10 pods per board writes them: per 10 pods one Node (with a kubelet's status) and its
 * Lease; per pod the Pod (copied from one a ReplicaSet made in kube32-sim, ~1.7 KiB stored),
 * its status, and the four Events of a pod's life (SuccessfulCreate, Scheduled, Started,
 * Killing; ~0.67 KiB each, as measured in kube32-sim). It stops at the first refused Pod,
 * Node or Lease write and prints how many pods were in, the first pod count at which an
 * Event was evicted (Events past K32_API_EVENTS_*_PCT of the store), and the store's
 * bytes and objects. Nothing is timed: the figures are capacities.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_log.h"
#include "store/store.h"

static const char pod_fmt[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"web-8bfc5zh-\","
    "\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"8bfc5zh\"},\"name\":\"%s\","
    "\"namespace\":\"default\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
    "\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"ReplicaSet\",\"name\":"
    "\"web-8bfc5zh\",\"uid\":\"e7773d73-b5dd-496d-84b2-edc3857d3432\"}]},\"spec\":{"
    "\"containers\":[{\"image\":\"hello.wasm\",\"imagePullPolicy\":\"IfNotPresent\",\"name\":"
    "\"main\",\"resources\":{\"limits\":{\"memory\":\"16Ki\"}},\"terminationMessagePath\":"
    "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\"}],\"dnsPolicy\":"
    "\"ClusterFirst\",\"nodeName\":\"%s\",\"restartPolicy\":\"Always\",\"schedulerName\":"
    "\"default-scheduler\",\"terminationGracePeriodSeconds\":30}}";

static const char pod_status[] =
    "{\"status\":{\"conditions\":[{\"lastProbeTime\":null,\"lastTransitionTime\":"
    "\"2026-12-03T14:13:22Z\",\"status\":\"True\",\"type\":\"PodScheduled\"},{"
    "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-12-03T14:13:22Z\",\"status\":"
    "\"True\",\"type\":\"Initialized\"},{\"lastProbeTime\":null,\"lastTransitionTime\":"
    "\"2026-12-03T14:13:22Z\",\"status\":\"True\",\"type\":\"ContainersReady\"},{"
    "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-12-03T14:13:22Z\",\"status\":"
    "\"True\",\"type\":\"Ready\"}],\"containerStatuses\":[{\"containerID\":\"kube32://"
    "ad16d93f-1b2c-48ee-817c-bc7635a12d37/main/0\",\"image\":\"hello.wasm\",\"imageID\":"
    "\"hello.wasm\",\"lastState\":{},\"name\":\"main\",\"ready\":true,\"restartCount\":0,"
    "\"started\":true,\"state\":{\"running\":{\"startedAt\":\"2026-12-03T14:13:22Z\"}}}],"
    "\"hostIP\":\"127.0.0.1\",\"hostIPs\":[{\"ip\":\"127.0.0.1\"}],\"phase\":\"Running\","
    "\"podIP\":\"127.0.0.1\",\"podIPs\":[{\"ip\":\"127.0.0.1\"}],\"qosClass\":\"Guaranteed\","
    "\"startTime\":\"2026-12-03T14:13:22Z\"}}";

static const char node_status[] =
    "{\"status\":{\"addresses\":[{\"address\":\"127.0.0.1\",\"type\":\"InternalIP\"},{"
    "\"address\":\"host-1\",\"type\":\"Hostname\"}],\"allocatable\":{\"cpu\":\"1\","
    "\"memory\":\"4194304\",\"pods\":\"32\"},\"capacity\":{\"cpu\":\"1\",\"memory\":"
    "\"4194304\",\"pods\":\"32\"},\"conditions\":[{\"lastHeartbeatTime\":"
    "\"2026-12-03T14:13:18Z\",\"lastTransitionTime\":\"2026-12-03T14:13:18Z\",\"message\":"
    "\"kubelet has sufficient memory available\",\"reason\":\"KubeletHasSufficientMemory\","
    "\"status\":\"False\",\"type\":\"MemoryPressure\"},{\"lastHeartbeatTime\":"
    "\"2026-12-03T14:13:18Z\",\"lastTransitionTime\":\"2026-12-03T14:13:18Z\",\"message\":"
    "\"kubelet has no disk pressure\",\"reason\":\"KubeletHasNoDiskPressure\",\"status\":"
    "\"False\",\"type\":\"DiskPressure\"},{\"lastHeartbeatTime\":\"2026-12-03T14:13:18Z\","
    "\"lastTransitionTime\":\"2026-12-03T14:13:18Z\",\"message\":\"kubelet has sufficient PID "
    "available\",\"reason\":\"KubeletHasSufficientPID\",\"status\":\"False\",\"type\":"
    "\"PIDPressure\"},{\"lastHeartbeatTime\":\"2026-12-03T14:13:18Z\",\"lastTransitionTime\":"
    "\"2026-12-03T14:13:18Z\",\"message\":\"kubelet is posting ready status\",\"reason\":"
    "\"KubeletReady\",\"status\":\"True\",\"type\":\"Ready\"}],\"daemonEndpoints\":{"
    "\"kubeletEndpoint\":{\"Port\":42857}},\"nodeInfo\":{\"architecture\":\"wasm32\","
    "\"bootID\":\"host-1\",\"containerRuntimeVersion\":\"wrt://wasm2.0\",\"kernelVersion\":"
    "\"kobj\",\"kubeProxyVersion\":\"\",\"kubeletVersion\":\"v1.32.0-kube32\",\"machineID\":"
    "\"host-1\",\"operatingSystem\":\"kube32\",\"osImage\":\"host\",\"systemUUID\":"
    "\"host-1\"}}}";

static char body[8192];

/* One request; the HTTP code (0 when api_do itself failed). */
static int call(struct api_server *api, const char *method, const char *target, const char *b,
		struct k32_buf *out)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(out);
	const char *ct =
	    !strcmp(method, "PATCH") ? "application/merge-patch+json" : "application/json";
	if (api_do(api, method, target, ct, b, strlen(b), &code, out, &err))
		return 0;
	return code;
}

static bool count_event(void *ctx, const struct store_obj *o)
{
	(void)o;
	(*(uint32_t *)ctx)++;
	return false;
}

static uint32_t events_now(struct store *st)
{
	uint32_t n = 0;
	struct store_key k = {.group = "", .resource = "events", .ns = "", .name = ""};
	struct store_list_opts o = {.limit = 1, .filter = count_event, .filter_ctx = &n};
	struct store_list l;
	struct k32_err err;
	store_list(st, &k, &o, &l, &err);
	store_list_fini(st, &l);
	return n;
}

int main(int argc, char **argv)
{
	size_t max_bytes = K32_SERVER_STORE_MAX_BYTES;
	uint32_t max_objects = K32_SERVER_STORE_MAX_OBJECTS;
	if (argc == 3) {
		max_bytes = (size_t)strtoull(argv[1], NULL, 10);
		max_objects = (uint32_t)strtoul(argv[2], NULL, 10);
	} else if (argc != 1) {
		fprintf(stderr, "usage: api-fill-bench [MAX_BYTES MAX_OBJECTS]\n");
		return 2;
	}
	struct k32_err err;
	struct store *st;
	struct api_server *api;
	struct k32_buf out;
	k32_log_set_stderr(false);
	struct store_config sc = {.max_bytes = max_bytes, .max_objects = max_objects};
	if (store_open(&sc, &st, &err)) {
		fprintf(stderr, "api-fill-bench: %s\n", err.msg);
		return 1;
	}
	struct api_config ac = {.store = st, .bootstrap = true};
	if (api_server_new(&ac, &api, &err)) {
		fprintf(stderr, "api-fill-bench: %s\n", err.msg);
		return 1;
	}
	k32_buf_init(&out, k32_default_allocator(), 1 << 20, "bench");
	uint32_t pods = 0, first_evicted = 0, nodes = 0;
	uint64_t events_made = 0;
	char node[32], name[64], target[160], msg[160];
	const char *why = "";
	for (;; pods++) {
		if (pods % 10 == 0) {
			snprintf(node, sizeof(node), "board-%" PRIu32, nodes);
			snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"}}", node);
			if (call(api, "POST", "/api/v1/nodes", body, &out) != 201) {
				why = "Node";
				break;
			}
			snprintf(target, sizeof(target), "/api/v1/nodes/%s/status", node);
			if (call(api, "PATCH", target, node_status, &out) != 200) {
				why = "Node status";
				break;
			}
			snprintf(body, sizeof(body),
				 "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"holderIdentity\":"
				 "\"%s\",\"leaseDurationSeconds\":40,\"acquireTime\":"
				 "\"2026-12-03T14:13:18.000000Z\",\"renewTime\":"
				 "\"2026-12-03T14:13:18.000000Z\"}}",
				 node, node);
			if (call(api, "POST",
				 "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
				 body, &out) != 201) {
				why = "Lease";
				break;
			}
			nodes++;
		}
		snprintf(name, sizeof(name), "web-8bfc5zh-%06" PRIu32, pods);
		snprintf(body, sizeof(body), pod_fmt, name, node);
		if (call(api, "POST", "/api/v1/namespaces/default/pods", body, &out) != 201) {
			why = "Pod";
			break;
		}
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s/status", name);
		if (call(api, "PATCH", target, pod_status, &out) != 200) {
			why = "Pod status";
			break;
		}
		struct api_event_ref rs = {"apps/v1", "ReplicaSet", "default", "web-8bfc5zh", NULL};
		struct api_event_ref pod = {"v1", "Pod", "default", name, NULL};
		snprintf(msg, sizeof(msg), "Created pod: %s", name);
		api_event_record(api, &rs, "Normal", "SuccessfulCreate", msg,
				 "replicaset-controller", &err);
		snprintf(msg, sizeof(msg), "Successfully assigned default/%s to %s", name, node);
		api_event_record(api, &pod, "Normal", "Scheduled", msg, "default-scheduler", &err);
		api_event_record(api, &pod, "Normal", "Started",
				 "Started container main (module hello.wasm)", "kubelet", &err);
		api_event_record(api, &pod, "Normal", "Killing", "Stopping container main",
				 "kubelet", &err);
		events_made += 4;
		if (!first_evicted && pods % 50 == 49 && events_now(st) < events_made)
			first_evicted = pods + 1;
	}
	struct store_stats ss;
	store_get_stats(st, &ss);
	printf("store limits: %zu bytes, %" PRIu32 " objects (reserve %zu bytes, %" PRIu32
	       " objects)\n",
	       ss.max_bytes, ss.max_objects, ss.reserve_bytes, ss.reserve_objects);
	printf("pods held: %" PRIu32 " on %" PRIu32
	       " nodes (stopped at the first refused %s: %.160s)\n",
	       pods, nodes, why, k32_buf_cstr(&out));
	if (first_evicted)
		printf("all their events kept up to: %" PRIu32 " pods (then the oldest evicted)\n",
		       first_evicted);
	else
		printf("all their events kept: yes (%" PRIu64 " events)\n", events_made);
	printf("events in the store at the end: %" PRIu32 " of %" PRIu64 " recorded\n",
	       events_now(st), events_made);
	printf("store at the end: %zu bytes, %" PRIu32 " objects\n", ss.object_bytes, ss.objects);
	k32_buf_fini(&out);
	api_server_free(api);
	store_close(st);
	return 0;
}
