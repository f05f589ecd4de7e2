;; k32_tick recurses without end through a function whose name (in the module's name section:
;; built with wat2wasm --debug-names) is longer than a trap message keeps: the trap names it
;; clipped around "...", and the kubelet's advice names the annotation that ran out.
(module
  (func $recurse_without_end_through_a_function_whose_name_is_longer_than_a_message_keeps
    (param i32) (result i32)
    (call $recurse_without_end_through_a_function_whose_name_is_longer_than_a_message_keeps
      (i32.add (local.get 0) (i32.const 1))))
  (func (export "k32_init") (result i32) (i32.const 0))
  (func (export "k32_tick") (result i32)
    (call $recurse_without_end_through_a_function_whose_name_is_longer_than_a_message_keeps
      (i32.const 0))))
