/*
 * hw_sim.c - the simulated boards: which device sits on which node, bus, mux channel and
 * address; the bus backend that routes each transaction to them; fault injection; and the
 * run-time API that changes physical values.
 *
 * Routing a transaction on (node, bus) to addr: an armed fault for addr (or any address)
 * wins; the bus's PCA9548A answers at its own address (a write sets the control byte, the
 * last of several bytes counting; a read returns it); otherwise the devices at addr that are
 * present and reachable (directly on the bus, or behind an enabled mux channel) are counted:
 * none -> address NACK, two -> bus error (hardware.md 4), one -> the device's own xfer.
 *
 * One mutex guards the whole simulator, so console/HTTP threads may change values while
 * driver pods run. Time is the configured clock (virtual in tests).
 */
#include <stdio.h>

#include "hw/hw_int.h"

struct sim_bus {
	struct hw_sim *sim;
	struct hw_sim_bus_config cfg;
	uint8_t mux_ctl;     /* the mux control register */
	uint64_t mux_writes; /* transactions the mux received */
	uint8_t fault_addr;  /* armed fault: address (0xFF any) */
	enum hw_xfer_result fault_kind;
	uint32_t fault_count;
};

struct sim_dev {
	struct hw_sim_dev_config cfg;
	struct sim_bus *bus;
	bool present;
	union {
		struct hw_bme688 bme;
		struct hw_miniscale scale;
		struct hw_mfrc522 rfid;
	} u;
};

struct hw_sim {
	const struct k32_allocator *alloc;
	struct k32_mutex mu;
	hw_clock_fn now_fn;
	void *clock_ud;
	struct sim_bus buses[K32_HW_SIM_MAX_BUSES];
	size_t nbuses;
	struct sim_dev devs[K32_HW_SIM_MAX_DEVICES];
	size_t ndevs;
};

static uint64_t now_us(struct hw_sim *sim)
{
	return sim->now_fn ? sim->now_fn(sim->clock_ud) : k32_now_us();
}

const char *hw_model_name(enum hw_model model)
{
	switch (model) {
	case HW_MODEL_BME688:
		return "bme688";
	case HW_MODEL_MINISCALE:
		return "miniscale";
	case HW_MODEL_MFRC522:
		return "rfid";
	}
	return NULL;
}

k32_status_t hw_model_parse(const char *name, enum hw_model *out)
{
	if (!strcmp(name, "bme688"))
		*out = HW_MODEL_BME688;
	else if (!strcmp(name, "miniscale"))
		*out = HW_MODEL_MINISCALE;
	else if (!strcmp(name, "rfid") || !strcmp(name, "mfrc522"))
		*out = HW_MODEL_MFRC522;
	else
		return K32_ERR_NOT_FOUND;
	return K32_OK;
}

static struct sim_bus *find_bus(struct hw_sim *sim, const char *node, uint32_t bus)
{
	for (size_t i = 0; i < sim->nbuses; i++)
		if (sim->buses[i].cfg.bus == bus && !strcmp(sim->buses[i].cfg.node, node))
			return &sim->buses[i];
	return NULL;
}

static uint8_t dev_addr(const struct sim_dev *d)
{
	if (d->cfg.model == HW_MODEL_MINISCALE)
		return d->u.scale.i2c_addr; /* the unit's address is writable (0xFF) */
	return d->cfg.addr;
}

static enum hw_xfer_result sim_xfer(void *ctx, uint8_t addr, const uint8_t *w, size_t wlen,
				    uint8_t *r, size_t rlen, uint32_t timeout_ms)
{
	struct sim_bus *b = ctx;
	struct hw_sim *sim = b->sim;
	enum hw_xfer_result res = HW_XFER_NACK_ADDR;
	(void)timeout_ms;

	k32_mutex_lock(&sim->mu);
	uint64_t now = now_us(sim);
	if (b->fault_count && (b->fault_addr == 0xFF || b->fault_addr == addr)) {
		b->fault_count--;
		res = b->fault_kind;
		goto out;
	}
	if (b->cfg.has_mux && addr == b->cfg.mux_addr) {
		b->mux_writes += wlen ? 1 : 0;
		if (wlen)
			b->mux_ctl = w[wlen - 1];
		for (size_t i = 0; i < rlen; i++)
			r[i] = b->mux_ctl;
		res = HW_XFER_OK;
		goto out;
	}
	struct sim_dev *hit = NULL;
	unsigned hits = 0;
	for (size_t i = 0; i < sim->ndevs; i++) {
		struct sim_dev *d = &sim->devs[i];
		if (d->bus != b || !d->present || dev_addr(d) != addr)
			continue;
		if (d->cfg.mux_channel != HW_MUX_NONE && !(b->mux_ctl & (1u << d->cfg.mux_channel)))
			continue;
		hit = d;
		hits++;
	}
	if (hits > 1) {
		res = HW_XFER_BUS_ERROR;
		goto out;
	}
	if (!hit)
		goto out;
	switch (hit->cfg.model) {
	case HW_MODEL_BME688:
		res = hw_bme688_xfer(&hit->u.bme, now, w, wlen, r, rlen);
		break;
	case HW_MODEL_MINISCALE:
		res = hw_miniscale_xfer(&hit->u.scale, now, w, wlen, r, rlen);
		break;
	case HW_MODEL_MFRC522:
		res = hw_mfrc522_xfer(&hit->u.rfid, now, w, wlen, r, rlen);
		break;
	}
out:
	k32_mutex_unlock(&sim->mu);
	return res;
}

static const struct hw_bus_backend_ops sim_ops = {.xfer = sim_xfer};

k32_status_t hw_sim_new(const struct k32_allocator *alloc, const struct hw_sim_config *cfg,
			struct hw_sim **out, struct k32_err *err)
{
	*out = NULL;
	if (cfg->nbuses > K32_HW_SIM_MAX_BUSES || cfg->ndevs > K32_HW_SIM_MAX_DEVICES)
		return k32_err_set(
		    err, K32_ERR_OUT_OF_RANGE, "hw",
		    "simulator: %zu buses / %zu devices, limits K32_HW_SIM_MAX_BUSES "
		    "%d / K32_HW_SIM_MAX_DEVICES %d; raise them in k32_config.h",
		    cfg->nbuses, cfg->ndevs, K32_HW_SIM_MAX_BUSES, K32_HW_SIM_MAX_DEVICES);
	struct hw_sim *sim = k32_calloc(alloc, sizeof(*sim));
	if (!sim)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "hw",
				   "simulator: no memory for %zu bytes", sizeof(*sim));
	sim->alloc = alloc;
	sim->now_fn = cfg->now_us;
	sim->clock_ud = cfg->clock_ud;
	k32_status_t st = K32_OK;

	for (size_t i = 0; i < cfg->nbuses; i++) {
		const struct hw_sim_bus_config *bc = &cfg->buses[i];
		if (!bc->node || find_bus(sim, bc->node, bc->bus)) {
			st = k32_err_set(err, K32_ERR_ALREADY_EXISTS, "hw",
					 "simulator: bus %u of node %s given twice (or no node)",
					 (unsigned)bc->bus, bc->node ? bc->node : "(null)");
			goto out_free;
		}
		if (bc->has_mux && (bc->mux_addr < 0x70 || bc->mux_addr > 0x77)) {
			st = k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					 "simulator: mux address 0x%02x on %s bus %u is not "
					 "0x70..0x77",
					 bc->mux_addr, bc->node, (unsigned)bc->bus);
			goto out_free;
		}
		struct sim_bus *b = &sim->buses[sim->nbuses++];
		b->sim = sim;
		b->cfg = *bc;
	}
	for (size_t i = 0; i < cfg->ndevs; i++) {
		const struct hw_sim_dev_config *dc = &cfg->devs[i];
		struct sim_bus *b = dc->node ? find_bus(sim, dc->node, dc->bus) : NULL;
		if (!dc->name || !b) {
			st = k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					 "simulator: device %s on unknown bus %u of node %s; list "
					 "the bus in the config",
					 dc->name ? dc->name : "(null)", (unsigned)dc->bus,
					 dc->node ? dc->node : "(null)");
			goto out_free;
		}
		if (dc->addr > 0x7F ||
		    (dc->mux_channel != HW_MUX_NONE && (!b->cfg.has_mux || dc->mux_channel > 7)) ||
		    !hw_model_name(dc->model) || (b->cfg.has_mux && dc->addr == b->cfg.mux_addr)) {
			st =
			    k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					"simulator: device %s: address 0x%02x, channel %d or model "
					"invalid for its bus",
					dc->name, dc->addr, (int)dc->mux_channel);
			goto out_free;
		}
		for (size_t j = 0; j < sim->ndevs; j++) {
			const struct sim_dev *o = &sim->devs[j];
			if (!strcmp(o->cfg.name, dc->name) ||
			    (o->bus == b && o->cfg.addr == dc->addr &&
			     o->cfg.mux_channel == dc->mux_channel)) {
				st = k32_err_set(
				    err, K32_ERR_ALREADY_EXISTS, "hw",
				    "simulator: device %s clashes with %s (same name or "
				    "same bus, channel and address)",
				    dc->name, o->cfg.name);
				goto out_free;
			}
		}
		struct sim_dev *d = &sim->devs[sim->ndevs++];
		d->cfg = *dc;
		d->bus = b;
		d->present = true;
		switch (dc->model) {
		case HW_MODEL_BME688:
			hw_bme688_reset(&d->u.bme, true);
			break;
		case HW_MODEL_MINISCALE:
			hw_miniscale_reset(&d->u.scale);
			d->u.scale.i2c_addr = dc->addr;
			break;
		case HW_MODEL_MFRC522:
			hw_mfrc522_reset(&d->u.rfid);
			break;
		}
	}
	k32_plat()->mutex_init(&sim->mu);
	*out = sim;
	return K32_OK;

out_free:
	k32_free(alloc, sim, sizeof(*sim));
	return st;
}

void hw_sim_free(struct hw_sim *sim)
{
	if (!sim)
		return;
	k32_plat()->mutex_fini(&sim->mu);
	k32_free(sim->alloc, sim, sizeof(*sim));
}

k32_status_t hw_sim_backend(struct hw_sim *sim, const char *node, uint32_t bus,
			    const struct hw_bus_backend_ops **out_ops, void **out_ctx)
{
	struct sim_bus *b = find_bus(sim, node, bus);
	if (!b)
		return K32_ERR_NOT_FOUND;
	*out_ops = &sim_ops;
	*out_ctx = b;
	return K32_OK;
}

static struct sim_dev *find_dev(struct hw_sim *sim, const char *name, struct k32_err *err)
{
	for (size_t i = 0; i < sim->ndevs; i++)
		if (!strcmp(sim->devs[i].cfg.name, name))
			return &sim->devs[i];
	k32_err_set(err, K32_ERR_NOT_FOUND, "hw", "simulator: no device named %s", name);
	return NULL;
}

k32_status_t hw_sim_set_value(struct hw_sim *sim, const char *name, const char *key, double value,
			      struct k32_err *err)
{
	k32_status_t st = K32_ERR_NOT_FOUND;
	k32_mutex_lock(&sim->mu);
	struct sim_dev *d = find_dev(sim, name, err);
	if (!d)
		goto out;
	if (!strcmp(key, "present")) {
		d->present = value != 0;
		st = K32_OK;
		goto out;
	}
	switch (d->cfg.model) {
	case HW_MODEL_BME688:
		st = hw_bme688_set(&d->u.bme, key, value, err);
		break;
	case HW_MODEL_MINISCALE:
		st = hw_miniscale_set(&d->u.scale, now_us(sim), key, value, err);
		break;
	case HW_MODEL_MFRC522:
		st = K32_ERR_NOT_FOUND;
		break;
	}
	if (st == K32_ERR_NOT_FOUND) {
		/* the keys it does take, so a typo is fixed from the message (the key is the
		 * user's: at most 24 bytes of it are echoed, so the list always fits) */
		static const char *const keys[] = {
		    [HW_MODEL_BME688] = ("temperature_c pressure_pa humidity_pct gas_ohm "
					 "heater_fault present"),
		    [HW_MODEL_MINISCALE] = "weight_g zero_point sensitivity noise button present",
		    [HW_MODEL_MFRC522] = "present (cards: rfid place|remove)",
		};
		k32_err_set(err, st, "hw", "%s (%s) has no value \"%.24s%s\"; its values: %s", name,
			    hw_model_name(d->cfg.model), key, strlen(key) > 24 ? "..." : "",
			    keys[d->cfg.model]);
	}
out:
	k32_mutex_unlock(&sim->mu);
	return st;
}

k32_status_t hw_sim_get_value(struct hw_sim *sim, const char *name, const char *key, double *out,
			      struct k32_err *err)
{
	k32_status_t st = K32_ERR_NOT_FOUND;
	k32_mutex_lock(&sim->mu);
	struct sim_dev *d = find_dev(sim, name, err);
	if (!d)
		goto out;
	if (!strcmp(key, "present")) {
		*out = d->present;
		st = K32_OK;
		goto out;
	}
	switch (d->cfg.model) {
	case HW_MODEL_BME688:
		st = hw_bme688_get(&d->u.bme, key, out);
		break;
	case HW_MODEL_MINISCALE:
		st = hw_miniscale_get(&d->u.scale, now_us(sim), key, out);
		break;
	case HW_MODEL_MFRC522:
		if (!strcmp(key, "card_state")) {
			*out = d->u.rfid.card;
			st = K32_OK;
		}
		break;
	}
	if (st == K32_ERR_NOT_FOUND)
		k32_err_set(err, st, "hw", "simulator: %s has no value \"%s\"", name, key);
out:
	k32_mutex_unlock(&sim->mu);
	return st;
}

static struct sim_dev *find_model(struct hw_sim *sim, const char *name, enum hw_model model,
				  struct k32_err *err)
{
	struct sim_dev *d = find_dev(sim, name, err);
	if (d && d->cfg.model != model) {
		k32_err_set(err, K32_ERR_WRONG_TYPE, "hw", "simulator: %s is a %s, not a %s", name,
			    hw_model_name(d->cfg.model), hw_model_name(model));
		return NULL;
	}
	return d;
}

k32_status_t hw_sim_bme688_set_raw(struct hw_sim *sim, const char *name, uint32_t adc_t,
				   uint32_t adc_p, uint32_t adc_h, uint32_t adc_g,
				   uint32_t gas_range, struct k32_err *err)
{
	if (adc_t >= (1u << 20) || adc_p >= (1u << 20) || adc_h > 0xFFFF || adc_g > 1023 ||
	    gas_range > 15)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "bme688 raw words out of range (T,P < 2^20, H < 2^16, G < 1024, "
				   "range < 16)");
	k32_status_t st = K32_OK;
	k32_mutex_lock(&sim->mu);
	struct sim_dev *d = find_model(sim, name, HW_MODEL_BME688, err);
	if (!d) {
		st = err ? err->status : K32_ERR_NOT_FOUND;
		goto out;
	}
	d->u.bme.raw_mode = true;
	d->u.bme.raw_t = adc_t;
	d->u.bme.raw_p = adc_p;
	d->u.bme.raw_h = adc_h;
	d->u.bme.raw_g = adc_g;
	d->u.bme.raw_range = gas_range;
out:
	k32_mutex_unlock(&sim->mu);
	return st;
}

k32_status_t hw_sim_rfid_place(struct hw_sim *sim, const char *name, const uint8_t *uid,
			       size_t uid_len, uint16_t atqa, uint8_t sak, struct k32_err *err)
{
	if (uid_len != 4 && uid_len != 7)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "rfid card UID of %zu bytes; the simulator supports 4 or 7",
				   uid_len);
	if (uid_len == 4 && uid[0] == 0x88)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
				   "rfid 4-byte UID may not start with 0x88 (the cascade tag)");
	k32_status_t st = K32_OK;
	k32_mutex_lock(&sim->mu);
	struct sim_dev *d = find_model(sim, name, HW_MODEL_MFRC522, err);
	if (!d) {
		st = err ? err->status : K32_ERR_NOT_FOUND;
		goto out;
	}
	struct hw_mfrc522 *r = &d->u.rfid;
	memcpy(r->uid, uid, uid_len);
	r->uid_len = (uint32_t)uid_len;
	r->atqa = atqa ? atqa : (uid_len == 4 ? 0x0004 : 0x0044);
	r->sak = sak ? sak : (uid_len == 4 ? 0x08 : 0x00);
	r->card = HW_CARD_IDLE;
	r->woke_from_halt = false;
out:
	k32_mutex_unlock(&sim->mu);
	return st;
}

k32_status_t hw_sim_rfid_remove(struct hw_sim *sim, const char *name, struct k32_err *err)
{
	k32_status_t st = K32_OK;
	k32_mutex_lock(&sim->mu);
	struct sim_dev *d = find_model(sim, name, HW_MODEL_MFRC522, err);
	if (!d) {
		st = err ? err->status : K32_ERR_NOT_FOUND;
		goto out;
	}
	d->u.rfid.card = HW_CARD_ABSENT;
	d->u.rfid.uid_len = 0;
	d->u.rfid.woke_from_halt = false;
out:
	k32_mutex_unlock(&sim->mu);
	return st;
}

k32_status_t hw_sim_inject(struct hw_sim *sim, const char *node, uint32_t bus, uint8_t addr,
			   enum hw_xfer_result kind, uint32_t count, struct k32_err *err)
{
	struct sim_bus *b = find_bus(sim, node, bus);
	if (!b)
		return k32_err_set(err, K32_ERR_NOT_FOUND, "hw", "simulator: no bus %u on node %s",
				   (unsigned)bus, node);
	k32_mutex_lock(&sim->mu);
	b->fault_addr = addr;
	b->fault_kind = kind;
	b->fault_count = count;
	k32_mutex_unlock(&sim->mu);
	return K32_OK;
}

uint64_t hw_sim_mux_writes(struct hw_sim *sim, const char *node, uint32_t bus)
{
	struct sim_bus *b = find_bus(sim, node, bus);
	if (!b)
		return 0;
	k32_mutex_lock(&sim->mu);
	uint64_t n = b->mux_writes;
	k32_mutex_unlock(&sim->mu);
	return n;
}

size_t hw_sim_device_count(struct hw_sim *sim)
{
	return sim->ndevs;
}

bool hw_sim_device_info(struct hw_sim *sim, size_t i, struct hw_sim_dev_config *out,
			bool *out_present)
{
	if (i >= sim->ndevs)
		return false;
	k32_mutex_lock(&sim->mu);
	*out = sim->devs[i].cfg;
	if (sim->devs[i].cfg.model == HW_MODEL_MINISCALE)
		out->addr = sim->devs[i].u.scale.i2c_addr;
	if (out_present)
		*out_present = sim->devs[i].present;
	k32_mutex_unlock(&sim->mu);
	return true;
}
