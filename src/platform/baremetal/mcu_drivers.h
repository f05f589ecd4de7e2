/*
 * mcu_drivers.h - the three driver pods (apps/drivers: bme688, miniscale, rfid) run as Wasm
 * over src/hw's simulated I2C devices on a virtual clock, with one fixed script of physical
 * values. The same file runs in the `make test-mcu` image under QEMU (the pods linked in as
 * data) and natively on the host (mcu_drivers_host.c, the pods read from files), so
 * scripts/mcu.sh can compare the two runs' reading lines byte for byte.
 */
#ifndef K32_MCU_DRIVERS_H
#define K32_MCU_DRIVERS_H

#include <stddef.h>
#include <stdint.h>

struct mcu_driver_blob {
	const char *name;     /* "bme688", "miniscale", "rfid" */
	const uint8_t *bytes; /* the pod's .wasm */
	size_t len;
};

/* Bytes the embedder has taken from the heap, or 0 when it cannot tell (host). */
typedef size_t (*mcu_heap_used_fn)(void);

/*
 * Runs the script over the three pods (blobs in the order bme688, miniscale, rfid) and prints
 * one "K32_DRV ..." line per pod and step (the compared output) and "K32_MCU drivers_..."
 * lines with each pod's memory (not compared: pointer sizes differ between hosts). Returns 0
 * when every pod started and ticked without a trap, 1 otherwise (the reason printed).
 */
int mcu_drivers_run(const struct mcu_driver_blob blobs[3], mcu_heap_used_fn heap_used);

#endif /* K32_MCU_DRIVERS_H */
