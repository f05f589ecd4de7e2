;; A hostile pod: its k32_tick sleeps 10 ms at a time and never returns (each host call
;; costs one unit of gas, so the budget alone would let it sleep for hours). Stopped by its
;; call deadline, or at once by a deletion.
(module
  (import "kube32" "k32_sleep_ms" (func $sleep (param i32) (result i32)))
  (func (export "k32_tick") (result i32)
    (loop $l
      (drop (call $sleep (i32.const 10)))
      (br $l))
    (i32.const 0)))
