/*
 * hw_int.h - what the hw module's own files share: the mux select step of the bus, the
 * simulated device interface and the per-model state of the simulator.
 *
 * Simulated devices are driven by the simulator under its one mutex: a device's xfer is
 * called with the simulated time of the transaction and never blocks.
 */
#ifndef HW_INT_H
#define HW_INT_H

#include <string.h>

#include "base/k32_json.h"
#include "hw/hw.h"

/* hw_mux.c: with bus->mu NOT held but bus->busy owned by the caller: makes sure the mux
 * routes `channel` (HW_MUX_NONE: no change needed). Writes the control byte only on a cache
 * miss. On error the cache is forgotten. */
k32_status_t hw_mux_select(struct hw_bus *bus, uint32_t channel, struct k32_err *err);

/* hw_bus.c: maps a wire result to a status and counts it (bus->mu NOT held). */
k32_status_t hw_bus_result(struct hw_bus *bus, enum hw_xfer_result res, uint8_t addr,
			   struct k32_err *err);

/* ---- simulated devices -------------------------------------------------------------------- */

/* BME688 (hw_bme688.c) */
struct hw_bme688 {
	uint8_t regs[256];		/* the register file */
	uint8_t ptr;			/* register pointer for reads */
	double t_c, p_pa, h_pct, r_ohm; /* physical values */
	bool raw_mode;			/* report raw_* as they are */
	uint32_t raw_t, raw_p, raw_h, raw_g, raw_range;
	bool heater_fault;				/* heat_stab_r = 0 */
	bool measuring;					/* a forced measurement is under way */
	uint64_t done_us;				/* when it completes */
	uint32_t adc_t, adc_p, adc_h, adc_g, gas_range; /* last derived words */
};
void hw_bme688_reset(struct hw_bme688 *d, bool power_on);
enum hw_xfer_result hw_bme688_xfer(struct hw_bme688 *d, uint64_t now_us, const uint8_t *w,
				   size_t wlen, uint8_t *r, size_t rlen);
/* Integer compensation (hardware.md section 1), shared with the tests. */
struct hw_bme688_calib {
	uint16_t t1;
	int16_t t2;
	int8_t t3;
	uint16_t p1;
	int16_t p2;
	int8_t p3;
	int16_t p4, p5;
	int8_t p6, p7;
	int16_t p8, p9;
	uint8_t p10;
	uint16_t h1, h2;
	int8_t h3, h4, h5;
	uint8_t h6;
	int8_t h7;
	int8_t gh1;
	int16_t gh2;
	int8_t gh3;
	int8_t res_heat_val;
	uint8_t res_heat_range;
};
void hw_bme688_calib_parse(const uint8_t *regs, struct hw_bme688_calib *c);
int32_t hw_bme688_comp_t(const struct hw_bme688_calib *c, uint32_t adc_t, int32_t *out_t_fine);
uint32_t hw_bme688_comp_p(const struct hw_bme688_calib *c, uint32_t adc_p, int32_t t_fine);
uint32_t hw_bme688_comp_h(const struct hw_bme688_calib *c, uint32_t adc_h, int32_t t_fine);
uint32_t hw_bme688_comp_g(uint32_t adc_g, uint32_t range);
/* Derives the ADC words from the physical values (bisection over the integer formulas). */
void hw_bme688_invert(const struct hw_bme688 *d, uint32_t *adc_t, uint32_t *adc_p, uint32_t *adc_h,
		      uint32_t *adc_g, uint32_t *range);
k32_status_t hw_bme688_set(struct hw_bme688 *d, const char *key, double v, struct k32_err *err);
k32_status_t hw_bme688_get(struct hw_bme688 *d, const char *key, double *out);

/* Mini Scales (hw_miniscale.c) */
struct hw_miniscale {
	double load_g, zero, sens, noise; /* physical: true load, zero point, counts/g, sigma */
	bool button;			  /* pressed */
	uint8_t sel;			  /* selected value register */
	int32_t raw;			  /* last raw ADC (sign-flipped 24-bit) */
	int32_t offset;			  /* tare offset */
	bool have_offset;		  /* first sample taken */
	float gap;			  /* counts per gram */
	uint8_t rgb[3];
	uint8_t filter_on, window, alpha, polarity, i2c_addr;
	float lp[4];	/* low-pass stages */
	float hist[50]; /* trimmed-mean window */
	uint32_t nhist, hist_pos;
	float ema, weight;	 /* EMA state, filtered weight */
	uint64_t next_sample_us; /* next HX711 sample */
	uint32_t rng;		 /* noise generator state */
};
void hw_miniscale_reset(struct hw_miniscale *d);
enum hw_xfer_result hw_miniscale_xfer(struct hw_miniscale *d, uint64_t now_us, const uint8_t *w,
				      size_t wlen, uint8_t *r, size_t rlen);
k32_status_t hw_miniscale_set(struct hw_miniscale *d, uint64_t now_us, const char *key, double v,
			      struct k32_err *err);
k32_status_t hw_miniscale_get(struct hw_miniscale *d, uint64_t now_us, const char *key,
			      double *out);

/* MFRC522 reader and ISO 14443-3A card (hw_mfrc522.c) */
enum hw_card_state {
	HW_CARD_ABSENT = 0,
	HW_CARD_IDLE,
	HW_CARD_READY1,
	HW_CARD_READY2,
	HW_CARD_ACTIVE,
	HW_CARD_HALT,
};
struct hw_mfrc522 {
	uint8_t regs[64];
	uint8_t ptr; /* register selected by the last write */
	uint8_t fifo[64];
	uint32_t fifo_len;
	uint8_t version;    /* VersionReg value */
	bool timer_pending; /* a Transceive got no answer: TimerIRq at timer_us */
	uint64_t timer_us;
	/* the card */
	enum hw_card_state card;
	bool woke_from_halt;
	uint8_t uid[7];
	uint32_t uid_len;
	uint16_t atqa;
	uint8_t sak;
};
void hw_mfrc522_reset(struct hw_mfrc522 *d);
enum hw_xfer_result hw_mfrc522_xfer(struct hw_mfrc522 *d, uint64_t now_us, const uint8_t *w,
				    size_t wlen, uint8_t *r, size_t rlen);
/* CRC_A over data with the given preset (0x6363 for ISO 14443-3A). */
uint16_t hw_crc_a(const uint8_t *data, size_t len, uint16_t preset);
/* The card state machine alone: answers a frame; returns the answer length (0: silent). */
size_t hw_card_frame(struct hw_mfrc522 *d, const uint8_t *f, size_t len, uint8_t last_bits,
		     uint8_t *out, size_t cap);

#endif /* HW_INT_H */
