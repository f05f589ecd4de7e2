/* wrt_exec_count.c - the interpreter loop of wrt_exec.c compiled as wrt_exec_count. */
#define WRT_COUNT_OPS 1
#include "wrt_exec.c"
