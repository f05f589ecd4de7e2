;; A hostile pod: its k32_tick waits forever on an empty kobj port of its own (deadline
;; KOBJ_TIME_INFINITE). Stopped by its call deadline, or at once by a deletion.
(module
  (import "kube32" "kx_port_create" (func $port_create (param i32 i32) (result i32)))
  (import "kube32" "kx_port_wait" (func $port_wait (param i32 i64 i32) (result i32)))
  (memory 1)
  (func (export "k32_tick") (result i32)
    (drop (call $port_create (i32.const 0) (i32.const 0)))
    (loop $l
      (drop (call $port_wait (i32.load (i32.const 0)) (i64.const 0x7fffffffffffffff)
                             (i32.const 64)))
      (br $l))
    (i32.const 0)))
