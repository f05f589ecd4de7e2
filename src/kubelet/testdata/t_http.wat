;; HTTP only: echoes the request target; "/spin" loops forever (out of budget: 504),
;; "/trap" traps (500, and the pod restarts).
(module
  (import "kube32" "k32_http_path" (func $path (param i32 i32) (result i32)))
  (import "kube32" "k32_http_write" (func $write (param i32 i32) (result i32)))
  (import "kube32" "k32_http_header" (func $hdr (param i32 i32 i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 0) "Content-Type")
  (data (i32.const 16) "application/x-echo")
  (func (export "k32_http") (param $m i32) (param $plen i32) (param $blen i32) (result i32)
    (local $n i32)
    (local.set $n (call $path (i32.const 1024) (i32.const 512)))
    ;; "/spin": loop
    (if (i32.and (i32.eq (local.get $n) (i32.const 5))
                 (i32.eq (i32.load8_u (i32.const 1025)) (i32.const 115)))
      (then (loop $l (br $l))))
    ;; "/trap": out of bounds
    (if (i32.and (i32.eq (local.get $n) (i32.const 5))
                 (i32.eq (i32.load8_u (i32.const 1025)) (i32.const 116)))
      (then (drop (i32.load (i32.const 70000)))))
    (drop (call $hdr (i32.const 0) (i32.const 12) (i32.const 16) (i32.const 18)))
    (drop (call $write (i32.const 1024) (local.get $n)))
    (i32.const 200)))
