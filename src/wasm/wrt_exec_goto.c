/* wrt_exec_goto.c - the interpreter loop of wrt_exec.c compiled as wrt_exec_goto. */
#define WRT_DISPATCH_GOTO 1
#include "wrt_exec.c"
