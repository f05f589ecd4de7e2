/* Placeholders for the controllers not written yet (each file replaces its line). */
#include "ctrl/ctrl_int.h"
void ctrl_node_pass(struct ctrl *c)
{
	(void)c;
}
void ctrl_gc_pass(struct ctrl *c)
{
	(void)c;
}
void ctrl_ns_pass(struct ctrl *c)
{
	(void)c;
}
