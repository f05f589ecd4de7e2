;; Imports a host function the node has, with another signature (k32_time_ms takes nothing
;; and returns i64): a LinkError naming the import's type.
(module
  (import "kube32" "k32_time_ms" (func $t (param i32) (result i32)))
  (func (export "k32_tick") (result i32) (call $t (i32.const 0))))
