/*
 * hw_bus.c - the I2C bus: a lock that admits one transaction at a time across tasks and
 * cores, the single section-0 transaction call, and the mapping of wire results to statuses.
 *
 * Why a flag under a mutex and condition variable instead of holding the platform mutex for
 * the whole transfer: the lock wait must time out (K32_ERR_TIMED_OUT, hardware.md section 6)
 * and the platform mutex has no timed lock; the condition variable's deadline gives one.
 * Only the owner of `busy` touches the wire and the mux cache, so the mutex is held only for
 * a few instructions and never across a backend call.
 *
 * Context: tasks. The backend is called without bus->mu held, with busy owned.
 */
#include <stdio.h>

#include "hw/hw_int.h"

int32_t hw_status_to_driver(k32_status_t st)
{
	switch (st) {
	case K32_OK:
		return HW_OK;
	case K32_ERR_INVALID_ARGS:
	case K32_ERR_OUT_OF_RANGE:
		return HW_EINVAL;
	case K32_ERR_ACCESS_DENIED:
		return HW_EPERM;
	case K32_ERR_NOT_FOUND:
		return HW_ENODEV;
	case K32_ERR_TIMED_OUT:
		return HW_ETIMEDOUT;
	case K32_ERR_BUFFER_TOO_SMALL:
		return HW_ENOSPC;
	default:
		return HW_EIO;
	}
}

k32_status_t hw_bus_init(struct hw_bus *bus, uint32_t index, const struct hw_bus_backend_ops *ops,
			 void *ctx, const struct hw_bus_config *cfg, struct k32_err *err)
{
	memset(bus, 0, sizeof(*bus));
	if (!ops || !ops->xfer)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bus %u: no backend ops; pass the simulator's or the board's",
				   (unsigned)index);
	if (cfg)
		bus->cfg = *cfg;
	if (bus->cfg.has_mux && (bus->cfg.mux_addr < 0x70 || bus->cfg.mux_addr > 0x77))
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, "hw",
		    "bus %u: mux address 0x%02x is not a PCA9548A address (0x70..0x77)",
		    (unsigned)index, bus->cfg.mux_addr);
	if (!bus->cfg.lock_timeout_ms)
		bus->cfg.lock_timeout_ms = K32_HW_LOCK_TIMEOUT_MS;
	if (!bus->cfg.xfer_timeout_ms)
		bus->cfg.xfer_timeout_ms = K32_HW_XFER_TIMEOUT_MS;
	bus->ops = ops;
	bus->ctx = ctx;
	bus->index = index;
	bus->mux_cached = -1;
	k32_plat()->mutex_init(&bus->mu);
	k32_plat()->cond_init(&bus->cv);
	return K32_OK;
}

void hw_bus_fini(struct hw_bus *bus)
{
	if (!bus->ops)
		return;
	k32_plat()->cond_fini(&bus->cv);
	k32_plat()->mutex_fini(&bus->mu);
	bus->ops = NULL;
}

static k32_status_t bus_acquire(struct hw_bus *bus, struct k32_err *err)
{
	const struct k32_platform_ops *p = k32_plat();
	int64_t deadline = k32_deadline_after((int64_t)bus->cfg.lock_timeout_ms * 1000);
	k32_status_t st = K32_OK;

	p->mutex_lock(&bus->mu);
	while (bus->busy) {
		if (p->cond_wait(&bus->cv, &bus->mu, deadline) == K32_ERR_TIMED_OUT && bus->busy) {
			bus->stats.lock_timeouts++;
			st = K32_ERR_TIMED_OUT;
			break;
		}
	}
	if (st == K32_OK)
		bus->busy = true;
	p->mutex_unlock(&bus->mu);
	if (st != K32_OK)
		k32_err_set(err, st, "hw",
			    "bus %u: lock still held after %u ms; another transaction hangs or the "
			    "bus is overloaded",
			    (unsigned)bus->index, (unsigned)bus->cfg.lock_timeout_ms);
	return st;
}

static void bus_release(struct hw_bus *bus)
{
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&bus->mu);
	bus->busy = false;
	p->cond_signal(&bus->cv);
	p->mutex_unlock(&bus->mu);
}

k32_status_t hw_bus_result(struct hw_bus *bus, enum hw_xfer_result res, uint8_t addr,
			   struct k32_err *err)
{
	const struct k32_platform_ops *p = k32_plat();
	k32_status_t st;

	p->mutex_lock(&bus->mu);
	switch (res) {
	case HW_XFER_OK:
		st = K32_OK;
		break;
	case HW_XFER_NACK_ADDR:
		bus->stats.nack_addr++;
		st = K32_ERR_NOT_FOUND;
		break;
	case HW_XFER_NACK_DATA:
		bus->stats.nack_data++;
		st = K32_ERR_IO;
		break;
	case HW_XFER_TIMEOUT:
		bus->stats.timeouts++;
		st = K32_ERR_TIMED_OUT;
		break;
	default:
		bus->stats.bus_errors++;
		st = K32_ERR_IO;
		break;
	}
	p->mutex_unlock(&bus->mu);

	switch (res) {
	case HW_XFER_OK:
		break;
	case HW_XFER_NACK_ADDR:
		k32_err_set(err, st, "hw",
			    "bus %u addr 0x%02x: no ACK for the address; device absent, unpowered "
			    "or on another mux channel",
			    (unsigned)bus->index, addr);
		break;
	case HW_XFER_NACK_DATA:
		k32_err_set(err, st, "hw",
			    "bus %u addr 0x%02x: data byte not acknowledged; the device refused "
			    "the register or value",
			    (unsigned)bus->index, addr);
		break;
	case HW_XFER_TIMEOUT:
		k32_err_set(err, st, "hw",
			    "bus %u addr 0x%02x: transfer timed out after %u ms; check wiring and "
			    "pull-ups",
			    (unsigned)bus->index, addr, (unsigned)bus->cfg.xfer_timeout_ms);
		break;
	default:
		k32_err_set(err, st, "hw",
			    "bus %u addr 0x%02x: bus error (arbitration lost or lines stuck); the "
			    "transaction may be retried",
			    (unsigned)bus->index, addr);
		break;
	}
	return st;
}

static k32_status_t check_args(struct hw_bus *bus, uint32_t mux_channel, uint32_t addr,
			       const void *w, size_t wlen, const void *r, size_t rlen,
			       struct k32_err *err)
{
	if (addr > 0x7F)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bus %u: address 0x%x is not a 7-bit address",
				   (unsigned)bus->index, (unsigned)addr);
	if (bus->cfg.has_mux && addr == bus->cfg.mux_addr)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bus %u: 0x%02x is the multiplexer; drivers never address it",
				   (unsigned)bus->index, (unsigned)addr);
	if (wlen > K32_HW_I2C_MAX || rlen > K32_HW_I2C_MAX)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bus %u addr 0x%02x: %zu/%zu bytes, limit K32_HW_I2C_MAX is %d "
				   "per phase; split the transfer",
				   (unsigned)bus->index, (unsigned)addr, wlen, rlen,
				   K32_HW_I2C_MAX);
	if ((wlen && !w) || (rlen && !r))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bus %u addr 0x%02x: NULL buffer with a length",
				   (unsigned)bus->index, (unsigned)addr);
	if (mux_channel != HW_MUX_NONE && (!bus->cfg.has_mux || mux_channel > 7))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bus %u: mux channel %u invalid (%s)", (unsigned)bus->index,
				   (unsigned)mux_channel,
				   bus->cfg.has_mux ? "0..7" : "the bus has no multiplexer");
	return K32_OK;
}

k32_status_t hw_bus_xfer(struct hw_bus *bus, uint32_t mux_channel, uint32_t addr, const void *w,
			 size_t wlen, void *r, size_t rlen, struct k32_err *err)
{
	k32_status_t st = check_args(bus, mux_channel, addr, w, wlen, r, rlen, err);
	if (st != K32_OK)
		return st;
	st = bus_acquire(bus, err);
	if (st != K32_OK)
		return st;

	st = hw_mux_select(bus, mux_channel, err);
	if (st == K32_OK) {
		enum hw_xfer_result res = bus->ops->xfer(bus->ctx, (uint8_t)addr, w, wlen, r, rlen,
							 bus->cfg.xfer_timeout_ms);
		k32_plat()->mutex_lock(&bus->mu);
		bus->stats.xfers++;
		k32_plat()->mutex_unlock(&bus->mu);
		st = hw_bus_result(bus, res, (uint8_t)addr, err);
		if (st != K32_OK)
			bus->mux_cached = -1; /* hardware.md 4: forget after any error */
	}
	bus_release(bus);
	return st;
}

void hw_bus_get_stats(struct hw_bus *bus, struct hw_bus_stats *out)
{
	k32_plat()->mutex_lock(&bus->mu);
	*out = bus->stats;
	k32_plat()->mutex_unlock(&bus->mu);
}
