/*
 * hw_mux.c - the host side of a PCA9548A / TCA9548A multiplexer (hardware.md section 4).
 *
 * The mux has one control byte and no register address. A new setting takes effect at the
 * STOP ending its write, so selecting a channel is its own transaction before the device
 * transfer, never the write phase of a write-read. The host enables one channel at a time,
 * caches the byte it last wrote and rewrites it only when it changes; after any error on the
 * bus the cache is forgotten (-1) because the mux may have seen a partial write.
 *
 * Context: called by hw_bus_xfer while the caller owns the bus (busy set).
 */
#include "hw/hw_int.h"

static k32_status_t mux_write(struct hw_bus *bus, uint8_t ctl, struct k32_err *err)
{
	enum hw_xfer_result res =
	    bus->ops->xfer(bus->ctx, bus->cfg.mux_addr, &ctl, 1, NULL, 0, bus->cfg.xfer_timeout_ms);
	k32_plat()->mutex_lock(&bus->mu);
	bus->stats.mux_writes++;
	k32_plat()->mutex_unlock(&bus->mu);
	k32_status_t st = hw_bus_result(bus, res, bus->cfg.mux_addr, err);
	if (st != K32_OK) {
		bus->mux_cached = -1;
		return st;
	}
	bus->mux_cached = ctl;
	return K32_OK;
}

k32_status_t hw_mux_select(struct hw_bus *bus, uint32_t channel, struct k32_err *err)
{
	if (!bus->cfg.has_mux)
		return K32_OK;
	/* A device directly on the bus is reachable whatever the mux routes. */
	if (channel == HW_MUX_NONE)
		return K32_OK;
	uint8_t want = (uint8_t)(1u << channel);
	if (bus->mux_cached == want)
		return K32_OK;
	return mux_write(bus, want, err);
}

k32_status_t hw_bus_mux_reset(struct hw_bus *bus, struct k32_err *err)
{
	if (!bus->cfg.has_mux)
		return K32_OK;
	k32_plat()->mutex_lock(&bus->mu);
	bool busy = bus->busy;
	if (!busy)
		bus->busy = true;
	k32_plat()->mutex_unlock(&bus->mu);
	if (busy)
		return k32_err_set(err, K32_ERR_BAD_STATE, "hw",
				   "bus %u: mux reset while a transaction runs; call it at boot",
				   (unsigned)bus->index);
	k32_status_t st = mux_write(bus, 0x00, err);
	k32_plat()->mutex_lock(&bus->mu);
	bus->busy = false;
	k32_plat()->cond_signal(&bus->cv);
	k32_plat()->mutex_unlock(&bus->mu);
	return st;
}
