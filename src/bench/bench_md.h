/*
 * bench_md.h - the Markdown writer of the benchmark tools: table rows with escaped cells,
 * and numbers the way the benchmarks page prints them (thousands separators, fixed
 * decimals). Writes into caller buffers so it is testable without files.
 * Context: any; no allocation.
 */
#ifndef BENCH_MD_H
#define BENCH_MD_H

#include <stddef.h>

/* Writes "| c0 | c1 | ... |" (cells with '|' escaped as "\|", newlines as spaces) and, when
 * header is non-zero, a second line "| --- | --- |". Returns the length written, or 0 when
 * cap is too small (buf then holds ""). */
size_t bench_md_row(char *buf, size_t cap, const char *const *cells, size_t n, int header);

/* v with prec decimals and a ',' every three integer digits: 1234567.25, 1 -> "1,234,567.3".
 * Returns buf ("" if cap is too small). Non-finite values print as "n/a". */
char *bench_md_num(char *buf, size_t cap, double v, int prec);

#endif /* BENCH_MD_H */
