;; ticker.wat - a pod written by hand in the WebAssembly text format: the kube32 imports are
;; plain (import "kube32" NAME) functions, the exports are the pod ABI (sdk/k32_klet.h).
;; k32_init logs once, k32_tick logs "ticker: tick" every 500 ms and, at the fourth tick,
;; calls $explode, which traps: the pod restarts and the trap message names the function
;; ('explode', from the name section wat2wasm --debug-names writes).
;;
;;   wat2wasm --debug-names ticker.wat -o ticker.wasm
(module
  (import "kube32" "k32_log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "ticker: started")   ;; 15 bytes
  (data (i32.const 32) "ticker: tick")      ;; 12 bytes
  (global $ticks (mut i32) (i32.const 0))

  (func (export "k32_init") (result i32)
    (call $log (i32.const 2) (i32.const 16) (i32.const 15))
    (i32.const 0))

  (func $explode
    unreachable)

  (func (export "k32_tick") (result i32)
    (global.set $ticks (i32.add (global.get $ticks) (i32.const 1)))
    (call $log (i32.const 2) (i32.const 32) (i32.const 12))
    (if (i32.eq (global.get $ticks) (i32.const 4))
      (then (call $explode)))
    (i32.const 500)))
