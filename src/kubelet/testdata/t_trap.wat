;; k32_init succeeds, the first k32_tick traps (unreachable).
(module
  (func (export "k32_init") (result i32) (i32.const 0))
  (func $boom (export "k32_tick") (result i32) unreachable))
