/*
 * hw_device_fuzz.c - libFuzzer target for the Device object as the node and the controller
 * read it: the input is parsed as JSON (k32_json_parse) and given to hw_device_parse; a Device
 * that parses is turned into its grant and its driver pod manifest (which must be JSON that
 * parses again), copied and rebased (its params must then read the same), and bound to a node
 * slot (twice: the second binding of one Device must be refused) whose status publisher gets
 * the input's own "status.readings" strings through hw_readings_set and produces a merge patch
 * (JSON again).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_json.h"
#include "hw/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_parse(const struct k32_buf *b)
{
	cJSON *j = NULL;
	if (k32_json_parse((const char *)b->data, b->len, &j, NULL) != K32_OK)
		abort(); /* what we produce is JSON */
	cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = NULL;
	if (k32_json_parse((const char *)data, size, &obj, NULL) != K32_OK)
		return 0;
	static struct hw_device d, copy;
	struct k32_err err;
	if (hw_device_parse(obj, &d, &err) != K32_OK) {
		if (!err.msg[0])
			abort(); /* a refusal names the field */
		cJSON_Delete(obj);
		return 0;
	}
	struct hw_grant g;
	hw_device_grant(&d, &g);
	if (g.nparams > HW_DEVICE_MAX_PARAMS || d.store_len > sizeof(d.store))
		abort();
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 64 * 1024, "fuzz manifest");
	if (hw_device_pod_manifest(&d, "2Ki", &b, NULL) == K32_OK)
		must_parse(&b);
	copy = d;
	memset(&d, 0x5A, sizeof(d));
	hw_device_rebase(&copy);
	for (uint32_t i = 0; i < copy.nparams; i++)
		if (copy.params[i].key < copy.store ||
		    copy.params[i].value >= copy.store + sizeof(copy.store))
			abort();

	static struct hw_bus bus;
	struct hw_node_config cfg = {.bus = {&bus, &bus, &bus, &bus}};
	static struct hw_node node;
	static struct hw_node_pod slot, second;
	memset(&slot, 0, sizeof(slot));
	memset(&second, 0, sizeof(second));
	hw_node_init(&node, &cfg);
	if (hw_node_bind(&node, &slot, obj, "fuzz-pod", &err) == K32_OK) {
		if (hw_node_bind(&node, &second, obj, "fuzz-2", &err) != K32_ERR_ALREADY_EXISTS)
			abort();
		struct hw_readings r;
		hw_readings_clear(&r);
		const cJSON *it;
		cJSON_ArrayForEach(it, k32_json_find(obj, "status.readings"))
		{
			if (it->string && cJSON_IsString(it))
				(void)hw_readings_set(&r, it->string, strlen(it->string),
						      it->valuestring, strlen(it->valuestring));
		}
		if (r.len > sizeof(r.kv))
			abort();
		hw_devstatus_readings(&slot.status, &r, 1000000, 1735732800);
		hw_node_pod_failed(&slot, "DriverCrash", "fuzz");
		k32_buf_reset(&b);
		if (hw_node_pod_patch(&slot, &b, NULL) == K32_OK)
			must_parse(&b);
		k32_buf_reset(&b);
		if (hw_node_pod_event(&slot, "fuzz", &b, NULL))
			must_parse(&b);
		hw_node_unbind(&slot);
		if (node.bound)
			abort();
	}
	k32_buf_fini(&b);
	cJSON_Delete(obj);
	return 0;
}
