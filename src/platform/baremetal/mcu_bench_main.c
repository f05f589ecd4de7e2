/*
 * mcu_bench_main.c - the `make test-mcu` image: on an emulated Cortex-M4 (QEMU mps2-an386,
 * output through semihosting) it loads the bench pod (apps/bench, linked into the image as
 * data), runs the six kernels in it and natively, and prints one line per kernel:
 *
 *   K32_MCU kernel=crc32 n=4 pod=0x1234abcd native=0x1234abcd pod_us=N native_us=N
 *
 * scripts/mcu.sh compares the checksums with the host build's and, under QEMU's icount
 * (one instruction per virtual nanosecond), turns the microseconds into instructions.
 * Then the three driver pods (apps/drivers, linked in as data) over src/hw's simulated I2C
 * devices (mcu_drivers.c): their "K32_DRV" reading lines are compared with the same code's
 * run on the host.
 *
 * Exit status 0 when every pod checksum equals the native one and the drivers ran.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>

#include "bench/bench_host.h"
#include "bench/bench_kernels.h"
#include "mcu_drivers.h"
#include "platform/k32_platform.h"

extern const uint8_t _binary_bench_wasm_start[];
extern const uint8_t _binary_bench_wasm_end[];
extern const uint8_t _binary_bme688_wasm_start[];
extern const uint8_t _binary_bme688_wasm_end[];
extern const uint8_t _binary_miniscale_wasm_start[];
extern const uint8_t _binary_miniscale_wasm_end[];
extern const uint8_t _binary_rfid_wasm_start[];
extern const uint8_t _binary_rfid_wasm_end[];

static size_t heap_used(void)
{
	struct mallinfo mi = mallinfo();
	return (size_t)mi.uordblks;
}

static size_t blob_len(const uint8_t *start, const uint8_t *end)
{
	return (size_t)((uintptr_t)end - (uintptr_t)start);
}

static int64_t native_clock(void)
{
	return (int64_t)k32_now_us();
}

int main(void)
{
	struct k32_err err;
	struct bench_pod pod;
	/* the boards' bench pod settings: 24 KiB of linear memory, the default value stack */
	struct bench_pod_opts opts = {.mem_bytes = 24u * 1024u};
	size_t len =
	    (size_t)((uintptr_t)_binary_bench_wasm_end - (uintptr_t)_binary_bench_wasm_start);
	int bad = 0;

	bench_clock_fn = native_clock;
	printf("K32_MCU board=%s pod_bytes=%" PRIu32 "\n", K32_BOARD_NAME, (uint32_t)len);
	uint64_t t0 = k32_now_us();
	if (bench_pod_open(&pod, _binary_bench_wasm_start, len, &opts, &err) != K32_OK) {
		printf("K32_MCU_FAIL load: %s\n", err.msg);
		return 1;
	}
	printf("K32_MCU load_us=%" PRIu32 "\n", (uint32_t)(k32_now_us() - t0));
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		uint32_t n = bench_default_n(k), sum = 0;
		uint64_t a = k32_now_us();
		if (bench_pod_run(&pod, k, n, 1, &sum, &err) != K32_OK) {
			printf("K32_MCU_FAIL kernel=%s: %s\n", bench_kernel_name(k), err.msg);
			bad = 1;
			continue;
		}
		uint64_t b = k32_now_us();
		uint32_t native = bench_run(k, n, 1);
		uint64_t c = k32_now_us();
		printf("K32_MCU kernel=%s n=%" PRIu32 " pod=0x%08" PRIx32 " native=0x%08" PRIx32
		       " pod_us=%" PRIu32 " native_us=%" PRIu32 "\n",
		       bench_kernel_name(k), n, sum, native, (uint32_t)(b - a), (uint32_t)(c - b));
		if (sum != native)
			bad = 1;
	}
	struct mallinfo mi = mallinfo();
	printf("K32_MCU heap_used=%d heap_arena=%d\n", mi.uordblks, mi.arena);
	bench_pod_close(&pod);

	const struct mcu_driver_blob drivers[3] = {
	    {"bme688", _binary_bme688_wasm_start,
	     blob_len(_binary_bme688_wasm_start, _binary_bme688_wasm_end)},
	    {"miniscale", _binary_miniscale_wasm_start,
	     blob_len(_binary_miniscale_wasm_start, _binary_miniscale_wasm_end)},
	    {"rfid", _binary_rfid_wasm_start,
	     blob_len(_binary_rfid_wasm_start, _binary_rfid_wasm_end)},
	};
	uint64_t d0 = k32_now_us();
	if (mcu_drivers_run(drivers, heap_used) != 0)
		bad = 1;
	printf("K32_MCU drivers_us=%" PRIu32 "\n", (uint32_t)(k32_now_us() - d0));
	printf("K32_MCU_END %s\n", bad ? "FAIL" : "OK");
	return bad;
}
