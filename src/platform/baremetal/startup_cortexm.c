/*
 * startup_cortexm.c - reset and tick for a Cortex-M3/M4 board without an OS (QEMU's
 * mps2-an386 in `make test-mcu`): the vector table, the reset handler (zero .bss, set up
 * the C library's semihosting I/O, run constructors, call main, exit through
 * semihosting with main's status), SysTick at 1 kHz from the 25 MHz core clock, and the
 * fault handlers that report and stop instead of hanging.
 *
 * The image is loaded by the debugger or the emulator straight into RAM, so .data needs
 * no copy from flash (the linker script gives it the same load and run address).
 */
#include <stdio.h>
#include <stdlib.h>

#include "platform/baremetal/k32_baremetal.h"

#define CORE_CLOCK_HZ 25000000u /* MPS2 FPGA images: 25 MHz */
#define TICKS_PER_MS  (CORE_CLOCK_HZ / 1000u)

/* SysTick and the FPU's coprocessor access register (ARMv7-M system control space) */
#define SYST_CSR  (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR  (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR  (*(volatile uint32_t *)0xE000E018u)
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

extern uint32_t __bss_start__, __bss_end__, __stack_top__;
extern uint32_t __tbss_start__, __tbss_end__;
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);
int main(void);

void Reset_Handler(void);
void SysTick_Handler(void);
void Fault_Handler(void);
void Default_Handler(void);

void k32_baremetal_tick_start(void)
{
	SYST_RVR = TICKS_PER_MS - 1u;
	SYST_CVR = 0;
	SYST_CSR = 0x7u; /* core clock, interrupt, enable */
}

uint32_t k32_baremetal_subtick_us(void)
{
	uint32_t elapsed = (TICKS_PER_MS - 1u) - (SYST_CVR & 0xFFFFFFu);
	uint32_t us = elapsed / (CORE_CLOCK_HZ / 1000000u);
	return us > 999u ? 999u : us;
}

void SysTick_Handler(void)
{
	k32_baremetal_tick_ms++;
}

_Noreturn void k32_baremetal_panic(const char *why)
{
	printf("K32_PANIC %s\n", why);
	fflush(stdout);
	exit(3);
}

void Fault_Handler(void)
{
	k32_baremetal_panic("hard fault");
}

void Default_Handler(void)
{
	k32_baremetal_panic("unexpected interrupt");
}

/* The Arm EABI's thread pointer: the one TLS block (see cortexm.ld) minus its 8-byte TCB.
 * In assembly: the EABI lets it change r0 only, which C code cannot promise. */
__attribute__((naked)) void *__aeabi_read_tp(void);
__attribute__((naked)) void *__aeabi_read_tp(void)
{
	__asm volatile("ldr r0, =__tls_base__ - 8\n\tbx lr\n\t.ltorg");
}

/* -nostartfiles: no crti/crtn, so the C library's init/fini hooks are empty here. */
void _init(void);
void _fini(void);
void _init(void)
{
}
void _fini(void)
{
}

/* Zeroes the words from one linker symbol's address to another's (.bss, .tbss). */
static void zero_words(uintptr_t from, uintptr_t to)
{
	for (uintptr_t a = from; a < to; a += sizeof(uint32_t))
		*(uint32_t *)a = 0;
}

void Reset_Handler(void)
{
	zero_words((uintptr_t)&__bss_start__, (uintptr_t)&__bss_end__);
	zero_words((uintptr_t)&__tbss_start__, (uintptr_t)&__tbss_end__);
#if defined(__ARM_FP)
	SCB_CPACR |= 0xFu << 20; /* CP10, CP11: the FPU, before any float instruction */
	__asm volatile("dsb\n\tisb" ::: "memory");
#endif
	initialise_monitor_handles();
	__libc_init_array();
	k32_baremetal_tick_start();
	exit(main());
}

/* Cortex-M vector table: initial stack pointer, then the exception handlers. */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16 + 32])(void) = {
    (void (*)(void))(&__stack_top__),
    Reset_Handler,
    Default_Handler, /* NMI */
    Fault_Handler,   /* HardFault */
    Fault_Handler,   /* MemManage */
    Fault_Handler,   /* BusFault */
    Fault_Handler,   /* UsageFault */
    0,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMon */
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
    [16 ... 47] = Default_Handler,
};
