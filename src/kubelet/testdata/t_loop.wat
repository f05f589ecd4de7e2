;; k32_tick never returns: stopped by the execution budget.
(module
  (func (export "k32_tick") (result i32)
    (loop $l (br $l))
    (i32.const 0)))
