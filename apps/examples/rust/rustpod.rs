//! rustpod - a kube32 pod in Rust: `#![no_std]` for wasm32-unknown-unknown, built by Debian's
//! rustc (packages rustc and libstd-rust-dev-wasm32) without cargo. The kube32 imports are
//! declared in an `extern "C"` block of wasm import module "kube32"; the pod ABI's exports are
//! `#[no_mangle] extern "C"` functions (sdk/k32_klet.h lists both).
//!
//!   rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=s \
//!     -C panic=abort -C link-arg=--initial-memory=65536 -C link-arg=-zstack-size=8192 \
//!     -C link-arg=--stack-first rustpod.rs -o rustpod.wasm
//!
//! k32_init logs a line; k32_tick counts and logs "rustpod: tick N" every 3rd tick with
//! the number formatted here (no alloc, no core::fmt: it would add ~10 KiB).
#![no_std]

#[link(wasm_import_module = "kube32")]
extern "C" {
    fn k32_log(level: u32, msg: *const u8, len: u32);
}

const LOG_INFO: u32 = 2;

fn log(bytes: &[u8]) {
    // SAFETY: the kubelet reads len bytes at msg from this pod's linear memory and checks
    // both against the memory's bounds.
    unsafe { k32_log(LOG_INFO, bytes.as_ptr(), bytes.len() as u32) }
}

static mut TICKS: u32 = 0;

#[no_mangle]
pub extern "C" fn k32_init() -> i32 {
    log(b"rustpod: hello from Rust");
    0
}

#[no_mangle]
pub extern "C" fn k32_tick() -> i32 {
    // SAFETY: a pod's calls are never concurrent (the kubelet runs one at a time).
    let n = unsafe {
        TICKS += 1;
        TICKS
    };
    if n % 3 == 0 {
        let mut line = *b"rustpod: tick          ";
        let mut at = 14;
        let mut digits = [0u8; 10];
        let mut k = 0;
        let mut v = n;
        loop {
            digits[k] = b'0' + (v % 10) as u8;
            k += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while k > 0 {
            k -= 1;
            line[at] = digits[k];
            at += 1;
        }
        log(&line[..at]);
    }
    200 // ms to the next tick
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
