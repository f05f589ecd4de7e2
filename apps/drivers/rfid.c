/*
 * rfid.c - driver pod for the M5Stack RFID 2 unit (MFRC522-compatible reader; hardware.md
 * section 3): polls five times a second and publishes the UID of the card present, or none.
 *
 * Each poll: WUPA (not REQA, so a card left on the reader answers every poll), anticollision
 * and select of cascade level 1 and, for 7-byte UIDs, level 2, then HLTA. CRC_A is computed in
 * Wasm (fewer bus transactions than the chip's coprocessor). The reader's timer is set to
 * 10 ms (400 ticks of 25 us) so a poll without a card stalls the interpreter task for about
 * 10 ms, within K32_SLEEP_MAX_MS steps. "Absent" is reported after two consecutive polls
 * without an ATQA, to ride out a single missed frame. Params: pollIntervalMs (default 200).
 */
#include "drv.h"

#define NOINLINE __attribute__((noinline))

enum {
	REG_COMMAND = 0x01,
	REG_COMIRQ = 0x04,
	REG_ERROR = 0x06,
	REG_FIFODATA = 0x09,
	REG_FIFOLEVEL = 0x0A,
	REG_BITFRAMING = 0x0D,
	REG_MODE = 0x11,
	REG_TXCONTROL = 0x14,
	REG_TXASK = 0x15,
	REG_TMODE = 0x2A,
	REG_TPRESCALER = 0x2B,
	REG_TRELOAD_H = 0x2C,
	REG_TRELOAD_L = 0x2D,
	REG_VERSION = 0x37,
};

struct card {
	uint8_t uid[7];
	uint8_t uid_len;
	uint8_t sak;
	uint16_t atqa;
};

static k32_device_info dev;
static uint32_t poll_ms;
static uint8_t misses, present;
static struct card last;

/* ---- maths (unit-tested natively against hardware.md's frames) ----------------------------- */

/* CRC_A: CRC-16 0x1021 processed LSB first (reflected 0x8408), preset 0x6363, no final XOR. */
static NOINLINE uint16_t crc_a(const uint8_t *d, uint32_t n)
{
	uint16_t crc = 0x6363;
	for (uint32_t i = 0; i < n; i++) {
		crc ^= d[i];
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408) : (uint16_t)(crc >> 1);
	}
	return crc;
}

/* Builds SELECT for cascade level sel (0x93/0x95) from an anticollision answer (4 + BCC). */
static NOINLINE void select_frame(uint8_t *f, uint8_t sel, const uint8_t *ac)
{
	f[0] = sel;
	f[1] = 0x70;
	for (int i = 0; i < 5; i++)
		f[2 + i] = ac[i];
	uint16_t crc = crc_a(f, 7);
	f[7] = (uint8_t)crc;
	f[8] = (uint8_t)(crc >> 8);
}

static int bcc_ok(const uint8_t *ac)
{
	return (uint8_t)(ac[0] ^ ac[1] ^ ac[2] ^ ac[3]) == ac[4];
}

/* SAK answer: 1 byte + CRC_A. */
static int sak_ok(const uint8_t *a, int32_t n)
{
	if (n != 3)
		return 0;
	uint16_t crc = crc_a(a, 1);
	return a[1] == (uint8_t)crc && a[2] == (uint8_t)(crc >> 8);
}

/* ---- reader I/O ------------------------------------------------------------------------------ */

/* One transaction with the reader (a failure's condition is reported by the node). */
static int32_t xfer(const uint8_t *w, uint32_t wlen, uint8_t *r, uint32_t rlen)
{
	return k32_i2c_write_read(dev.bus, dev.mux_channel, dev.addr, w, wlen, r, rlen);
}

static int32_t wreg(uint8_t reg, uint8_t v)
{
	const uint8_t w[2] = {reg, v};
	return xfer(w, 2, 0, 0);
}

static int32_t rreg(uint8_t reg, uint8_t *v)
{
	return xfer(&reg, 1, v, 1);
}

/*
 * One exchange: returns the answer length (> 0), 0 when the card did not answer (timer) or
 * a negative bus error. transmit_only: send and do not wait (HLTA).
 */
static NOINLINE int32_t transceive(const uint8_t *tx, uint32_t n, uint8_t bits, uint8_t *rx,
				   uint32_t cap, int transmit_only)
{
	uint8_t w[1 + 16];
	int32_t e;
	if ((e = wreg(REG_COMMAND, 0x00)) || (e = wreg(REG_COMIRQ, 0x7F)) ||
	    (e = wreg(REG_FIFOLEVEL, 0x80)))
		return e;
	w[0] = REG_FIFODATA;
	for (uint32_t i = 0; i < n; i++)
		w[1 + i] = tx[i];
	if ((e = xfer(w, n + 1, 0, 0)) || (e = wreg(REG_BITFRAMING, bits)))
		return e;
	if (transmit_only)
		return wreg(REG_COMMAND, 0x04);
	if ((e = wreg(REG_COMMAND, 0x0C)) || (e = wreg(REG_BITFRAMING, (uint8_t)(0x80 | bits))))
		return e;
	uint8_t irq = 0;
	for (int i = 0; i < 6; i++) {
		if ((e = rreg(REG_COMIRQ, &irq)))
			return e;
		if (irq & 0x30)
			break;
		if (irq & 0x01)
			return 0;
		k32_sleep_ms(K32_SLEEP_MAX_MS / 2);
	}
	if (!(irq & 0x30))
		return 0;
	uint8_t err = 0, level = 0;
	if ((e = rreg(REG_ERROR, &err)))
		return e;
	if (err & 0x1B)
		return 0; /* collision, parity, protocol, overflow: treat as no answer */
	if ((e = rreg(REG_FIFOLEVEL, &level)))
		return e;
	if (level > cap)
		level = (uint8_t)cap;
	uint8_t reg = REG_FIFODATA;
	if (level && (e = xfer(&reg, 1, rx, level)))
		return e;
	return level;
}

/* HLTA with its CRC_A (hardware.md's worked frame; rfid_test checks the CRC). */
static const uint8_t hlta_frame[4] = {0x50, 0x00, 0x57, 0xCD};

/* Reads the UID of the card in the field: 1 found, 0 none, < 0 bus error. */
static NOINLINE int32_t read_card(struct card *c)
{
	uint8_t a[8], f[9];
	static const uint8_t wupa = 0x52;
	int32_t n = transceive(&wupa, 1, 7, a, sizeof(a), 0);
	if (n <= 0)
		return n;
	if (n != 2)
		return 0;
	c->atqa = (uint16_t)(a[0] | a[1] << 8);
	c->uid_len = 0;
	for (int lvl = 0; lvl < 2; lvl++) {
		uint8_t sel = lvl ? 0x95 : 0x93;
		const uint8_t ac[2] = {sel, 0x20};
		n = transceive(ac, 2, 0, a, sizeof(a), 0);
		if (n <= 0)
			return n;
		if (n != 5 || !bcc_ok(a))
			return 0;
		uint8_t ans[5];
		for (int i = 0; i < 5; i++)
			ans[i] = a[i];
		select_frame(f, sel, ans);
		n = transceive(f, 9, 0, a, sizeof(a), 0);
		if (n < 0)
			return n;
		if (!sak_ok(a, n))
			return 0;
		int cascade = ans[0] == 0x88;
		for (int i = cascade ? 1 : 0; i < 4; i++)
			c->uid[c->uid_len++] = ans[i];
		c->sak = a[0];
		if (!(a[0] & 0x04))
			break;
	}
	n = transceive(hlta_frame, 4, 0, a, 0, 1);
	return n < 0 ? n : 1;
}

static NOINLINE void publish(const struct card *c)
{
	if (!c) {
		k32_reading_str(DRV_LIT("present"), DRV_LIT("false"));
		k32_reading_str(DRV_LIT("uid"), "", 0);
	} else {
		char hex[14], at[4];
		const uint8_t atb[2] = {(uint8_t)(c->atqa >> 8), (uint8_t)c->atqa};
		drv_hex(hex, c->uid, c->uid_len);
		drv_hex(at, atb, 2);
		k32_reading_str(DRV_LIT("present"), DRV_LIT("true"));
		k32_reading_str(DRV_LIT("uid"), hex, 2u * c->uid_len);
		k32_reading_f64(DRV_LIT("sak"), (double)c->sak, 0);
		k32_reading_str(DRV_LIT("atqa"), at, 4);
	}
	k32_publish(0);
}

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	uint8_t v = 0;
	int32_t e;
	if (k32_device_get(0, &dev, sizeof(dev)) != 0)
		return K32_ENOENT; /* bound to no Device: the kubelet says so */
	poll_ms = k32_device_param_u32(0, DRV_LIT("pollIntervalMs"), 200, 3600000);
	if ((e = wreg(REG_COMMAND, 0x0F)))
		goto fail;
	for (int i = 0; i < 6; i++) { /* wait for the oscillator: PowerDown reads 0 */
		if ((e = rreg(REG_COMMAND, &v)))
			goto fail;
		if (!(v & 0x10))
			break;
		k32_sleep_ms(K32_SLEEP_MAX_MS);
	}
	if ((e = rreg(REG_VERSION, &v)))
		goto fail;
	if (v == 0x00 || v == 0xFF) {
		k32_device_condition(0, 0, DRV_LIT("WrongChip"),
				     DRV_LIT("VersionReg (0x37) reads 0x00/0xFF: not an MFRC522; "
					     "check spec.address and spec.model"));
		return K32_ENODEV;
	}
	if ((e = wreg(REG_TMODE, 0x80)) || (e = wreg(REG_TPRESCALER, 0xA9)) ||
	    (e = wreg(REG_TRELOAD_H, 0x01)) || (e = wreg(REG_TRELOAD_L, 0x90)) ||
	    (e = wreg(REG_TXASK, 0x40)) || (e = wreg(REG_MODE, 0x3D)) ||
	    (e = rreg(REG_TXCONTROL, &v)) || (e = wreg(REG_TXCONTROL, (uint8_t)(v | 0x03))))
		goto fail;
	misses = 2;
	present = 0;
	return 0;
fail:
	return e; /* the node set NotFound/BusError */
}

static NOINLINE int same(const struct card *a, const struct card *b)
{
	if (a->uid_len != b->uid_len)
		return 0;
	for (int i = 0; i < a->uid_len; i++)
		if (a->uid[i] != b->uid[i])
			return 0;
	return 1;
}

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	struct card c;
	int32_t r = read_card(&c);
	if (r < 0)
		return (int32_t)poll_ms; /* the node reported the failure; retry next poll */
	if (r == 1) {
		misses = 0;
		if (!present || !same(&c, &last))
			k32_log(2, DRV_LIT("rfid: card present"));
		present = 1;
		last = c;
		publish(&c);
	} else if (misses < 2 && ++misses == 2) {
		present = 0;
		publish(0);
	} else if (!present) {
		publish(0);
	} else {
		publish(&last); /* one missed frame: keep the card */
	}
	return (int32_t)poll_ms;
}
