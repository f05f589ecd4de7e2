;; Asks for four pages of linear memory (256 KiB).
(module
  (memory 4)
  (func (export "k32_init") (result i32) (i32.const 0)))
