;; Imports a function no node provides, under a name longer than an error message (300
;; bytes): the LinkError names it clipped around "..." and still ends with its advice.
(module
  (import "kube32" "a_host_function_whose_name_is_far_longer_than_any_status_message_keeps_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_end" (func $f))
  (func (export "k32_tick") (result i32) (call $f) (i32.const 0)))
