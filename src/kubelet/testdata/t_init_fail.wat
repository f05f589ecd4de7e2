;; k32_init reports a failure.
(module
  (func (export "k32_init") (result i32) (i32.const -5)))
