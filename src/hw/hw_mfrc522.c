/*
 * hw_mfrc522.c - a simulated M5Stack RFID 2 unit (MFRC522-compatible reader) with an
 * ISO 14443-3 type A card (hardware.md section 3).
 *
 * Access: the first written byte is the 6-bit register number; every further written byte
 * goes to that register and every read byte comes from it (FIFO pushes and pops).
 *
 * Reader: FIFO (64 bytes), CommandReg (Idle, CalcCRC, Transmit, Transceive, SoftReset),
 * ComIrqReg/DivIrqReg with the Set1/Set2 write rule, FIFOLevelReg flush, BitFramingReg
 * StartSend, ControlReg RxLastBits, CRC coprocessor with the ModeReg preset, the timer
 * (TModeReg TAuto, prescaler, reload) for "no answer". A Transceive answers at StartSend
 * when the antenna is on and the card answers: FIFO := answer, TxIRq|RxIRq. Without an
 * answer TxIRq is set at once and TimerIRq when the programmed timeout has passed in
 * simulated time (only if TAuto is set, as on the chip). CommandReg stays at Transceive.
 *
 * Card: IDLE answers REQA/WUPA, HALT only WUPA, with ATQA (-> READY1). READY answers the
 * anticollision of its cascade level and a SELECT with its exact UID bytes, BCC and a good
 * CRC_A (-> ACTIVE, or READY2 when SAK bit 2 says the UID continues). ACTIVE goes to HALT on
 * a valid HLTA. Any other frame in READY or ACTIVE is silent and drops the card to IDLE
 * (HALT if it was woken from HALT).
 *
 * Context: called under the simulator's mutex; never blocks.
 */
#include "hw/hw_int.h"

enum {
	REG_COMMAND = 0x01,
	REG_COMIRQ = 0x04,
	REG_DIVIRQ = 0x05,
	REG_ERROR = 0x06,
	REG_FIFODATA = 0x09,
	REG_FIFOLEVEL = 0x0A,
	REG_CONTROL = 0x0C,
	REG_BITFRAMING = 0x0D,
	REG_COLL = 0x0E,
	REG_MODE = 0x11,
	REG_TXMODE = 0x12,
	REG_RXMODE = 0x13,
	REG_TXCONTROL = 0x14,
	REG_CRC_H = 0x21,
	REG_CRC_L = 0x22,
	REG_TMODE = 0x2A,
	REG_TPRESCALER = 0x2B,
	REG_TRELOAD_H = 0x2C,
	REG_TRELOAD_L = 0x2D,
	REG_VERSION = 0x37,
};

enum {
	CMD_IDLE = 0x0,
	CMD_CALCCRC = 0x3,
	CMD_TRANSMIT = 0x4,
	CMD_RECEIVE = 0x8,
	CMD_TRANSCEIVE = 0xC,
	CMD_MFAUTHENT = 0xE,
	CMD_SOFTRESET = 0xF,
};

uint16_t hw_crc_a(const uint8_t *data, size_t len, uint16_t preset)
{
	uint16_t crc = preset;
	for (size_t i = 0; i < len; i++) {
		crc ^= data[i];
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408) : (uint16_t)(crc >> 1);
	}
	return crc;
}

static void regs_reset(struct hw_mfrc522 *d)
{
	uint8_t version = d->version;
	memset(d->regs, 0, sizeof(d->regs));
	d->regs[REG_COMMAND] = 0x20;
	d->regs[REG_COMIRQ] = 0x14;
	d->regs[REG_MODE] = 0x3F;
	d->regs[REG_TXCONTROL] = 0x80;
	d->regs[REG_CONTROL] = 0x10;
	d->regs[REG_BITFRAMING] = 0x00;
	d->regs[REG_COLL] = 0x80;
	d->regs[REG_VERSION] = version;
	d->fifo_len = 0;
	d->ptr = 0;
	d->timer_pending = false;
}

void hw_mfrc522_reset(struct hw_mfrc522 *d)
{
	memset(d, 0, sizeof(*d));
	d->version = 0x92;
	regs_reset(d);
}

/* ---- card ---------------------------------------------------------------------------------- */

static void card_drop(struct hw_mfrc522 *d)
{
	d->card = d->woke_from_halt ? HW_CARD_HALT : HW_CARD_IDLE;
}

/* The 4 UID bytes of cascade level lvl (1 or 2) as the card sends them. */
static void level_bytes(const struct hw_mfrc522 *d, int lvl, uint8_t out[4])
{
	if (d->uid_len == 4) {
		memcpy(out, d->uid, 4);
	} else if (lvl == 1) {
		out[0] = 0x88; /* cascade tag */
		memcpy(out + 1, d->uid, 3);
	} else {
		memcpy(out, d->uid + 3, 4);
	}
}

static size_t with_crc(uint8_t *out, size_t n)
{
	uint16_t crc = hw_crc_a(out, n, 0x6363);
	out[n] = (uint8_t)crc;
	out[n + 1] = (uint8_t)(crc >> 8);
	return n + 2;
}

static bool crc_ok(const uint8_t *f, size_t len)
{
	if (len < 3)
		return false;
	uint16_t crc = hw_crc_a(f, len - 2, 0x6363);
	return f[len - 2] == (uint8_t)crc && f[len - 1] == (uint8_t)(crc >> 8);
}

size_t hw_card_frame(struct hw_mfrc522 *d, const uint8_t *f, size_t len, uint8_t last_bits,
		     uint8_t *out, size_t cap)
{
	if (d->card == HW_CARD_ABSENT || cap < 5 || len == 0)
		return 0;
	bool short_frame = len == 1 && last_bits == 7;
	if (short_frame && (f[0] == 0x26 || f[0] == 0x52)) {
		bool wupa = f[0] == 0x52;
		if (d->card == HW_CARD_IDLE || (d->card == HW_CARD_HALT && wupa)) {
			d->woke_from_halt = d->card == HW_CARD_HALT;
			d->card = HW_CARD_READY1;
			out[0] = (uint8_t)d->atqa;
			out[1] = (uint8_t)(d->atqa >> 8);
			return 2;
		}
		if (d->card == HW_CARD_READY1 || d->card == HW_CARD_READY2 ||
		    d->card == HW_CARD_ACTIVE)
			card_drop(d);
		return 0;
	}
	if (d->card == HW_CARD_IDLE || d->card == HW_CARD_HALT)
		return 0;

	if (d->card == HW_CARD_READY1 || d->card == HW_CARD_READY2) {
		int lvl = d->card == HW_CARD_READY1 ? 1 : 2;
		uint8_t sel = lvl == 1 ? 0x93 : 0x95;
		uint8_t ub[4];
		level_bytes(d, lvl, ub);
		uint8_t bcc = (uint8_t)(ub[0] ^ ub[1] ^ ub[2] ^ ub[3]);
		if (last_bits == 0 && len == 2 && f[0] == sel && f[1] == 0x20) {
			memcpy(out, ub, 4);
			out[4] = bcc;
			return 5;
		}
		if (last_bits == 0 && len == 9 && f[0] == sel && f[1] == 0x70 &&
		    !memcmp(f + 2, ub, 4) && f[6] == bcc && crc_ok(f, 9)) {
			bool more = d->uid_len == 7 && lvl == 1;
			out[0] = more ? 0x04 : d->sak;
			d->card = more ? HW_CARD_READY2 : HW_CARD_ACTIVE;
			return with_crc(out, 1);
		}
		card_drop(d);
		return 0;
	}
	/* ACTIVE */
	if (last_bits == 0 && len == 4 && f[0] == 0x50 && f[1] == 0x00 && crc_ok(f, 4)) {
		d->card = HW_CARD_HALT;
		d->woke_from_halt = false;
		return 0;
	}
	card_drop(d);
	return 0;
}

/* ---- reader -------------------------------------------------------------------------------- */

static uint64_t timeout_us(const struct hw_mfrc522 *d)
{
	uint32_t presc = ((uint32_t)(d->regs[REG_TMODE] & 0x0F) << 8) | d->regs[REG_TPRESCALER];
	uint32_t reload = ((uint32_t)d->regs[REG_TRELOAD_H] << 8) | d->regs[REG_TRELOAD_L];
	/* ticks of (2 * presc + 1) / 13.56 MHz; one extra tick as the chip counts to zero */
	return ((uint64_t)(reload + 1) * (2u * presc + 1u) * 1000000u + 13559999u) / 13560000u;
}

static void transceive(struct hw_mfrc522 *d, uint64_t now_us)
{
	uint8_t frame[64], ans[16];
	size_t len = d->fifo_len;
	memcpy(frame, d->fifo, len);
	d->fifo_len = 0;
	d->regs[REG_ERROR] = 0;
	uint8_t last_bits = d->regs[REG_BITFRAMING] & 7;
	bool antenna = (d->regs[REG_TXCONTROL] & 3) != 0;
	size_t n = antenna ? hw_card_frame(d, frame, len, last_bits, ans, sizeof(ans)) : 0;
	if (n) {
		memcpy(d->fifo, ans, n);
		d->fifo_len = (uint32_t)n;
		d->regs[REG_CONTROL] = (uint8_t)(d->regs[REG_CONTROL] & ~7);
		d->regs[REG_COMIRQ] |= 0x60;
		return;
	}
	d->regs[REG_COMIRQ] |= 0x40; /* TxIRq */
	if (d->regs[REG_TMODE] & 0x80) {
		d->timer_pending = true;
		d->timer_us = now_us + timeout_us(d);
	}
}

static void command(struct hw_mfrc522 *d, uint8_t v, uint64_t now_us)
{
	uint8_t cmd = v & 0x0F;
	d->regs[REG_COMMAND] = (uint8_t)(v & 0x3F);
	switch (cmd) {
	case CMD_SOFTRESET:
		regs_reset(d);
		return;
	case CMD_CALCCRC: {
		static const uint16_t presets[4] = {0x0000, 0x6363, 0xA671, 0xFFFF};
		uint16_t crc = hw_crc_a(d->fifo, d->fifo_len, presets[d->regs[REG_MODE] & 3]);
		d->fifo_len = 0;
		d->regs[REG_CRC_L] = (uint8_t)crc;
		d->regs[REG_CRC_H] = (uint8_t)(crc >> 8);
		d->regs[REG_DIVIRQ] |= 0x04;
		return;
	}
	case CMD_TRANSMIT: {
		uint8_t ans[16];
		if (d->regs[REG_TXCONTROL] & 3)
			(void)hw_card_frame(d, d->fifo, d->fifo_len, d->regs[REG_BITFRAMING] & 7,
					    ans, sizeof(ans));
		d->fifo_len = 0;
		d->regs[REG_COMIRQ] |= 0x40;
		d->regs[REG_COMMAND] = (uint8_t)(d->regs[REG_COMMAND] & ~0x0F);
		d->regs[REG_COMIRQ] |= 0x10; /* IdleIRq */
		return;
	}
	case CMD_TRANSCEIVE:
		if (d->regs[REG_BITFRAMING] & 0x80)
			transceive(d, now_us);
		return;
	case CMD_MFAUTHENT:
		d->regs[REG_ERROR] |= 0x01; /* no MIFARE crypto in the simulator */
		d->regs[REG_COMIRQ] |= 0x02;
		d->regs[REG_COMMAND] = (uint8_t)(d->regs[REG_COMMAND] & ~0x0F);
		return;
	case CMD_IDLE:
		d->timer_pending = false;
		return;
	default:
		return;
	}
}

static void write_reg(struct hw_mfrc522 *d, uint8_t reg, uint8_t v, uint64_t now_us)
{
	switch (reg) {
	case REG_COMMAND:
		command(d, v, now_us);
		return;
	case REG_COMIRQ:
	case REG_DIVIRQ: {
		uint8_t mask = (uint8_t)(v & 0x7F);
		if (v & 0x80)
			d->regs[reg] |= mask;
		else
			d->regs[reg] &= (uint8_t)~mask;
		return;
	}
	case REG_ERROR:
	case REG_CRC_H:
	case REG_CRC_L:
	case REG_VERSION:
		return; /* read-only */
	case REG_FIFODATA:
		if (d->fifo_len < sizeof(d->fifo)) {
			d->fifo[d->fifo_len++] = v;
		} else {
			d->regs[REG_ERROR] |= 0x10; /* BufferOvfl */
			d->regs[REG_COMIRQ] |= 0x02;
		}
		return;
	case REG_FIFOLEVEL:
		if (v & 0x80) {
			d->fifo_len = 0;
			d->regs[REG_ERROR] &= (uint8_t)~0x10;
		}
		return;
	case REG_BITFRAMING:
		d->regs[reg] = v;
		if ((v & 0x80) && (d->regs[REG_COMMAND] & 0x0F) == CMD_TRANSCEIVE)
			transceive(d, now_us);
		return;
	default:
		d->regs[reg] = v;
		return;
	}
}

static uint8_t read_reg(struct hw_mfrc522 *d, uint8_t reg)
{
	switch (reg) {
	case REG_FIFODATA: {
		if (!d->fifo_len)
			return 0;
		uint8_t v = d->fifo[0];
		memmove(d->fifo, d->fifo + 1, --d->fifo_len);
		return v;
	}
	case REG_FIFOLEVEL:
		return (uint8_t)d->fifo_len;
	default:
		return d->regs[reg];
	}
}

enum hw_xfer_result hw_mfrc522_xfer(struct hw_mfrc522 *d, uint64_t now_us, const uint8_t *w,
				    size_t wlen, uint8_t *r, size_t rlen)
{
	if (d->timer_pending && now_us >= d->timer_us) {
		d->timer_pending = false;
		d->regs[REG_COMIRQ] |= 0x01; /* TimerIRq */
	}
	if (wlen) {
		if (w[0] > 0x3F)
			return HW_XFER_NACK_DATA;
		d->ptr = w[0];
		for (size_t i = 1; i < wlen; i++)
			write_reg(d, d->ptr, w[i], now_us);
	}
	for (size_t i = 0; i < rlen; i++)
		r[i] = read_reg(d, d->ptr);
	return HW_XFER_OK;
}
