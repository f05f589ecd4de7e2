;; A k32_event without a result (sdk/k32_klet.h: "a void handler works too") and without
;; k32_tick: k32_init queues a user packet (key 3) on the event port; the handler logs
;; "void event 3" for it.
(module
  (import "kube32" "k32_log" (func $log (param i32 i32 i32)))
  (import "kube32" "k32_event_port" (func $evport (result i32)))
  (import "kube32" "kx_port_queue" (func $queue (param i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 0) "\03\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (data (i32.const 64) "void event 3")
  (func (export "k32_init") (result i32)
    (call $queue (call $evport) (i32.const 0)))
  (func (export "k32_event") (param $type i32) (param $key i64) (param $obs i32)
    (if (i64.eq (local.get $key) (i64.const 3))
      (then (call $log (i32.const 2) (i32.const 64) (i32.const 12))))))
