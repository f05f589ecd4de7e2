/*
 * hw_sim_cmd.c - the simulator's command line (see hw_sim_command in hw.h): what a user types
 * at kube32-sim's console, or sends to its HTTP endpoint, to watch readings change.
 *
 * Context: any thread (the simulator locks itself). No allocation but the caller's k32_buf.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hw/hw_int.h"

#define MAX_ARGS 8

static const char usage[] =
    "usage: hw list | hw set <device> <key> <value> | hw get <device> <key> | "
    "hw raw <device> <adc_t> <adc_p> <adc_h> <adc_g> <range> | "
    "hw fault <node> <bus> <addr|any> <nack-addr|nack-data|timeout|bus-error|none> [count] | "
    "rfid place <device> <uid-hex> | rfid remove <device>";

/* Splits line into at most MAX_ARGS words in buf. */
static int split(const char *line, char *buf, size_t cap, char **argv)
{
	int argc = 0;
	snprintf(buf, cap, "%s", line);
	for (char *p = buf; *p && argc < MAX_ARGS;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			*p++ = 0;
		if (!*p)
			break;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
	}
	return argc;
}

static bool num_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	if (!*s || *end || v > 0xFFFFFFFFul)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static k32_status_t bad(struct k32_err *err, const char *what)
{
	return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw", "%s; %s", what, usage);
}

static k32_status_t cmd_list(struct hw_sim *sim, struct k32_buf *out, struct k32_err *err)
{
	k32_status_t st = k32_buf_printf(out, err, "%-12s %-14s %3s %3s %4s %-9s %s\n", "DEVICE",
					 "NODE", "BUS", "CH", "ADDR", "MODEL", "PRESENT");
	for (size_t i = 0; st == K32_OK && i < hw_sim_device_count(sim); i++) {
		struct hw_sim_dev_config c;
		bool present = false;
		hw_sim_device_info(sim, i, &c, &present);
		char ch[12];
		if (c.mux_channel == HW_MUX_NONE)
			snprintf(ch, sizeof(ch), "-");
		else
			snprintf(ch, sizeof(ch), "%u", (unsigned)c.mux_channel);
		st = k32_buf_printf(out, err, "%-12s %-14s %3u %3s 0x%02x %-9s %s\n", c.name,
				    c.node, (unsigned)c.bus, ch, c.addr, hw_model_name(c.model),
				    present ? "yes" : "no");
	}
	return st;
}

static k32_status_t cmd_fault(struct hw_sim *sim, int argc, char **argv, struct k32_buf *out,
			      struct k32_err *err)
{
	static const struct {
		const char *name;
		enum hw_xfer_result kind;
	} kinds[] = {{"nack-addr", HW_XFER_NACK_ADDR},
		     {"nack-data", HW_XFER_NACK_DATA},
		     {"timeout", HW_XFER_TIMEOUT},
		     {"bus-error", HW_XFER_BUS_ERROR},
		     {"none", HW_XFER_OK}};
	uint32_t bus, addr = 0xFF, count = 1;
	if (argc < 6 || argc > 7 || !num_u32(argv[3], &bus) ||
	    (strcmp(argv[4], "any") && (!num_u32(argv[4], &addr) || addr > 0x7F)) ||
	    (argc == 7 && !num_u32(argv[6], &count)))
		return bad(err, "hw fault: bad arguments");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].name, argv[5]))
			continue;
		k32_status_t st = hw_sim_inject(sim, argv[2], bus, (uint8_t)addr, kinds[i].kind,
						kinds[i].kind == HW_XFER_OK ? 0 : count, err);
		if (st == K32_OK)
			st = k32_buf_printf(out, err,
					    "ok: next %u transactions to %s on %s bus %u: %s\n",
					    (unsigned)(kinds[i].kind == HW_XFER_OK ? 0 : count),
					    argv[4], argv[2], (unsigned)bus, argv[5]);
		return st;
	}
	return bad(err, "hw fault: unknown kind");
}

static k32_status_t cmd_rfid(struct hw_sim *sim, int argc, char **argv, struct k32_buf *out,
			     struct k32_err *err)
{
	if (argc == 3 && !strcmp(argv[1], "remove")) {
		k32_status_t st = hw_sim_rfid_remove(sim, argv[2], err);
		return st ? st : k32_buf_printf(out, err, "ok: card removed from %s\n", argv[2]);
	}
	if (argc != 4 || strcmp(argv[1], "place"))
		return bad(err, "rfid: expected place or remove");
	uint8_t uid[7];
	size_t n = strlen(argv[3]);
	if (n != 8 && n != 14)
		return bad(err, "rfid place: the UID is 8 or 14 hex digits (4 or 7 bytes)");
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(argv[3][2 * i]), lo = hexval(argv[3][2 * i + 1]);
		if (hi < 0 || lo < 0)
			return bad(err, "rfid place: the UID must be hex digits");
		uid[i] = (uint8_t)(hi << 4 | lo);
	}
	k32_status_t st = hw_sim_rfid_place(sim, argv[2], uid, n / 2, 0, 0, err);
	return st ? st : k32_buf_printf(out, err, "ok: card %s on %s\n", argv[3], argv[2]);
}

k32_status_t hw_sim_command(struct hw_sim *sim, const char *line, struct k32_buf *out,
			    struct k32_err *err)
{
	char buf[256], *argv[MAX_ARGS];
	if (strlen(line) >= sizeof(buf))
		return bad(err, "command longer than 255 bytes");
	int argc = split(line, buf, sizeof(buf), argv);
	if (argc >= 2 && !strcmp(argv[0], "rfid"))
		return cmd_rfid(sim, argc, argv, out, err);
	if (argc < 2 || strcmp(argv[0], "hw"))
		return bad(err, "unknown command");
	if (!strcmp(argv[1], "list") && argc == 2)
		return cmd_list(sim, out, err);
	if (!strcmp(argv[1], "set") && argc == 5) {
		char *end;
		double v = strtod(argv[4], &end);
		if (!*argv[4] || *end)
			return bad(err, "hw set: the value must be a number");
		k32_status_t st = hw_sim_set_value(sim, argv[2], argv[3], v, err);
		return st ? st : k32_buf_printf(out, err, "ok: %s %s = %g\n", argv[2], argv[3], v);
	}
	if (!strcmp(argv[1], "get") && argc == 4) {
		double v;
		k32_status_t st = hw_sim_get_value(sim, argv[2], argv[3], &v, err);
		return st ? st : k32_buf_printf(out, err, "%s %s = %.6g\n", argv[2], argv[3], v);
	}
	if (!strcmp(argv[1], "raw") && argc == 8) {
		uint32_t w[5];
		for (int i = 0; i < 5; i++)
			if (!num_u32(argv[3 + i], &w[i]))
				return bad(err, "hw raw: five unsigned numbers");
		k32_status_t st =
		    hw_sim_bme688_set_raw(sim, argv[2], w[0], w[1], w[2], w[3], w[4], err);
		return st ? st : k32_buf_printf(out, err, "ok: %s raw words set\n", argv[2]);
	}
	if (!strcmp(argv[1], "fault"))
		return cmd_fault(sim, argc, argv, out, err);
	return bad(err, "hw: unknown subcommand or wrong number of arguments");
}
