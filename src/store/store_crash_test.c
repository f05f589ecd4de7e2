/*
 * store_crash_test.c - crash safety of the embedded store with a real kill.
 *
 * A child process writes a stream of creates and updates (revision stamped into each value)
 * and, after each write returns K32_OK, sends the acknowledged (revision, sequence) pair over
 * a pipe. The parent SIGKILLs it in mid-stream, drains the pipe (everything in it was
 * acknowledged), reopens the store and checks that every acknowledged write is there, or a
 * later write of the same key (the child may die between fsync and its report), and that
 * every value is intact. Several rounds reuse the directory, so later rounds recover from the
 * earlier round's torn tail, and a small rotation size puts kills inside snapshots too.
 *
 * Test code only: fork, pipe and kill stay here, never in src/store.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"

#define KEYS	 40
#define MAX_ACKS 100000

struct ack {
	uint64_t rev; /* acknowledged revision */
	uint32_t seq; /* the child's write number (decides key and value) */
	uint32_t pad;
};

static char dir[64];

static void key_for(uint32_t seq, char *name, size_t cap)
{
	snprintf(name, cap, "k%02u", (unsigned)(seq % KEYS));
}

/* The child: writes until killed. Never returns. */
static void writer(int fd, uint32_t first_seq)
{
	struct store_config cfg = {.data_dir = dir, .log_rotate_bytes = 8 * 1024};
	struct store *st;
	struct k32_err err;
	char name[16], json[160];

	if (store_open(&cfg, &st, &err) != K32_OK) {
		fprintf(stderr, "child: store_open: %s\n", err.msg);
		_exit(2);
	}
	for (uint32_t seq = first_seq;; seq++) {
		struct store_key k = {.group = "", .resource = "pods", .ns = "crash"};
		struct store_value v = {0}; /* essential and the rest: not set by this writer */
		struct store_obj *obj;
		struct ack a = {0};
		k32_status_t s;
		int n;

		key_for(seq, name, sizeof(name));
		k.name = name;
		n = snprintf(json, sizeof(json), "{\"seq\":%u,\"pad\":\"%0*u\",\"rv\":\"\"}",
			     (unsigned)seq, (int)(seq % 50), 0u);
		v.data = json;
		v.len = (size_t)n;
		v.rv_off = (size_t)n - 2; /* between the quotes of "rv" */
		s = store_create(st, &k, &v, &obj, &err);
		if (s == K32_ERR_ALREADY_EXISTS)
			s = store_update(st, &k, &v, 0, &obj, &err);
		if (s != K32_OK) {
			fprintf(stderr, "child: write %u: %s\n", (unsigned)seq, err.msg);
			_exit(3);
		}
		a.rev = obj->mod_rev;
		a.seq = seq;
		store_obj_unref(st, obj);
		if (write(fd, &a, sizeof(a)) != (ssize_t)sizeof(a))
			_exit(4);
	}
}

/* Parses the value written for a key: its seq and the stamped revision. */
static void parse_value(const char *json, uint32_t *out_seq, uint64_t *out_rv)
{
	const char *rv = strstr(json, "\"rv\":\"");
	unsigned seq = 0;

	assert_int_equal(sscanf(json, "{\"seq\":%u,", &seq), 1);
	assert_non_null(rv);
	*out_seq = seq;
	*out_rv = strtoull(rv + 6, NULL, 10);
}

static void test_sigkill_mid_stream(void **state)
{
	static struct ack acks[MAX_ACKS];
	uint32_t last_seq_of_key[KEYS];
	uint64_t last_rev_of_key[KEYS];
	uint32_t next_seq = 1;
	uint64_t acked_rev = 0;
	char p[128];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/k32-store-crash-XXXXXX");
	assert_non_null(mkdtemp(dir));
	memset(last_seq_of_key, 0, sizeof(last_seq_of_key));
	memset(last_rev_of_key, 0, sizeof(last_rev_of_key));

	for (int round = 0; round < 4; round++) {
		int fds[2], status;
		size_t n = 0;
		ssize_t got;
		pid_t pid;
		size_t kill_after = 150 + (size_t)round * 97;
		struct store_config cfg = {.data_dir = dir};
		struct store *st;
		struct k32_err err;
		uint32_t max_seq = 0;

		assert_int_equal(pipe(fds), 0);
		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			writer(fds[1], next_seq);
		}
		close(fds[1]);
		/* read acknowledgements; kill the child in mid-stream */
		while (n < MAX_ACKS) {
			got = read(fds[0], &acks[n], sizeof(acks[n]));
			if (got <= 0)
				break;
			assert_int_equal(got, sizeof(acks[n]));
			n++;
			if (n == kill_after)
				kill(pid, SIGKILL);
		}
		close(fds[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
		assert_true(n >= kill_after);

		for (size_t i = 0; i < n; i++) {
			uint32_t key = acks[i].seq % KEYS;

			assert_true(acks[i].rev > acked_rev); /* revisions rise */
			acked_rev = acks[i].rev;
			last_seq_of_key[key] = acks[i].seq;
			last_rev_of_key[key] = acks[i].rev;
			if (acks[i].seq > max_seq)
				max_seq = acks[i].seq;
		}

		/* reopen: every acknowledged write is there (or a newer one of its key) */
		if (store_open(&cfg, &st, &err) != K32_OK)
			fail_msg("round %d: reopen failed: %s", round, err.msg);
		assert_true(store_rev(st) >= acked_rev);
		for (uint32_t key = 0; key < KEYS; key++) {
			struct store_key k = {.group = "", .resource = "pods", .ns = "crash"};
			struct store_obj *obj;
			char name[16];
			uint32_t seq;
			uint64_t rv;

			if (!last_seq_of_key[key])
				continue;
			key_for(key, name, sizeof(name));
			k.name = name;
			if (store_get(st, &k, &obj, &err) != K32_OK)
				fail_msg("round %d: acknowledged key %s lost: %s", round, name,
					 err.msg);
			parse_value(store_obj_data(obj), &seq, &rv);
			assert_int_equal(rv, obj->mod_rev); /* value intact and stamped */
			assert_true(seq >= last_seq_of_key[key]);
			assert_true(obj->mod_rev >= last_rev_of_key[key]);
			assert_int_equal(seq % KEYS, key);
			/* what survived is either acknowledged or the one unacknowledged write
			 * that was in flight when the child died */
			assert_true(seq <= max_seq + 1);
			if (seq > last_seq_of_key[key]) {
				last_seq_of_key[key] = seq;
				last_rev_of_key[key] = obj->mod_rev;
			}
			store_obj_unref(st, obj);
		}
		acked_rev = store_rev(st);
		store_close(st);
		next_seq = max_seq + 2;
	}

	snprintf(p, sizeof(p), "%s/store.log", dir);
	k32_plat()->file_remove(p, NULL);
	snprintf(p, sizeof(p), "%s/store.snap", dir);
	k32_plat()->file_remove(p, NULL);
	snprintf(p, sizeof(p), "%s/store.snap.tmp", dir);
	k32_plat()->file_remove(p, NULL);
	snprintf(p, sizeof(p), "%s/store.closed", dir);
	k32_plat()->file_remove(p, NULL);
	snprintf(p, sizeof(p), "%s/store.log.tmp", dir);
	k32_plat()->file_remove(p, NULL);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sigkill_mid_stream),
	};

	k32_log_set_stderr(false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
