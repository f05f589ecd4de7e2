/*
 * log_board_test.c - the log ring at a board's sizes (built with K32_LOG_LINE_LEN 128 and
 * K32_LOG_MSG_LEN 384, as include/k32/boards/mcu_limits.h sets them): a kubelet line of the
 * longest form (node and pod clipped, a whole K32_ERR_MSG_LEN message) is stored as several
 * ring lines broken between words, and joined again it is the whole message, advice
 * included; a short line stays one line; only a message over K32_LOG_MSG_LEN ends in "...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/k32_log.h"
#include "base/k32_status.h"

_Static_assert(K32_LOG_LINE_LEN == 128 && K32_LOG_MSG_LEN == 384, "built at a board's sizes");

/* The lines logged after seq, joined back (continuations without K32_LOG_CONT). */
static size_t joined(uint64_t seq, char *out, size_t cap)
{
	static struct k32_log_line lines[K32_LOG_RING_LINES];
	size_t n = k32_log_read(seq, lines, K32_LOG_RING_LINES, NULL);
	size_t off = 0;
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const char *t = lines[i].text;
		size_t cl = strlen(K32_LOG_CONT);
		assert_true(strlen(t) < K32_LOG_LINE_LEN);
		assert_string_equal(lines[i].component, "klet");
		assert_int_equal(lines[i].seq, seq + 1 + i);
		if (i) {
			assert_memory_equal(t, K32_LOG_CONT, cl);
			t += cl;
			/* broken between words: a piece ends a word, the next starts one */
			assert_true(t[0] != ' ');
			off += (size_t)snprintf(out + off, cap - off, " ");
		}
		off += (size_t)snprintf(out + off, cap - off, "%s", t);
	}
	return n;
}

static uint64_t last_seq(void)
{
	static struct k32_log_line all[K32_LOG_RING_LINES];
	size_t n = k32_log_read(0, all, K32_LOG_RING_LINES, NULL);
	return n ? all[n - 1].seq : 0;
}

static void test_long_line_in_pieces(void **state)
{
	(void)state;
	char node[300], pod[300], msg[K32_ERR_MSG_LEN], back[1024];
	k32_log_set_stderr(false);
	memset(node, 'n', sizeof(node) - 1);
	node[sizeof(node) - 1] = 0;
	memset(pod, 'p', sizeof(pod) - 1);
	pod[sizeof(pod) - 1] = 0;
	/* a whole k32_err message of words ending with its advice */
	size_t off = 0;
	while (off + 8 < sizeof(msg) - 50)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off, "word%03zu ", off);
	snprintf(msg + off, sizeof(msg) - off, "raise resources.limits.memory to at least 262144");
	assert_true(strlen(msg) > K32_ERR_MSG_LEN - 20);

	uint64_t seq = last_seq();
	K32_LOGW("klet", "node %s: pod %s not run: %s", K32_CLIP(node), K32_CLIP(pod), msg);
	size_t n = joined(seq, back, sizeof(back));
	assert_true(n >= 3);
	char want[1024];
	snprintf(want, sizeof(want), "node %s: pod %s not run: %s", K32_CLIP(node), K32_CLIP(pod),
		 msg);
	assert_string_equal(back, want);

	/* a short line is one line, as on the host */
	seq = last_seq();
	K32_LOGI("klet", "node %s: registered", "n1");
	assert_int_equal(joined(seq, back, sizeof(back)), 1);
	assert_string_equal(back, "node n1: registered");

	/* a word longer than half a line is broken where the line ends, nothing lost */
	char word[300];
	memset(word, 'w', sizeof(word) - 1);
	word[sizeof(word) - 1] = 0;
	seq = last_seq();
	K32_LOGW("klet", "%s", word);
	static struct k32_log_line lines[K32_LOG_RING_LINES];
	n = k32_log_read(seq, lines, K32_LOG_RING_LINES, NULL);
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += strlen(lines[i].text) - (i ? strlen(K32_LOG_CONT) : 0);
	assert_int_equal(total, sizeof(word) - 1);

	/* past K32_LOG_MSG_LEN the message is cut, and says so */
	char huge[600];
	memset(huge, 'x', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = 0;
	seq = last_seq();
	K32_LOGW("klet", "%s", huge);
	n = k32_log_read(seq, lines, K32_LOG_RING_LINES, NULL);
	assert_true(n > 1);
	const char *end = lines[n - 1].text;
	assert_string_equal(end + strlen(end) - 3, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_long_line_in_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
