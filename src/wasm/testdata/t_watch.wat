;; Modules for the watch tests (wrt_test.c test_watch): loops that never end by themselves,
;; one with a host call in it.
(module
  (import "host" "tick" (func $tick (result i32)))
  (func (export "spin") (loop $l (br $l)))
  (func $down (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.const 0))
      (else (call $down (i32.sub (local.get 0) (i32.const 1))))))
  ;; a loop of calls: only function entries and the back-edge charge gas
  (func (export "calls") (loop $l (drop (call $down (i32.const 3))) (br $l)))
  ;; calls the host until it answers nonzero
  (func (export "host_loop") (result i32) (local i32)
    (loop $l
      (local.set 0 (call $tick))
      (br_if $l (i32.eqz (local.get 0))))
    (local.get 0)))
