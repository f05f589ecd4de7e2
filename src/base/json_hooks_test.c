/*
 * json_hooks_test.c - cJSON's allocator hooks are in place before the first k32_json call.
 *
 * Its own executable, because the point is the state of a fresh process: a cJSON object made
 * before any k32_json call, then freed after one, must go through the same hooks. When the
 * hooks were installed lazily by the first parse, the free read a header the block never had
 * (a heap corruption; kube32-sim --join crashed this way when boards registered in parallel).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/k32_alloc.h"
#include "base/k32_json.h"

static void test_object_before_first_parse(void **state)
{
	(void)state;
	cJSON *early = cJSON_CreateObject(); /* no k32_json call has been made yet */
	assert_non_null(early);
	assert_non_null(cJSON_AddStringToObject(early, "made", "before the first parse"));
	cJSON *doc = NULL;
	struct k32_err err;
	assert_int_equal(k32_json_parse("{\"a\":1}", 7, &doc, &err), K32_OK);
	cJSON_Delete(doc);
	cJSON_Delete(early); /* freed through json_free: must have been made by json_malloc */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_object_before_first_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
