/*
 * drv_fake.h - native test harness for the driver pods: the "kube32" imports a driver
 * declares (sdk/k32.h) implemented over the hw simulator, so the very source file that is
 * built to Wasm also runs natively under cmocka. The imports are renamed with macros before
 * sdk/k32.h is seen, because k32_log is also the node's own logger (src/base/k32_log.h).
 *
 * Include this first, then the driver's .c file.
 */
#ifndef DRV_FAKE_H
#define DRV_FAKE_H

#define k32_i2c_write_read   fake_i2c_write_read
#define k32_device_get	     fake_device_get
#define k32_device_param     fake_device_param
#define k32_device_param_u32 fake_device_param_u32
#define k32_time_us	     fake_time_us
#define k32_time_ms	     fake_time_ms
#define k32_sleep_ms	     fake_sleep_ms
#define k32_log		     fake_log
#define k32_reading_f64	     fake_reading_f64
#define k32_reading_str	     fake_reading_str
#define k32_publish	     fake_publish
#define k32_device_condition fake_device_condition
#define k32_init	     drv_init
#define k32_tick	     drv_tick

#include "k32.h"
#include "hw/hw.h"

struct drv_fake {
	struct hw_sim *sim;
	struct hw_bus bus;
	k32_device_info info; /* device 0 */
	const struct hw_param *params;
	uint32_t nparams;
	bool granted;	   /* false: every transfer is K32_EPERM */
	uint64_t clock_us; /* virtual time */
	struct hw_readings staged;
	struct hw_readings pub; /* the last published set */
	uint32_t publishes;
	uint32_t conditions;
	bool ready;
	char reason[32];
	uint32_t xfers;
	/* the node's own Ready condition (hw_pod_xfer_failed / hw_pod_published), as in hw_host */
	struct hw_grant grant;
	struct hw_host host;
	struct hw_pod pod;
};

extern struct drv_fake drv_fake;

/* A simulator with one bus (mux at 0x70) holding one device of `model` at (ch, addr). */
void drv_fake_setup(enum hw_model model, uint32_t ch, uint8_t addr, const struct hw_param *params,
		    uint32_t nparams);
void drv_fake_teardown(void);
/* The value of key in the last published set, or NULL. */
const char *drv_fake_reading(const char *key);
/* A raw transfer to the device (test set-up). */
k32_status_t drv_fake_xfer(const void *w, size_t wlen, void *r, size_t rlen);

#endif /* DRV_FAKE_H */
