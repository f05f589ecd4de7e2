/*
 * hw_bus_test.c - the I2C bus: mux cache, status mapping, injected faults, argument checks,
 * the lock (timeout and mutual exclusion across threads), over a fake wire and the simulator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hw/hw_int.h"

/* ---- a fake wire that records transactions ---- */
struct fake {
	uint8_t addr[64];
	uint8_t first[64];
	size_t wlen[64];
	unsigned n;
	enum hw_xfer_result next; /* result of the next call */
	int in_flight;		  /* must never exceed 1 */
	int max_in_flight;
	struct k32_mutex mu;
	struct k32_cond cv;
	bool block; /* hold the wire until released */
	bool blocked;
};

static enum hw_xfer_result fake_xfer(void *ctx, uint8_t addr, const uint8_t *w, size_t wlen,
				     uint8_t *r, size_t rlen, uint32_t timeout_ms)
{
	struct fake *f = ctx;
	(void)timeout_ms;
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&f->mu);
	f->in_flight++;
	if (f->in_flight > f->max_in_flight)
		f->max_in_flight = f->in_flight;
	if (f->n < 64) {
		f->addr[f->n] = addr;
		f->first[f->n] = wlen ? w[0] : 0;
		f->wlen[f->n] = wlen;
	}
	f->n++;
	enum hw_xfer_result res = f->next;
	f->next = HW_XFER_OK;
	if (f->block) {
		f->blocked = true;
		p->cond_broadcast(&f->cv);
		while (f->block)
			p->cond_wait(&f->cv, &f->mu, K32_FOREVER);
	}
	f->in_flight--;
	p->mutex_unlock(&f->mu);
	for (size_t i = 0; i < rlen; i++)
		r[i] = (uint8_t)(0xA0 + i);
	return res;
}

static const struct hw_bus_backend_ops fake_ops = {.xfer = fake_xfer};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	k32_plat()->mutex_init(&f->mu);
	k32_plat()->cond_init(&f->cv);
}

static void fake_fini(struct fake *f)
{
	k32_plat()->cond_fini(&f->cv);
	k32_plat()->mutex_fini(&f->mu);
}

static void test_mux_cache(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f);
	struct hw_bus bus;
	struct hw_bus_config cfg = {.has_mux = true, .mux_addr = 0x70};
	struct k32_err err;
	assert_int_equal(hw_bus_init(&bus, 0, &fake_ops, &f, &cfg, &err), K32_OK);
	assert_int_equal(hw_bus_mux_reset(&bus, &err), K32_OK);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.addr[0], 0x70);
	assert_int_equal(f.first[0], 0x00);

	uint8_t w = 0xD0, r[2];
	/* channel 2 twice: one control write */
	assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, r, 2, &err), K32_OK);
	assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, r, 2, &err), K32_OK);
	assert_int_equal(f.n, 4);
	assert_int_equal(f.addr[1], 0x70);
	assert_int_equal(f.first[1], 0x04);
	assert_int_equal(f.wlen[1], 1);
	assert_int_equal(f.addr[2], 0x77);
	assert_int_equal(f.addr[3], 0x77);
	assert_int_equal(r[0], 0xA0);
	/* channel 5: one more control write */
	assert_int_equal(hw_bus_xfer(&bus, 5, 0x26, &w, 1, r, 1, &err), K32_OK);
	assert_int_equal(f.n, 6);
	assert_int_equal(f.first[4], 0x20);
	/* a device directly on the bus: no mux traffic */
	assert_int_equal(hw_bus_xfer(&bus, HW_MUX_NONE, 0x28, &w, 1, NULL, 0, &err), K32_OK);
	assert_int_equal(f.n, 7);
	/* an error forgets the cache: the next transfer re-sends the control byte */
	f.next = HW_XFER_NACK_DATA;
	assert_int_equal(hw_bus_xfer(&bus, 5, 0x26, &w, 1, r, 1, &err), K32_ERR_IO);
	assert_int_equal(f.n, 8);
	assert_int_equal(hw_bus_xfer(&bus, 5, 0x26, &w, 1, r, 1, &err), K32_OK);
	assert_int_equal(f.n, 10);
	assert_int_equal(f.addr[8], 0x70);
	assert_int_equal(f.first[8], 0x20);
	/* a failing mux write fails the transaction and is retried next time */
	f.next = HW_XFER_NACK_ADDR;
	assert_int_equal(hw_bus_xfer(&bus, 1, 0x26, &w, 1, r, 1, &err), K32_ERR_NOT_FOUND);
	assert_non_null(strstr(err.msg, "0x70"));
	assert_int_equal(f.n, 11);
	assert_int_equal(hw_bus_xfer(&bus, 1, 0x26, &w, 1, r, 1, &err), K32_OK);
	assert_int_equal(f.n, 13);

	struct hw_bus_stats st;
	hw_bus_get_stats(&bus, &st);
	assert_int_equal(st.mux_writes, 6);
	assert_int_equal(st.nack_data, 1);
	assert_int_equal(st.nack_addr, 1);
	hw_bus_fini(&bus);
	fake_fini(&f);
}

static void test_results(void **state)
{
	(void)state;
	static const struct {
		enum hw_xfer_result res;
		k32_status_t st;
		int32_t drv;
		const char *msg;
	} cases[] = {
	    {HW_XFER_OK, K32_OK, HW_OK, ""},
	    {HW_XFER_NACK_ADDR, K32_ERR_NOT_FOUND, HW_ENODEV, "no ACK for the address"},
	    {HW_XFER_NACK_DATA, K32_ERR_IO, HW_EIO, "data byte not acknowledged"},
	    {HW_XFER_TIMEOUT, K32_ERR_TIMED_OUT, HW_ETIMEDOUT, "timed out"},
	    {HW_XFER_BUS_ERROR, K32_ERR_IO, HW_EIO, "bus error"},
	};
	struct fake f;
	fake_init(&f);
	struct hw_bus bus;
	struct k32_err err;
	assert_int_equal(hw_bus_init(&bus, 1, &fake_ops, &f, NULL, &err), K32_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t w = 0;
		k32_err_clear(&err);
		f.next = cases[i].res;
		k32_status_t st = hw_bus_xfer(&bus, HW_MUX_NONE, 0x40, &w, 1, NULL, 0, &err);
		assert_int_equal(st, cases[i].st);
		assert_int_equal(hw_status_to_driver(st), cases[i].drv);
		assert_non_null(strstr(err.msg, cases[i].msg));
	}
	assert_int_equal(hw_status_to_driver(K32_ERR_ACCESS_DENIED), HW_EPERM);
	assert_int_equal(hw_status_to_driver(K32_ERR_INVALID_ARGS), HW_EINVAL);
	assert_int_equal(hw_status_to_driver(K32_ERR_BUFFER_TOO_SMALL), HW_ENOSPC);
	hw_bus_fini(&bus);
	fake_fini(&f);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f);
	struct hw_bus bus, nomux;
	struct hw_bus_config cfg = {.has_mux = true, .mux_addr = 0x70};
	struct k32_err err;
	uint8_t buf[K32_HW_I2C_MAX + 1] = {0};
	assert_int_equal(hw_bus_init(&bus, 0, &fake_ops, &f, &cfg, &err), K32_OK);
	assert_int_equal(hw_bus_init(&nomux, 1, &fake_ops, &f, NULL, &err), K32_OK);
	static const struct {
		int bus;
		uint32_t ch, addr;
		size_t wlen, rlen;
		bool null_w;
		const char *msg;
	} cases[] = {
	    {0, 0, 0x80, 1, 0, false, "7-bit"},
	    {0, 0, 0x70, 1, 0, false, "multiplexer"},
	    {0, 0, 0x26, K32_HW_I2C_MAX + 1, 0, false, "K32_HW_I2C_MAX"},
	    {0, 0, 0x26, 0, K32_HW_I2C_MAX + 1, false, "K32_HW_I2C_MAX"},
	    {0, 0, 0x26, 2, 0, true, "NULL buffer"},
	    {0, 8, 0x26, 1, 0, false, "0..7"},
	    {1, 0, 0x26, 1, 0, false, "no multiplexer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hw_bus *b = cases[i].bus ? &nomux : &bus;
		assert_int_equal(hw_bus_xfer(b, cases[i].ch, cases[i].addr,
					     cases[i].null_w ? NULL : buf, cases[i].wlen, buf,
					     cases[i].rlen, &err),
				 K32_ERR_INVALID_ARGS);
		assert_non_null(strstr(err.msg, cases[i].msg));
	}
	assert_int_equal(f.n, 0); /* nothing reached the wire */
	struct hw_bus bad;
	struct hw_bus_config badcfg = {.has_mux = true, .mux_addr = 0x60};
	assert_int_equal(hw_bus_init(&bad, 0, &fake_ops, &f, &badcfg, &err), K32_ERR_INVALID_ARGS);
	assert_int_equal(hw_bus_init(&bad, 0, NULL, &f, NULL, &err), K32_ERR_INVALID_ARGS);
	hw_bus_fini(&bus);
	hw_bus_fini(&nomux);
	fake_fini(&f);
}

/* ---- the lock ---- */
struct holder {
	struct hw_bus *bus;
	k32_status_t st;
	int loops;
};

static void hold_task(void *arg)
{
	struct holder *h = arg;
	uint8_t w = 1;
	for (int i = 0; i < h->loops; i++) {
		uint32_t ch = h->bus->cfg.has_mux ? (uint32_t)(i % 3) : HW_MUX_NONE;
		k32_status_t st = hw_bus_xfer(h->bus, ch, 0x26, &w, 1, NULL, 0, NULL);
		if (st != K32_OK)
			h->st = st;
	}
}

static void test_lock_timeout(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f);
	struct hw_bus bus;
	struct hw_bus_config cfg = {.lock_timeout_ms = 20};
	struct k32_err err;
	assert_int_equal(hw_bus_init(&bus, 0, &fake_ops, &f, &cfg, &err), K32_OK);
	f.block = true;
	struct holder h = {.bus = &bus, .loops = 1};
	struct k32_task *t;
	assert_int_equal(k32_plat()->task_create(&t, "hw-hold", hold_task, &h, 0, -1, &err),
			 K32_OK);
	k32_plat()->mutex_lock(&f.mu);
	int64_t deadline = k32_deadline_after(10 * 1000 * 1000);
	while (!f.blocked && (int64_t)k32_now_us() < deadline)
		k32_plat()->cond_wait(&f.cv, &f.mu, deadline);
	k32_plat()->mutex_unlock(&f.mu);
	assert_true(f.blocked); /* the holder reached the wire */
	uint8_t w = 0;
	assert_int_equal(hw_bus_xfer(&bus, HW_MUX_NONE, 0x26, &w, 1, NULL, 0, &err),
			 K32_ERR_TIMED_OUT);
	assert_non_null(strstr(err.msg, "lock still held"));
	assert_int_equal(hw_status_to_driver(err.status), HW_ETIMEDOUT);
	k32_plat()->mutex_lock(&f.mu);
	f.block = false;
	k32_plat()->cond_broadcast(&f.cv);
	k32_plat()->mutex_unlock(&f.mu);
	k32_plat()->task_join(t);
	assert_int_equal(h.st, K32_OK);
	struct hw_bus_stats st;
	hw_bus_get_stats(&bus, &st);
	assert_int_equal(st.lock_timeouts, 1);
	hw_bus_fini(&bus);
	fake_fini(&f);
}

static void test_lock_exclusion(void **state)
{
	(void)state;
	struct fake f;
	fake_init(&f);
	struct hw_bus bus;
	struct hw_bus_config cfg = {.has_mux = true, .mux_addr = 0x71, .lock_timeout_ms = 5000};
	struct k32_err err;
	assert_int_equal(hw_bus_init(&bus, 0, &fake_ops, &f, &cfg, &err), K32_OK);
	struct holder h[2] = {{.bus = &bus, .loops = 2000}, {.bus = &bus, .loops = 2000}};
	struct k32_task *t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(
		    k32_plat()->task_create(&t[i], "hw-x", hold_task, &h[i], 0, -1, &err), K32_OK);
	for (int i = 0; i < 2; i++)
		k32_plat()->task_join(t[i]);
	assert_int_equal(h[0].st, K32_OK);
	assert_int_equal(h[1].st, K32_OK);
	assert_int_equal(f.max_in_flight, 1);
	struct hw_bus_stats st;
	hw_bus_get_stats(&bus, &st);
	assert_int_equal(st.xfers, 4000);
	hw_bus_fini(&bus);
	fake_fini(&f);
}

/* ---- over the simulator: channel routing, NACK of hidden devices, injected faults ---- */
static uint64_t vclock;
static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
}

static void test_sim_routing(void **state)
{
	(void)state;
	static const struct hw_sim_bus_config buses[] = {{"n1", 0, true, 0x70}};
	static const struct hw_sim_dev_config devs[] = {
	    {"env", "n1", 0, 2, 0x77, HW_MODEL_BME688},
	    {"env2", "n1", 0, 3, 0x77, HW_MODEL_BME688},
	    {"tag", "n1", 0, HW_MUX_NONE, 0x28, HW_MODEL_MFRC522},
	};
	struct hw_sim_config cfg = {buses, 1, devs, 3, vnow, NULL};
	struct hw_sim *sim;
	struct k32_err err;
	assert_int_equal(hw_sim_new(k32_default_allocator(), &cfg, &sim, &err), K32_OK);
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	assert_int_equal(hw_sim_backend(sim, "n1", 0, &ops, &ctx), K32_OK);
	assert_int_equal(hw_sim_backend(sim, "n1", 1, &ops, &ctx), K32_ERR_NOT_FOUND);
	struct hw_bus bus;
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	assert_int_equal(hw_bus_init(&bus, 0, ops, ctx, &bc, &err), K32_OK);
	assert_int_equal(hw_bus_mux_reset(&bus, &err), K32_OK);

	uint8_t w = 0xD0, id = 0;
	/* directly on the bus: reachable whatever the mux says */
	uint8_t vw = 0x37, ver = 0;
	assert_int_equal(hw_bus_xfer(&bus, HW_MUX_NONE, 0x28, &vw, 1, &ver, 1, &err), K32_OK);
	assert_int_equal(ver, 0x92);
	assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, &id, 1, &err), K32_OK);
	assert_int_equal(id, 0x61);
	assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, &id, 1, &err), K32_OK);
	assert_int_equal(hw_sim_mux_writes(sim, "n1", 0), 2); /* reset + one select */
	/* channel 4 has nothing at 0x77 */
	assert_int_equal(hw_bus_xfer(&bus, 4, 0x77, &w, 1, &id, 1, &err), K32_ERR_NOT_FOUND);
	/* device removed: NACK; back: fine */
	assert_int_equal(hw_sim_set_value(sim, "env", "present", 0, &err), K32_OK);
	assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, &id, 1, &err), K32_ERR_NOT_FOUND);
	assert_int_equal(hw_sim_set_value(sim, "env", "present", 1, &err), K32_OK);
	assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, &id, 1, &err), K32_OK);
	/* injected faults, each mapped */
	static const struct {
		enum hw_xfer_result kind;
		k32_status_t st;
	} faults[] = {{HW_XFER_NACK_ADDR, K32_ERR_NOT_FOUND},
		      {HW_XFER_NACK_DATA, K32_ERR_IO},
		      {HW_XFER_TIMEOUT, K32_ERR_TIMED_OUT},
		      {HW_XFER_BUS_ERROR, K32_ERR_IO}};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(hw_sim_inject(sim, "n1", 0, 0x77, faults[i].kind, 1, &err),
				 K32_OK);
		assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, &id, 1, &err), faults[i].st);
		assert_int_equal(hw_bus_xfer(&bus, 2, 0x77, &w, 1, &id, 1, &err), K32_OK);
	}
	/* two enabled channels answering one address: bus error (written behind the host's back) */
	uint8_t both = 0x0C;
	assert_int_equal(ops->xfer(ctx, 0x70, &both, 1, NULL, 0, 10), HW_XFER_OK);
	assert_int_equal(ops->xfer(ctx, 0x77, &w, 1, &id, 1, 10), HW_XFER_BUS_ERROR);
	uint8_t ctl = 0;
	assert_int_equal(ops->xfer(ctx, 0x70, NULL, 0, &ctl, 1, 10), HW_XFER_OK);
	assert_int_equal(ctl, 0x0C);
	/* of several control bytes the last counts */
	uint8_t several[3] = {0x01, 0x02, 0x08};
	assert_int_equal(ops->xfer(ctx, 0x70, several, 3, &ctl, 1, 10), HW_XFER_OK);
	assert_int_equal(ctl, 0x08);
	hw_bus_fini(&bus);
	hw_sim_free(sim);
}

static void test_sim_config_errors(void **state)
{
	(void)state;
	static const struct hw_sim_bus_config buses[] = {{"n1", 0, true, 0x70},
							 {"n1", 1, false, 0}};
	static const struct {
		struct hw_sim_dev_config dev;
		k32_status_t st;
	} cases[] = {
	    {{"a", "n1", 5, HW_MUX_NONE, 0x26, HW_MODEL_MINISCALE}, K32_ERR_INVALID_ARGS},
	    {{"a", "n2", 0, HW_MUX_NONE, 0x26, HW_MODEL_MINISCALE}, K32_ERR_INVALID_ARGS},
	    {{"a", "n1", 1, 2, 0x26, HW_MODEL_MINISCALE}, K32_ERR_INVALID_ARGS},
	    {{"a", "n1", 0, 9, 0x26, HW_MODEL_MINISCALE}, K32_ERR_INVALID_ARGS},
	    {{"a", "n1", 0, 1, 0x80, HW_MODEL_MINISCALE}, K32_ERR_INVALID_ARGS},
	    {{"a", "n1", 0, 1, 0x70, HW_MODEL_MINISCALE}, K32_ERR_INVALID_ARGS},
	    {{"a", "n1", 0, 1, 0x26, HW_MODEL_MINISCALE}, K32_ERR_ALREADY_EXISTS}, /* clash */
	    {{"s", "n1", 0, 2, 0x26, HW_MODEL_MINISCALE}, K32_ERR_ALREADY_EXISTS}, /* name */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hw_sim_dev_config devs[2] = {{"s", "n1", 0, 1, 0x26, HW_MODEL_MINISCALE},
						    cases[i].dev};
		struct hw_sim_config cfg = {buses, 2, devs, 2, NULL, NULL};
		struct hw_sim *sim = (void *)1;
		struct k32_err err;
		assert_int_equal(hw_sim_new(k32_default_allocator(), &cfg, &sim, &err),
				 cases[i].st);
		assert_null(sim);
		assert_true(strlen(err.msg) > 10);
	}
	/* allocation failure is clean */
	struct k32_heap heap;
	k32_heap_init(&heap, 1u << 20);
	k32_heap_fail_nth(&heap, 1);
	struct k32_allocator a = k32_heap_allocator(&heap);
	struct hw_sim_config cfg = {buses, 2, NULL, 0, NULL, NULL};
	struct hw_sim *sim;
	struct k32_err err;
	assert_int_equal(hw_sim_new(&a, &cfg, &sim, &err), K32_ERR_NO_MEMORY);
}

/* ---- the simulator changed from a console thread while two tasks use the bus ---- */
struct sim_traffic {
	struct hw_bus *bus;
	struct hw_sim *sim;
	int loops;
	unsigned errors; /* statuses outside the expected set */
	unsigned ok;
};

static void bus_task(void *arg)
{
	struct sim_traffic *t = arg;
	for (int i = 0; i < t->loops; i++) {
		uint8_t reg = 0xD0, id = 0, w = 0x10, r[4];
		k32_status_t a = hw_bus_xfer(t->bus, 2, 0x77, &reg, 1, &id, 1, NULL);
		k32_status_t b = hw_bus_xfer(t->bus, 1, 0x26, &w, 1, r, 4, NULL);
		if ((a != K32_OK && a != K32_ERR_NOT_FOUND) || (a == K32_OK && id != 0x61) ||
		    (b != K32_OK && b != K32_ERR_NOT_FOUND))
			t->errors++;
		else
			t->ok++;
	}
}

static void console_task(void *arg)
{
	struct sim_traffic *t = arg;
	static const char *cmds[] = {"hw set scale weight_g 100",
				     "hw set env present 0",
				     "hw set env present 1",
				     "rfid place tag 5A3C910E",
				     "rfid remove tag",
				     "hw set env temperature_c 30",
				     "hw list",
				     "hw set scale present 0",
				     "hw set scale present 1"};
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 4096, "console");
	for (int i = 0; i < t->loops; i++) {
		k32_buf_reset(&out);
		if (hw_sim_command(t->sim, cmds[i % 9], &out, NULL) != K32_OK)
			t->errors++;
	}
	k32_buf_fini(&out);
}

static void test_sim_threads(void **state)
{
	(void)state;
	static const struct hw_sim_bus_config buses[] = {{"n1", 0, true, 0x70}};
	static const struct hw_sim_dev_config devs[] = {
	    {"env", "n1", 0, 2, 0x77, HW_MODEL_BME688},
	    {"scale", "n1", 0, 1, 0x26, HW_MODEL_MINISCALE},
	    {"tag", "n1", 0, 0, 0x28, HW_MODEL_MFRC522},
	};
	struct hw_sim_config cfg = {buses, 1, devs, 3, NULL, NULL};
	struct hw_sim *sim;
	struct k32_err err;
	assert_int_equal(hw_sim_new(k32_default_allocator(), &cfg, &sim, &err), K32_OK);
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	assert_int_equal(hw_sim_backend(sim, "n1", 0, &ops, &ctx), K32_OK);
	struct hw_bus bus;
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70, .lock_timeout_ms = 5000};
	assert_int_equal(hw_bus_init(&bus, 0, ops, ctx, &bc, &err), K32_OK);
	struct sim_traffic t[3] = {
	    {&bus, sim, 3000, 0, 0}, {&bus, sim, 3000, 0, 0}, {&bus, sim, 3000, 0, 0}};
	struct k32_task *task[3];
	assert_int_equal(k32_plat()->task_create(&task[0], "hw-a", bus_task, &t[0], 0, -1, &err),
			 K32_OK);
	assert_int_equal(k32_plat()->task_create(&task[1], "hw-b", bus_task, &t[1], 0, -1, &err),
			 K32_OK);
	assert_int_equal(
	    k32_plat()->task_create(&task[2], "hw-con", console_task, &t[2], 0, -1, &err), K32_OK);
	for (int i = 0; i < 3; i++)
		k32_plat()->task_join(task[i]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(t[i].errors, 0);
	assert_true(t[0].ok + t[1].ok == 6000);
	hw_bus_fini(&bus);
	hw_sim_free(sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mux_cache),	      cmocka_unit_test(test_results),
	    cmocka_unit_test(test_bad_args),	      cmocka_unit_test(test_lock_timeout),
	    cmocka_unit_test(test_lock_exclusion),    cmocka_unit_test(test_sim_routing),
	    cmocka_unit_test(test_sim_config_errors), cmocka_unit_test(test_sim_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
