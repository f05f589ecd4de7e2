/*
 * mcu_drivers_host.c - the host side of `make test-mcu`'s driver comparison: mcu_drivers_run
 * natively, the pods read from DIR (the host build's apps/drivers). Usage:
 *   mcu-drivers-host DIR      prints the K32_DRV lines scripts/mcu.sh compares with QEMU's
 */
#include <stdio.h>
#include <stdlib.h>

#include "mcu_drivers.h"

static uint8_t *read_file(const char *dir, const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.wasm", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	/* a driver pod is a few KiB; 64 KiB is far above any of them */
	uint8_t *buf = malloc(64 * 1024);
	*len = buf ? fread(buf, 1, 64 * 1024, f) : 0;
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	static const char *const names[3] = {"bme688", "miniscale", "rfid"};
	struct mcu_driver_blob blobs[3];
	if (argc != 2) {
		fprintf(stderr, "usage: mcu-drivers-host DIR (the directory of the driver pods)\n");
		return 2;
	}
	for (int i = 0; i < 3; i++) {
		size_t len = 0;
		uint8_t *b = read_file(argv[1], names[i], &len);
		if (!b || !len) {
			fprintf(stderr, "mcu-drivers-host: cannot read %s/%s.wasm\n", argv[1],
				names[i]);
			return 1;
		}
		blobs[i] = (struct mcu_driver_blob){names[i], b, len};
	}
	int rc = mcu_drivers_run(blobs, NULL);
	for (int i = 0; i < 3; i++)
		free((void *)blobs[i].bytes);
	return rc;
}
