/* wrt_exec_switch.c - the interpreter loop of wrt_exec.c compiled as wrt_exec_switch. */
/* portable switch dispatch: the reference variant */
#include "wrt_exec.c"
