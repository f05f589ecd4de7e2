/*
 * k32_platform.c - the ops table in force. Portable: it only selects between the native
 * table (posix/ or esp32/) and a replacement a test installed.
 */
#include "platform/k32_platform.h"

#include <stdatomic.h>

static const struct k32_platform_ops *_Atomic current_ops;

const struct k32_platform_ops *k32_plat(void)
{
	const struct k32_platform_ops *ops =
	    atomic_load_explicit(&current_ops, memory_order_acquire);

	return ops ? ops : k32_plat_native();
}

void k32_plat_set_ops(const struct k32_platform_ops *ops)
{
	atomic_store_explicit(&current_ops, ops, memory_order_release);
}
