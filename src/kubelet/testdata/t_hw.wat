;; A minimal driver (hw host functions, import module "kube32"): each k32_tick reads the
;; BME688's chip id (register 0xD0) at bus 0, mux channel 2, address 0x77 and publishes
;; it as reading "chip_id". A pod not bound to that Device gets K32_EPERM (-2): it traps
;; (unreachable), so the test sees the refusal as the pod's trap message.
(module
  (import "kube32" "k32_i2c_write_read"
    (func $xfer (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "kube32" "k32_reading_f64" (func $reading (param i32 i32 f64 i32) (result i32)))
  (import "kube32" "k32_publish" (func $publish (param i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\d0")
  (data (i32.const 16) "chip_id")
  (func (export "k32_init") (result i32) (i32.const 0))
  (func (export "k32_tick") (result i32)
    (local $rc i32)
    (local.set $rc
      (call $xfer (i32.const 0) (i32.const 2) (i32.const 0x77) (i32.const 0) (i32.const 1)
                  (i32.const 8) (i32.const 1)))
    (if (i32.eq (local.get $rc) (i32.const -2)) (then unreachable))
    (drop (call $reading (i32.const 16) (i32.const 7)
                (f64.convert_i32_u (i32.load8_u (i32.const 8))) (i32.const 0)))
    (drop (call $publish (i32.const 0)))
    (i32.const 200)))
