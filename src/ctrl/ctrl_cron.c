/*
 * ctrl_cron.c - the CronJob controller: makes a Job from spec.jobTemplate at each time
 * spec.schedule names (UTC, five-field cron, kmeta_cron.c), as kube-controller-manager's
 * cronjob controller (v2) does.
 *
 * Per CronJob, each pass:
 *  - its Jobs are those whose controller ownerReference is it; unfinished ones are
 *    status.active, the newest successful one's completion is status.lastSuccessfulTime;
 *    finished Jobs past successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted,
 *    oldest first (propagationPolicy Background: their pods go with them).
 *  - unless spec.suspend, the most recent scheduled time not yet run (after
 *    status.lastScheduleTime, else the CronJob's creation) is run when it is still within
 *    spec.startingDeadlineSeconds: Forbid skips it while a Job is active (and tries again
 *    next pass, until the deadline), Replace deletes the active Jobs first, Allow runs
 *    beside them. The Job is named <cronjob>-<scheduled minutes since 1970>, so a
 *    repeated pass (or a controller restart) finds it (409) instead of running twice.
 *    Missed times in between are not run (only the latest), as upstream; more than
 *    K32_CRON_MISSED_MAX of them get a Warning TooManyMissedTimes.
 *  - the pass asks to run again at the next scheduled time (ctrl_requeue), so a CronJob
 *    fires on time without polling.
 * The clock is the controller's wall clock (ctrl_config.wall_s): tests drive it.
 * Not done: time zones other than UTC (the API refuses them), suspend's effect on missed
 * runs counted while suspended (none are run after resume, as upstream without a deadline).
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kmeta/kmeta.h"

/* "True" when the Job has finished with condition type (Complete or Failed). */
static bool job_has(const cJSON *job, const char *type)
{
	const char *s = ctrl_cond_status(job, type);
	return s && !strcmp(s, "True");
}

/* When a finished Job finished (its completionTime, else its condition's transition). */
static uint64_t job_end(const cJSON *job)
{
	uint64_t t = 0;
	if (ctrl_parse_time(ctrl_jstr(job, "status.completionTime"), &t))
		return t;
	const cJSON *conds = k32_json_find(job, "status.conditions");
	const char *types[] = {"Complete", "Failed"};
	for (size_t i = 0; i < 2; i++) {
		const cJSON *cd = ctrl_cond_find(conds, types[i]);
		if (cd && ctrl_parse_time(ctrl_jstr(cd, "lastTransitionTime"), &t))
			return t;
	}
	ctrl_parse_time(ctrl_jstr(job, "metadata.creationTimestamp"), &t);
	return t;
}

static void job_delete(struct ctrl *c, const cJSON *job)
{
	char target[600];
	snprintf(target, sizeof(target), "/apis/batch/v1/namespaces/%s/jobs/%s",
		 ctrl_jstr(job, "metadata.namespace"), ctrl_jstr(job, "metadata.name"));
	cJSON *body = cJSON_CreateObject();
	if (body && ctrl_charge(c)) {
		cJSON_AddStringToObject(body, "propagationPolicy", "Background");
		ctrl_write(c, "DELETE", target, NULL, body, NULL);
	}
	cJSON_Delete(body);
}

/* Deletes the oldest of the finished Jobs in jobs that succeeded (or failed) past limit. */
static void cron_trim(struct ctrl *c, const cJSON *cj, const cJSON *jobs, bool succeeded,
		      int64_t limit)
{
	int64_t n = 0;
	const cJSON *j;
	cJSON_ArrayForEach(j, jobs)
	{
		n += succeeded ? job_has(j, "Complete") : job_has(j, "Failed");
	}
	while (n > limit) {
		const cJSON *oldest = NULL;
		cJSON_ArrayForEach(j, jobs)
		{
			if (!(succeeded ? job_has(j, "Complete") : job_has(j, "Failed")) ||
			    cJSON_IsTrue(cJSON_GetObjectItem(j, "k32_trimmed")))
				continue;
			if (!oldest || job_end(j) < job_end(oldest))
				oldest = j;
		}
		if (!oldest)
			break;
		job_delete(c, oldest);
		char msg[320];
		snprintf(msg, sizeof(msg), "Deleted job %s", ctrl_jstr(oldest, "metadata.name"));
		ctrl_obj_event(c, cj, "batch/v1", "CronJob", "Normal", "SuccessfulDelete", msg);
		/* marks it in our copy of the list so the next round picks another */
		cJSON_AddTrueToObject((cJSON *)oldest, "k32_trimmed");
		n--;
	}
}

/*
 * The latest scheduled time in (earliest, now], 0 if none; *missed counts the times in
 * between (at most K32_CRON_MISSED_MAX + 1). Past K32_CRON_MISSED_MAX the latest is found
 * from windows ending at now, so a CronJob that slept a year costs a bounded search.
 */
static uint64_t cron_latest(const struct kmeta_cron *cr, uint64_t earliest, uint64_t now,
			    uint32_t *missed)
{
	uint64_t last = 0, t = earliest;
	*missed = 0;
	for (;;) {
		t = kmeta_cron_next(cr, t);
		if (!t || t > now)
			return last;
		last = t;
		if (++*missed > K32_CRON_MISSED_MAX)
			break;
	}
	static const uint64_t windows[] = {120, 7200, 2 * 86400, 62 * 86400, 400 * 86400};
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		if (now - last < windows[i])
			break;
		t = kmeta_cron_next(cr, now - windows[i]);
		if (!t || t > now)
			continue;
		/* at most the window's minutes of steps, and only for dense schedules */
		for (uint32_t steps = 0; t && t <= now && steps < 2 * 24 * 60; steps++) {
			last = t;
			t = kmeta_cron_next(cr, t);
		}
		break;
	}
	return last;
}

static void cron_sync(struct ctrl *c, const cJSON *cj)
{
	const char *ns = ctrl_jstr(cj, "metadata.namespace");
	const char *name = ctrl_jstr(cj, "metadata.name");
	const char *uid = ctrl_jstr(cj, "metadata.uid");
	if (!ns || !name || !uid || k32_json_find(cj, "metadata.deletionTimestamp"))
		return;
	uint64_t now = ctrl_wall_s(c);
	char path[600], ts[32];
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs", ns);
	cJSON *jobs = ctrl_list_array(c, path, uid);
	if (!jobs)
		return;
	/* what its Jobs say: active ones, the last success */
	cJSON *active = cJSON_CreateArray();
	uint64_t last_success = 0;
	ctrl_parse_time(ctrl_jstr(cj, "status.lastSuccessfulTime"), &last_success);
	const cJSON *j;
	cJSON_ArrayForEach(j, jobs)
	{
		if (job_has(j, "Complete")) {
			uint64_t e = job_end(j);
			if (e > last_success)
				last_success = e;
			continue;
		}
		if (job_has(j, "Failed") || k32_json_find(j, "metadata.deletionTimestamp"))
			continue;
		cJSON *ref = cJSON_CreateObject();
		if (!ref)
			continue;
		cJSON_AddStringToObject(ref, "apiVersion", "batch/v1");
		cJSON_AddStringToObject(ref, "kind", "Job");
		cJSON_AddStringToObject(ref, "namespace", ns);
		cJSON_AddStringToObject(ref, "name", ctrl_jstr(j, "metadata.name"));
		cJSON_AddStringToObject(ref, "uid", ctrl_jstr(j, "metadata.uid"));
		cJSON_AddItemToArray(active, ref);
	}
	cron_trim(c, cj, jobs, true, ctrl_jint(cj, "spec.successfulJobsHistoryLimit", 3));
	cron_trim(c, cj, jobs, false, ctrl_jint(cj, "spec.failedJobsHistoryLimit", 1));

	uint64_t last_sched = 0, created = 0;
	ctrl_parse_time(ctrl_jstr(cj, "status.lastScheduleTime"), &last_sched);
	ctrl_parse_time(ctrl_jstr(cj, "metadata.creationTimestamp"), &created);
	struct kmeta_cron cr;
	char why[160];
	const char *sched = ctrl_jstr(cj, "spec.schedule");
	bool ok = sched && kmeta_cron_parse(sched, &cr, why, sizeof(why));
	if (!ok) {
		/* the API refuses these; a CronJob stored before a stricter check gets told */
		char msg[256];
		snprintf(msg, sizeof(msg), "unparseable schedule \"%.40s\": %s", sched ? sched : "",
			 ok ? "" : why);
		ctrl_obj_event(c, cj, "batch/v1", "CronJob", "Warning", "UnparseableSchedule", msg);
	} else if (!cJSON_IsTrue(k32_json_find(cj, "spec.suspend"))) {
		uint64_t earliest = last_sched ? last_sched : created;
		int64_t deadline = ctrl_jint(cj, "spec.startingDeadlineSeconds", -1);
		if (deadline >= 0 && now > (uint64_t)deadline &&
		    now - (uint64_t)deadline > earliest)
			earliest = now - (uint64_t)deadline;
		uint32_t missed = 0;
		uint64_t due = cron_latest(&cr, earliest, now, &missed);
		if (missed > K32_CRON_MISSED_MAX)
			ctrl_obj_event(c, cj, "batch/v1", "CronJob", "Warning",
				       "TooManyMissedTimes",
				       "too many missed start times: set or decrease "
				       ".spec.startingDeadlineSeconds or check clock skew");
		const char *policy = ctrl_jstr(cj, "spec.concurrencyPolicy");
		bool forbid = policy && !strcmp(policy, "Forbid");
		bool replace = policy && !strcmp(policy, "Replace");
		if (due && forbid && cJSON_GetArraySize(active) > 0) {
			/* tried again each pass until the deadline passes it by */
			ctrl_requeue(c, 10);
			due = 0;
		}
		if (due && replace) {
			cJSON_ArrayForEach(j, jobs)
			{
				if (!job_has(j, "Complete") && !job_has(j, "Failed") &&
				    !k32_json_find(j, "metadata.deletionTimestamp")) {
					job_delete(c, j);
					char msg[320];
					snprintf(msg, sizeof(msg), "Deleted job %s",
						 ctrl_jstr(j, "metadata.name"));
					ctrl_obj_event(c, cj, "batch/v1", "CronJob", "Normal",
						       "SuccessfulDelete", msg);
				}
			}
			cJSON_Delete(active);
			active = cJSON_CreateArray();
		}
		if (due && ctrl_charge(c)) {
			char jname[CTRL_NAME_LEN];
			snprintf(jname, sizeof(jname), "%s-%" PRIu64, name, due / 60);
			const cJSON *tmpl = k32_json_find(cj, "spec.jobTemplate");
			cJSON *job = cJSON_CreateObject();
			cJSON *md = job ? cJSON_AddObjectToObject(job, "metadata") : NULL;
			cJSON *ann = NULL;
			if (md) {
				cJSON_AddStringToObject(job, "apiVersion", "batch/v1");
				cJSON_AddStringToObject(job, "kind", "Job");
				cJSON_AddStringToObject(md, "name", jname);
				cJSON_AddStringToObject(md, "namespace", ns);
				const cJSON *l = k32_json_find(tmpl, "metadata.labels");
				if (cJSON_IsObject(l))
					cJSON_AddItemToObject(md, "labels",
							      cJSON_Duplicate(l, true));
				const cJSON *a = k32_json_find(tmpl, "metadata.annotations");
				ann = cJSON_IsObject(a) ? cJSON_Duplicate(a, true)
							: cJSON_CreateObject();
				cJSON_AddItemToObject(md, "annotations", ann);
				cJSON_AddItemToObject(md, "ownerReferences",
						      ctrl_owner_ref(cj, "batch/v1", "CronJob"));
				const cJSON *spec = cJSON_GetObjectItem(tmpl, "spec");
				cJSON_AddItemToObject(job, "spec", cJSON_Duplicate(spec, true));
			}
			ctrl_fmt_time(due, ts, sizeof(ts));
			if (ann)
				cJSON_AddStringToObject(
				    ann, "batch.kubernetes.io/cronjob-scheduled-timestamp", ts);
			snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs", ns);
			cJSON *made = NULL;
			int code = md ? ctrl_write(c, "POST", path, NULL, job, &made) : 0;
			cJSON_Delete(job);
			if (code == 201 || code == 409) {
				/* 409: an earlier pass made it; the time is taken either way */
				last_sched = due;
				if (code == 201) {
					char msg[320];
					snprintf(msg, sizeof(msg), "Created job %s", jname);
					ctrl_obj_event(c, cj, "batch/v1", "CronJob", "Normal",
						       "SuccessfulCreate", msg);
					cJSON *ref = cJSON_CreateObject();
					if (ref) {
						cJSON_AddStringToObject(ref, "apiVersion",
									"batch/v1");
						cJSON_AddStringToObject(ref, "kind", "Job");
						cJSON_AddStringToObject(ref, "namespace", ns);
						cJSON_AddStringToObject(ref, "name", jname);
						const char *juid = ctrl_jstr(made, "metadata.uid");
						cJSON_AddStringToObject(ref, "uid",
									juid ? juid : "");
						cJSON_AddItemToArray(active, ref);
					}
				}
			} else {
				char msg[320];
				snprintf(msg, sizeof(msg), "Error creating job %s: HTTP %d", jname,
					 code);
				ctrl_obj_event(c, cj, "batch/v1", "CronJob", "Warning",
					       "FailedCreate", msg);
			}
			cJSON_Delete(made);
		}
		/* run again when the next time comes */
		uint64_t next = kmeta_cron_next(&cr, now);
		if (next)
			ctrl_requeue(c, next - now);
	}
	/* status: active (omitted when empty), lastScheduleTime, lastSuccessfulTime */
	cJSON *want = cJSON_CreateObject();
	if (want) {
		if (cJSON_GetArraySize(active) > 0 ||
		    cJSON_GetArraySize(k32_json_find(cj, "status.active")) > 0) {
			cJSON_AddItemToObject(want, "active", active);
			active = NULL;
		}
		if (last_sched) {
			ctrl_fmt_time(last_sched, ts, sizeof(ts));
			cJSON_AddStringToObject(want, "lastScheduleTime", ts);
		}
		if (last_success) {
			ctrl_fmt_time(last_success, ts, sizeof(ts));
			cJSON_AddStringToObject(want, "lastSuccessfulTime", ts);
		}
		snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/cronjobs/%s/status", ns,
			 name);
		if (cJSON_GetArraySize(want) > 0)
			ctrl_status_write(c, path, cj, want);
	}
	cJSON_Delete(want);
	cJSON_Delete(active);
	cJSON_Delete(jobs);
}

void ctrl_cron_pass(struct ctrl *c)
{
	cJSON *list = ctrl_list_array(c, "/apis/batch/v1/cronjobs", NULL);
	const cJSON *cj;
	cJSON_ArrayForEach(cj, list)
	{
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		cron_sync(c, cj);
	}
	cJSON_Delete(list);
}
