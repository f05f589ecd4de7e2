/*
 * ctrl_job.c - the Job controller: runs pods to completion.
 *
 * Per Job (not being deleted, not finished): its pods are those whose controller
 * ownerReference is the Job. succeeded/failed count pods in phase Succeeded/Failed
 * (terminal pods are kept, so `kubectl logs` still finds them); active are the others not
 * being deleted. When failed > spec.backoffLimit (default 6) the Job fails: its active pods
 * are deleted and it gets FailureTarget and Failed (reason BackoffLimitExceeded). When
 * succeeded >= spec.completions (default 1) it completes: SuccessCriteriaMet and Complete,
 * completionTime. Otherwise it keeps min(parallelism, completions - succeeded) pods active
 * (0 while spec.suspend). Pods get the labels batch.kubernetes.io/job-name, job-name,
 * batch.kubernetes.io/controller-uid and controller-uid, as in Kubernetes.
 *
 * A Job without spec.selector first gets the one Kubernetes' API server would have
 * generated (batch.kubernetes.io/controller-uid=<uid>) and the matching template labels.
 * Status: active, ready, succeeded, failed, startTime, completionTime, conditions.
 * A failed pod is replaced after a back-off, K32_CTRL_JOB_BACKOFF_S doubled per earlier
 * failure up to K32_CTRL_JOB_BACKOFF_MAX_S, counted from the last failure (the pass asks to
 * run again when it ends).
 * Not done: activeDeadlineSeconds, indexed completion,
 * pod failure policy, ttlSecondsAfterFinished (docs/controllers.md).
 */
#include "ctrl/ctrl_int.h"

#include <stdio.h>
#include <string.h>

static bool job_finished(const cJSON *job)
{
	const char *a = ctrl_cond_status(job, "Complete");
	const char *b = ctrl_cond_status(job, "Failed");
	return (a && !strcmp(a, "True")) || (b && !strcmp(b, "True"));
}

/* When a failed pod finished (its container's terminated.finishedAt, else its Ready
 * condition's last transition), wall seconds; 0 if unknown. */
static uint64_t job_finished_at(const cJSON *pod)
{
	uint64_t best = 0, t = 0;
	const cJSON *cs;
	cJSON_ArrayForEach(cs, k32_json_find(pod, "status.containerStatuses"))
	{
		if (ctrl_parse_time(ctrl_jstr(cs, "state.terminated.finishedAt"), &t) && t > best)
			best = t;
	}
	if (!best) {
		const cJSON *cd = ctrl_cond_find(k32_json_find(pod, "status.conditions"), "Ready");
		if (ctrl_parse_time(ctrl_jstr(cd, "lastTransitionTime"), &t))
			best = t;
	}
	return best;
}

/*
 * Gives a Job without spec.selector the selector Kubernetes' API server generates
 * (batch.kubernetes.io/controller-uid=<uid>) and the matching template labels, so
 * `kubectl logs job/x` and `kubectl describe job` find its pods and nothing else.
 */
static void job_select(struct ctrl *c, const char *ns, const char *name, const char *uid)
{
	if (!ctrl_charge(c))
		return;
	cJSON *patch = cJSON_CreateObject();
	cJSON *spec = patch ? cJSON_AddObjectToObject(patch, "spec") : NULL;
	cJSON *sel = spec ? cJSON_AddObjectToObject(spec, "selector") : NULL;
	cJSON *ml = sel ? cJSON_AddObjectToObject(sel, "matchLabels") : NULL;
	cJSON *tmpl = spec ? cJSON_AddObjectToObject(spec, "template") : NULL;
	cJSON *md = tmpl ? cJSON_AddObjectToObject(tmpl, "metadata") : NULL;
	cJSON *labels = md ? cJSON_AddObjectToObject(md, "labels") : NULL;
	if (ml && labels) {
		cJSON_AddStringToObject(ml, "batch.kubernetes.io/controller-uid", uid);
		cJSON_AddStringToObject(labels, "batch.kubernetes.io/controller-uid", uid);
		cJSON_AddStringToObject(labels, "batch.kubernetes.io/job-name", name);
		cJSON_AddStringToObject(labels, "controller-uid", uid);
		cJSON_AddStringToObject(labels, "job-name", name);
		char target[600];
		snprintf(target, sizeof(target), "/apis/batch/v1/namespaces/%s/jobs/%s", ns, name);
		ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	}
	cJSON_Delete(patch);
}

static void job_sync(struct ctrl *c, const cJSON *job)
{
	const char *ns = ctrl_jstr(job, "metadata.namespace");
	const char *name = ctrl_jstr(job, "metadata.name");
	const char *uid = ctrl_jstr(job, "metadata.uid");
	if (!ns || !name || !uid || ctrl_deleting(job))
		return;
	char path[400];
	if (!k32_json_find(job, "spec.selector")) {
		job_select(c, ns, name, uid);
		return; /* the update brings the next pass */
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	cJSON *pods = ctrl_list_array(c, path, uid);
	if (!pods)
		return;
	int64_t completions = ctrl_jint(job, "spec.completions", 1);
	int64_t parallelism = ctrl_jint(job, "spec.parallelism", 1);
	int64_t backoff = ctrl_jint(job, "spec.backoffLimit", 6);
	bool finished = job_finished(job);
	int64_t succeeded = 0, failed = 0, active = 0, ready = 0;
	uint64_t last_fail = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		const char *ph = ctrl_jstr(p, "status.phase");
		if (ph && !strcmp(ph, "Succeeded")) {
			succeeded++;
		} else if (ph && !strcmp(ph, "Failed")) {
			failed++;
			uint64_t t = job_finished_at(p);
			if (t > last_fail)
				last_fail = t;
		} else if (!ctrl_deleting(p)) {
			active++;
			ready += ctrl_pod_ready(p);
		}
	}
	cJSON *st = cJSON_CreateObject();
	cJSON *conds = cJSON_Duplicate(k32_json_find(job, "status.conditions"), true);
	if (!st) {
		cJSON_Delete(conds);
		cJSON_Delete(pods);
		return;
	}
	cJSON_AddItemToObject(st, "conditions", conds ? conds : cJSON_CreateArray());
	char now[32];
	ctrl_fmt_time(ctrl_wall_s(c), now, sizeof(now));
	const char *start = ctrl_jstr(job, "status.startTime");
	cJSON_AddStringToObject(st, "startTime", start ? start : now);
	bool fail = !finished && failed > backoff;
	bool done = !finished && !fail && succeeded >= completions;
	if (fail || (finished && ctrl_cond_status(job, "Failed"))) {
		/* stop what still runs */
		cJSON_ArrayForEach(p, pods)
		{
			if (!ctrl_deleting(p) && !ctrl_pod_terminal(p) && ctrl_charge(c)) {
				ctrl_pod_delete(c, p, -1, true);
				active--;
			}
		}
	}
	if (fail) {
		const char *msg = "Job has reached the specified backoff limit";
		ctrl_cond_set(c, st, "FailureTarget", "True", "BackoffLimitExceeded", msg, false);
		ctrl_cond_set(c, st, "Failed", "True", "BackoffLimitExceeded", msg, false);
		ctrl_obj_event(c, job, "batch/v1", "Job", "Warning", "BackoffLimitExceeded", msg);
	} else if (done) {
		const char *msg = "Reached expected number of succeeded pods";
		ctrl_cond_set(c, st, "SuccessCriteriaMet", "True", "CompletionsReached", msg,
			      false);
		ctrl_cond_set(c, st, "Complete", "True", "CompletionsReached", msg, false);
		ctrl_obj_event(c, job, "batch/v1", "Job", "Normal", "Completed", "Job completed");
		cJSON_AddStringToObject(st, "completionTime", now);
	} else if (!finished) {
		int64_t want = completions - succeeded;
		if (want > parallelism)
			want = parallelism;
		if (cJSON_IsTrue(k32_json_find(job, "spec.suspend")))
			want = 0;
		/* back-off after failures: 10 s, 20 s, 40 s ... from the last one */
		if (failed > 0 && last_fail && active < want) {
			uint64_t delay = K32_CTRL_JOB_BACKOFF_S;
			for (int64_t k = 1; k < failed && delay < K32_CTRL_JOB_BACKOFF_MAX_S; k++)
				delay *= 2;
			if (delay > K32_CTRL_JOB_BACKOFF_MAX_S)
				delay = K32_CTRL_JOB_BACKOFF_MAX_S;
			uint64_t wall = ctrl_wall_s(c);
			if (wall < last_fail + delay) {
				ctrl_requeue(c, last_fail + delay - wall);
				want = active;
			}
		}
		cJSON *labels = cJSON_CreateObject();
		if (labels) {
			cJSON_AddStringToObject(labels, "batch.kubernetes.io/job-name", name);
			cJSON_AddStringToObject(labels, "job-name", name);
			cJSON_AddStringToObject(labels, "batch.kubernetes.io/controller-uid", uid);
			cJSON_AddStringToObject(labels, "controller-uid", uid);
		}
		for (int64_t i = active; i < want && labels; i++) {
			if (!ctrl_charge(c))
				break;
			if (ctrl_pod_create(c, ns, name, k32_json_find(job, "spec.template"),
					    labels, ctrl_owner_ref(job, "batch/v1", "Job"),
					    NULL) == 201)
				active++;
		}
		cJSON_Delete(labels);
	}
	cJSON_AddNumberToObject(st, "active", (double)(active > 0 ? active : 0));
	cJSON_AddNumberToObject(st, "ready", (double)ready);
	cJSON_AddNumberToObject(st, "succeeded", (double)succeeded);
	cJSON_AddNumberToObject(st, "failed", (double)failed);
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s/status", ns, name);
	ctrl_status_write(c, path, job, st);
	cJSON_Delete(st);
	cJSON_Delete(pods);
}

void ctrl_job_pass(struct ctrl *c)
{
	cJSON *list = ctrl_list_work(c, "/apis/batch/v1/jobs");
	const cJSON *job;
	cJSON_ArrayForEach(job, list)
	{
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		if (!ctrl_item_begin(c, job))
			continue; /* backing off */
		job_sync(c, job);
		ctrl_item_end(c);
	}
	cJSON_Delete(list);
}
