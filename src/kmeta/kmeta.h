/*
 * kmeta.h - the Kubernetes object layer shared by api, ctrl, kubelet, hw and sim.
 *
 * One strict reader for each value those modules used to parse on their own (and
 * differently): resource quantities with Kubernetes' exact grammar, the memory a pod gets,
 * the kube32.io/ pod annotations with their ranges (k32_config.h, section kmeta), RFC 3339
 * timestamps and string fields of JSON objects. The API server validates with these
 * functions and the kubelet runs pods with the values they return, so what the API accepted
 * is exactly what runs: nothing is reinterpreted on the node.
 *
 * Depends only on base (and cJSON through it). Reentrant; no allocation.
 */
#ifndef K32_KMETA_H
#define K32_KMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_json.h"
#include "k32/k32_config.h"

/* ---- Events ------------------------------------------------------------------------------ */

/* The object an Event is about (involvedObject). */
struct kmeta_object_ref {
	const char *api_version; /* "v1", "apps/v1"; NULL: "v1" */
	const char *kind;
	const char *ns; /* "" or NULL for cluster-scoped */
	const char *name;
	const char *uid; /* may be NULL */
};

/* A new core/v1 Event named name in namespace ns, count 1, first and last timestamp ts (RFC
 * 3339), from component; NULL when out of memory. The one builder the API server and the
 * controllers share. */
cJSON *kmeta_event_json(const struct kmeta_object_ref *ref, const char *ns, const char *name,
			const char *type, const char *reason, const char *message,
			const char *component, const char *ts);

/* Bytes of an Event's name: kmeta_event_name's "<object, at most 90>.<hex time><4 hex>". */
#define KMETA_EVENT_NAME_LEN 120

/* "<object>.<hex now_us><hex salt>", the name upstream gives a new Event; returns out. */
const char *kmeta_event_name(const char *object, uint64_t now_us, uint32_t salt, char *out,
			     size_t cap);

/* A remembered Event series: the Event object a repeat of (ns, object, type, reason,
 * message) counts up. A table of them is fixed-size, zeroed at start (hash 0: free). */
struct kmeta_event_series {
	uint32_t hash;	 /* kmeta_event_hash; 0: a free slot */
	uint32_t count;	 /* occurrences recorded in the Event (callers that patch count) */
	uint64_t last_s; /* wall seconds of the last occurrence */
	char ns[64];
	char name[KMETA_EVENT_NAME_LEN];
};

/* Hash of what makes two Events one series (never 0). */
uint32_t kmeta_event_hash(const struct kmeta_object_ref *ref, const char *ns, const char *type,
			  const char *reason, const char *message);
/* The series of hash in ns last seen within K32_API_EVENT_SERIES_S of now_s (its last_s
 * renewed), or NULL: then a new Event is due. */
struct kmeta_event_series *kmeta_event_series_find(struct kmeta_event_series *tab, size_t n,
						   uint32_t hash, const char *ns, uint64_t now_s);
/* Remembers a new series (count 1) in the least recently used slot of tab; returns it. */
struct kmeta_event_series *kmeta_event_series_add(struct kmeta_event_series *tab, size_t n,
						  uint32_t hash, const char *ns, const char *name,
						  uint64_t now_s);

/* ---- CronJob schedules ------------------------------------------------------------------ */

/* A parsed five-field cron schedule (kmeta_cron.c): the values each field matches, as bits. */
struct kmeta_cron {
	uint64_t minutes; /* bits 0..59 */
	uint32_t hours;	  /* bits 0..23 */
	uint32_t mdays;	  /* bits 1..31 */
	uint16_t months;  /* bits 1..12 */
	uint8_t wdays;	  /* bits 0..6, Sunday 0 */
	bool mday_star;	  /* day-of-month was "*" or "?" (then both day fields must match) */
	bool wday_star;
};

/* Parses a CronJob's spec.schedule ("*\/5 * * * *", "0 3 * * MON-FRI", "@daily"). false
 * with the reason in why (naming the field and its text) when it does not parse. */
bool kmeta_cron_parse(const char *s, struct kmeta_cron *out, char *why, size_t why_cap);
/* The first time after after_s (Unix seconds) the schedule fires, in UTC, on a whole
 * minute; 0 when it never does within K32_CRON_SEARCH_YEARS ("0 0 30 2 *"). */
uint64_t kmeta_cron_next(const struct kmeta_cron *c, uint64_t after_s);

/* ---- quantities -------------------------------------------------------------------------- */

/*
 * Bytes of a Kubernetes quantity (resource.Quantity), e.g. "24Ki", "1.5e3", "64k", "1Ti".
 * Grammar, case-sensitive: an optional sign, digits with an optional fraction ("5", "1.5",
 * "5.", ".5"), then one suffix: binary Ki Mi Gi Ti Pi Ei, decimal m "" k M G T P E, or an
 * exponent e/E followed by a signed integer. A fractional byte count is rounded up, as
 * Quantity.Value() does ("1500m" is 2). Refused, with *why saying which rule: any other
 * suffix ("24K": the kilo is lower-case k; "24Kb"), white space, a negative value, and a
 * value above INT64_MAX (Kubernetes' ceiling, 2^63-1). Returns true with *out set.
 * why may be NULL.
 */
bool kmeta_quantity_bytes(const char *s, uint64_t *out, const char **why);

/* The same grammar and rules in thousandths of a unit ("250m" is 250, "1" is 1000, "1Ki" is
 * 1024000): to compare quantities that are not byte counts (cpu) exactly. */
bool kmeta_quantity_milli(const char *s, uint64_t *out, const char **why);

/* bytes in the canonical form Kubernetes writes a binary quantity in (resource.Quantity with
 * BinarySI): the largest of Ki, Mi, Gi, Ti, Pi, Ei that divides it exactly ("64Ki", "3Mi"),
 * else the plain number ("70000"). Into out (cap bytes; 24 always suffice); returns out. */
const char *kmeta_quantity_format_bytes(uint64_t bytes, char *out, size_t cap);

/* The same grammar for quantities that are not byte counts (cpu: "250m"): true when s
 * parses (a negative value too; callers that need >= 0 check *negative). */
bool kmeta_quantity_valid(const char *s, bool *negative, const char **why);

/* A plain decimal integer, digits only (no sign, no space, no suffix), in lo..hi. */
bool kmeta_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* ---- pod limits: memory and the kube32.io/ annotations ------------------------------------ */

#define KMETA_ANN_EXECUTION_BUDGET "kube32.io/execution-budget"
#define KMETA_ANN_TICK_MS	   "kube32.io/tick-ms"
#define KMETA_ANN_STACK_BYTES	   "kube32.io/stack-bytes"
#define KMETA_ANN_CALL_DEPTH	   "kube32.io/call-depth"
/* Wall-clock deadline of one call into the pod (k32_init, k32_tick, k32_http, k32_event), in
 * ms, 1..K32_POD_CALL_DEADLINE_MS_MAX; absent: the node's default. */
#define KMETA_ANN_CALL_DEADLINE_MS "kube32.io/call-deadline-ms"
#define KMETA_ANN_HARDWARE	   "kube32.io/hardware"

/* What a pod runs with, read from its object. A value the pod does not set is the default
 * named in k32_config.h (call_deadline_ms and frames: 0, the node's default). */
struct kmeta_pod_limits {
	uint64_t mem_bytes; /* first container's limits.memory, else K32_POD_MEM_DEFAULT */
	uint64_t gas;	    /* per call (K32_KLET_POD_GAS unless the annotation sets it) */
	bool gas_off;	    /* execution-budget "off": no gas metering */
	uint32_t tick_ms;
	uint32_t stack_bytes;
	uint32_t frames;
	uint32_t call_deadline_ms;
};

/* Called once per value that does not parse or is out of range: the field's path
 * ("metadata.annotations[kube32.io/tick-ms]", "spec.containers[0].resources.limits.memory"),
 * the value as given, and why, naming the allowed range. */
typedef void (*kmeta_bad_fn)(void *ctx, const char *field, const char *value, const char *why);

/* Checks the kube32.io/ annotations of a pod (or pod template): an object of strings, or
 * NULL. field: the path of the annotations object, e.g. "metadata.annotations". Fills lim
 * when not NULL (defaults for what is absent or bad). Returns the number of bad values. */
uint32_t kmeta_pod_annotations(const cJSON *annotations, const char *field,
			       struct kmeta_pod_limits *lim, kmeta_bad_fn bad, void *ctx);

/* Checks every quantity of a pod spec's containers and initContainers (resources.limits and
 * resources.requests; memory in 1..K32_POD_MEM_MAX bytes, any other resource >= 0). field:
 * the path of the spec, e.g. "spec" or "spec.template.spec". Sets *mem_bytes (when not
 * NULL) to the first container's limits.memory or K32_POD_MEM_DEFAULT. Returns the count. */
uint32_t kmeta_pod_quantities(const cJSON *spec, const char *field, uint64_t *mem_bytes,
			      kmeta_bad_fn bad, void *ctx);

/* Both of the above on a Pod object: what the kubelet runs. Returns the count of bad values;
 * the first one is described in msg (cap bytes) for the pod's status. */
uint32_t kmeta_pod_limits(const cJSON *pod, struct kmeta_pod_limits *lim, char *msg, size_t cap);

/* Memory the scheduler counts for one container: limits.memory, else requests.memory, else
 * K32_POD_MEM_DEFAULT (a value that does not parse counts as the default: the API server
 * has refused it already). */
uint64_t kmeta_container_memory(const cJSON *container);

/* ---- time ----------------------------------------------------------------------------------- */

#define KMETA_RFC3339_LEN 21 /* "2006-01-02T15:04:05Z" and its NUL */

/* Seconds since the Unix epoch as RFC 3339 UTC with seconds ("1970-01-01T00:00:00Z"). */
void kmeta_rfc3339(uint64_t unix_s, char out[KMETA_RFC3339_LEN]);
/* The proleptic Gregorian date of a day count from 1970-01-01, and back; days of a month. */
void kmeta_civil_from_days(int64_t days, int *year, int *month, int *day);
int64_t kmeta_days_from_civil(int year, int month, int day);
int kmeta_days_in_month(int year, int month);

/* Parses "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)" (years 1970..9999) to Unix seconds
 * (the fraction is dropped). false when s is NULL or is anything else. */
bool kmeta_rfc3339_parse(const char *s, uint64_t *out);

/* ---- JSON ----------------------------------------------------------------------------------- */

/* The string at a dotted path ("metadata.name") of o, or NULL when absent or not a string. */
const char *kmeta_jstr(const cJSON *o, const char *path);

/* ---- conditions and owner references ---------------------------------------------------- */

/* The condition of type in a conditions array, or NULL. */
cJSON *kmeta_cond_find(const cJSON *conds, const char *type);

/* The status ("True", "False", "Unknown") of condition type in o.status.conditions, or NULL. */
const char *kmeta_cond_status(const cJSON *o, const char *type);

/* Sets condition type in status.conditions (the array and the condition are created when
 * absent) to st, reason and msg (NULL reason or msg: the field is left out, as Kubernetes
 * leaves them out of a True pod condition). lastTransitionTime becomes now when the status changes
 * (or was never set), lastUpdateTime too when with_update (Deployment conditions have it). True
 * when anything changed; false when it was already so, or out of memory. */
bool kmeta_cond_set(cJSON *status, const char *type, const char *st, const char *reason,
		    const char *msg, const char *now, bool with_update);

/* The uid of o's controller owner reference (controller: true), or NULL. */
const char *kmeta_controller_uid(const cJSON *o);

/* A new ownerReferences array naming owner (its metadata.name and uid) as the controller, with
 * blockOwnerDeletion, as a workload controller sets on what it creates. NULL when out of
 * memory. */
cJSON *kmeta_owner_refs(const cJSON *owner, const char *api_version, const char *kind);

/* ---- selectors ------------------------------------------------------------------------------ */

/* One requirement of a selector: op In, NotIn, Exists, DoesNotExist, or Gt/Lt (one integer
 * value; a value that is not an integer matches neither) on v, the label's or field's value
 * (NULL: absent). An unknown operator matches nothing. */
bool kmeta_requirement_matches(const char *op, const cJSON *values, const char *v);

/* A LabelSelector {matchLabels, matchExpressions} against a labels object. A selector that is
 * absent or empty matches nothing (as a ReplicaSet without a selector selects nothing). */
bool kmeta_label_selector_matches(const cJSON *selector, const cJSON *labels);

/* ---- where pods are reached (kmeta_svc.c) ------------------------------------------------ */

#define KMETA_HOST_LEN 64 /* an IP address or host name of a node, with its NUL */

/* Whether s is a plain host (an IPv4/IPv6 address or DNS name: letters, digits, '.', ':',
 * '-'; shorter than KMETA_HOST_LEN): nothing that could break a request line. */
bool kmeta_host_ok(const char *s);

/* A Node's pod server: its InternalIP (else "127.0.0.1") into ip and
 * status.daemonEndpoints.kubeletEndpoint.Port into *port (0: the node publishes none). */
void kmeta_node_pod_server(const cJSON *node, char *ip, size_t ipcap, uint16_t *port);

/* One ready endpoint of a Service: the pod, its node and the node's pod server. */
struct kmeta_endpoint {
	char pod[254];
	char node[254];
	char ip[KMETA_HOST_LEN];
	uint16_t port;
};

/* The ready endpoints of a core/v1 Endpoints object (subsets[].addresses, each with
 * targetRef.name and nodeName, the subset's first port that node's pod server); addresses
 * that are malformed are skipped, at most K32_SVC_ENDPOINTS_MAX are read. Returns how many
 * there are and fills *out (may be NULL) with the one at index modulo that count. */
uint32_t kmeta_endpoints_pick(const cJSON *eps, uint32_t index, struct kmeta_endpoint *out);

/* ---- pods/log options --------------------------------------------------------------------- */

/* The options of a log read (PodLogOptions), as the API's pods/log and the kubelet's
 * /containerLogs take them in their query. */
struct kmeta_log_opts {
	int64_t tail_lines;	/* tailLines; -1: every line */
	bool previous;		/* previous */
	bool timestamps;	/* timestamps */
	bool follow;		/* follow */
	int64_t limit_bytes;	/* limitBytes; -1: no limit */
	bool has_since;		/* sinceSeconds given */
	uint64_t since_seconds; /* its value */
	uint64_t after_seq;	/* afterSeq (kube32's: lines after this sequence number); 0 all */
};

/* Reads a query parameter into buf (cap bytes): true when present (an empty value is ""). */
typedef bool (*kmeta_query_get_fn)(void *ctx, const char *name, char *buf, size_t cap);

/*
 * The one reader of log options, for pods/log (src/cplane) and /containerLogs (src/kubelet):
 * booleans as Go's strconv.ParseBool (1 t T true TRUE True, 0 f F false FALSE False; a
 * parameter without a value is true), numbers as decimal digits (at most 18). Parameters
 * absent keep their defaults. 0, or -1 with the parameter, its value and the rule in msg.
 */
int kmeta_log_opts_parse(kmeta_query_get_fn get, void *ctx, struct kmeta_log_opts *out, char *msg,
			 size_t cap);

#endif /* K32_KMETA_H */
