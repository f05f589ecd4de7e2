;; kobj_pod.wat - a test pod for the kx_* imports: an echo service, bad-pointer probes, handle
;; passing, and the loops the pod section of kube32-bench times. Memory map: 16..63 scratch
;; out-values, 1024 a 64-byte message, 2048 a read buffer, 4096.. the echo buffer.
(module
  (import "kube32" "kx_null" (func $null))
  (import "kube32" "kx_null8" (func $null8 (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "kube32" "kx_channel_write"
    (func $cw (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "kube32" "kx_channel_read"
    (func $cr (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "kube32" "kx_object_signal" (func $sig (param i32 i32 i32) (result i32)))
  (import "kube32" "kx_object_signal_peer" (func $sigp (param i32 i32 i32) (result i32)))
  (import "kube32" "kx_object_wait_one" (func $wait (param i32 i32 i64 i32) (result i32)))
  (import "kube32" "kx_handle_duplicate" (func $dup (param i32 i32 i32) (result i32)))
  (import "kube32" "kx_handle_close" (func $close (param i32) (result i32)))
  (import "kube32" "kx_event_create" (func $evc (param i32 i32) (result i32)))
  (import "kube32" "kx_port_create" (func $portc (param i32 i32) (result i32)))
  (import "kube32" "kx_port_wait" (func $pwait (param i32 i64 i32) (result i32)))
  (import "kube32" "kx_object_wait_async" (func $wasync (param i32 i32 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)

  ;; Reads one message on $h and answers "re:" + message. Returns the status.
  (func (export "echo") (param $h i32) (result i32)
    (local $st i32)
    (local.set $st (call $cr (local.get $h) (i32.const 0) (i32.const 4100) (i32.const 0)
                             (i32.const 1020) (i32.const 0) (i32.const 16) (i32.const 20)))
    (if (local.get $st) (then (return (local.get $st))))
    (i32.store8 (i32.const 4097) (i32.const 114))
    (i32.store8 (i32.const 4098) (i32.const 101))
    (i32.store8 (i32.const 4099) (i32.const 58))
    (call $cw (local.get $h) (i32.const 0) (i32.const 4097)
              (i32.add (i32.load (i32.const 16)) (i32.const 3)) (i32.const 0) (i32.const 0)))

  ;; The event loop of a pod: arm $h on $port, wait, then echo. Returns the status.
  (func (export "serve_once") (param $h i32) (param $port i32) (result i32)
    (local $st i32)
    (local.set $st (call $wasync (local.get $h) (local.get $port) (i64.const 7) (i32.const 1)
                                 (i32.const 0)))
    (if (local.get $st) (then (return (local.get $st))))
    (local.set $st (call $pwait (local.get $port) (i64.const 0x7fffffffffffffff) (i32.const 512)))
    (if (local.get $st) (then (return (local.get $st))))
    (call $cr (local.get $h) (i32.const 0) (i32.const 4100) (i32.const 0)
              (i32.const 1020) (i32.const 0) (i32.const 16) (i32.const 20))
    drop
    (call $cw (local.get $h) (i32.const 0) (i32.const 4100) (i32.load (i32.const 16))
              (i32.const 0) (i32.const 0)))

  ;; Pointers the node must refuse: past the end, wrapping, out-pointer past the end.
  (func (export "bad_write") (param $h i32) (result i32)
    (call $cw (local.get $h) (i32.const 0) (i32.const 65530) (i32.const 100)
              (i32.const 0) (i32.const 0)))
  (func (export "bad_handles") (param $h i32) (result i32)
    (call $cw (local.get $h) (i32.const 0) (i32.const 0) (i32.const 0)
              (i32.const 0xfffffffc) (i32.const 2)))
  (func (export "bad_out") (result i32)
    (call $evc (i32.const 0) (i32.const 65534)))

  ;; Creates an event; returns its handle (or a negative status).
  (func (export "make_event") (result i32)
    (local $st i32)
    (local.set $st (call $evc (i32.const 0) (i32.const 32)))
    (if (local.get $st) (then (return (local.get $st))))
    (i32.load (i32.const 32)))
  (func (export "make_port") (result i32)
    (local $st i32)
    (local.set $st (call $portc (i32.const 0) (i32.const 32)))
    (if (local.get $st) (then (return (local.get $st))))
    (i32.load (i32.const 32)))

  ;; Sends handle $ev on channel $ch (an empty message carrying one handle).
  (func (export "send_handle") (param $ch i32) (param $ev i32) (result i32)
    (i32.store (i32.const 40) (local.get $ev))
    (call $cw (local.get $ch) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 40)
              (i32.const 1)))

  (func (export "signal") (param $h i32) (param $set i32) (result i32)
    (call $sig (local.get $h) (i32.const 0) (local.get $set)))

  ;; Quota probes. Each repeats its call until it fails, returns how many succeeded and leaves
  ;; the failing status at 44 ("status44" reads it). Created handles go to 128.. (4 bytes each).
  (func (export "make_ports") (result i32)
    (local $n i32) (local $st i32)
    (block $done
      (loop $l
        (local.set $st (call $portc (i32.const 0)
                                  (i32.add (i32.const 128) (i32.shl (local.get $n) (i32.const 2)))))
        (br_if $done (local.get $st))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $n) (i32.const 200)))))
    (i32.store (i32.const 44) (local.get $st))
    (local.get $n))
  ;; Writes messages of $len bytes (from address 0) on $h until a write fails.
  (func (export "flood") (param $h i32) (param $len i32) (result i32)
    (local $n i32) (local $st i32)
    (block $done
      (loop $l
        (local.set $st (call $cw (local.get $h) (i32.const 0) (i32.const 0) (local.get $len)
                                 (i32.const 0) (i32.const 0)))
        (br_if $done (local.get $st))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $n) (i32.const 1000)))))
    (i32.store (i32.const 44) (local.get $st))
    (local.get $n))
  (func (export "status44") (result i32) (i32.load (i32.const 44)))

  ;; ---- ChannelMultiProcess (kube32-bench): two pods, each on its own thread ---------------
  ;; Writes $n messages of $len bytes (from address 0) on $h; a full queue (SHOULD_WAIT) waits
  ;; for WRITABLE, so back-pressure is part of the loop. Returns 0 or the failing status.
  (func (export "mp_write") (param $h i32) (param $len i32) (param $n i32) (result i32)
    (local $st i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $st (call $cw (local.get $h) (i32.const 0) (i32.const 0) (local.get $len)
                                 (i32.const 0) (i32.const 0)))
        (if (i32.eqz (local.get $st))
          (then (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $l)))
        (if (i32.ne (local.get $st) (i32.const -22)) (then (return (local.get $st))))
        (local.set $st (call $wait (local.get $h) (i32.const 6) (i64.const 0x7fffffffffffffff)
                                   (i32.const 0)))
        (if (local.get $st) (then (return (local.get $st))))
        (br $l)))
    (i32.const 0))
  ;; Reads $n messages on $h into address 0 (up to 64 KiB); waits for READABLE when empty.
  (func (export "mp_read") (param $h i32) (param $n i32) (result i32)
    (local $st i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $st (call $cr (local.get $h) (i32.const 0) (i32.const 0) (i32.const 0)
                                 (i32.const 65536) (i32.const 0) (i32.const 0) (i32.const 0)))
        (if (i32.eqz (local.get $st))
          (then (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $l)))
        (if (i32.ne (local.get $st) (i32.const -22)) (then (return (local.get $st))))
        (local.set $st (call $wait (local.get $h) (i32.const 5) (i64.const 0x7fffffffffffffff)
                                   (i32.const 0)))
        (if (local.get $st) (then (return (local.get $st))))
        (br $l)))
    (i32.const 0))
  ;; Reads $k messages that are already queued (no waiting): the timed part of the Read rows.
  (func (export "mp_read_batch") (param $h i32) (param $k i32) (result i32)
    (local $st i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $k)))
        (local.set $st (call $cr (local.get $h) (i32.const 0) (i32.const 0) (i32.const 0)
                                 (i32.const 65536) (i32.const 0) (i32.const 0) (i32.const 0)))
        (if (local.get $st) (then (return (local.get $st))))
        (local.set $k (i32.sub (local.get $k) (i32.const 1)))
        (br $l)))
    (i32.const 0))
  ;; The Read rows' helper pod: on USER_0 from the peer, fills the peer's queue with $len-byte
  ;; messages until it is full, then raises USER_1 on the peer; ends when the peer closes.
  (func (export "mp_fill") (param $h i32) (param $len i32) (result i32)
    (local $st i32)
    (loop $round
      ;; USER_0 (bit 24) or PEER_CLOSED (bit 2); observed goes to 48.
      (local.set $st (call $wait (local.get $h) (i32.const 0x01000004)
                                 (i64.const 0x7fffffffffffffff) (i32.const 48)))
      (if (local.get $st) (then (return (local.get $st))))
      (if (i32.and (i32.load (i32.const 48)) (i32.const 4)) (then (return (i32.const 0))))
      (drop (call $sig (local.get $h) (i32.const 0x01000000) (i32.const 0)))
      (block $full
        (loop $w
          (local.set $st (call $cw (local.get $h) (i32.const 0) (i32.const 0) (local.get $len)
                                   (i32.const 0) (i32.const 0)))
          (br_if $w (i32.eqz (local.get $st)))))
      (if (i32.ne (local.get $st) (i32.const -22)) (then (return (local.get $st))))
      (drop (call $sigp (local.get $h) (i32.const 0) (i32.const 0x02000000)))
      (br $round))
    (i32.const 0))

  ;; ---- benchmark loops: each runs its import $n times ($n >= 1) -------------------------
  (func (export "loop_null") (param $n i32)
    (loop $l
      (call $null)
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "loop_null8") (param $n i32) (result i32)
    (local $acc i32)
    (loop $l
      (local.set $acc (i32.add (local.get $acc)
        (call $null8 (i32.const 1) (i32.const 2) (i32.const 3) (i32.const 4)
                     (i32.const 5) (i32.const 6) (i32.const 7) (i32.const 8))))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $acc))
  (func (export "loop_signal") (param $h i32) (param $n i32)
    (loop $l
      (drop (call $sig (local.get $h) (i32.const 0) (i32.const 0)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "loop_wait") (param $h i32) (param $n i32)
    (loop $l
      (drop (call $wait (local.get $h) (i32.const 8) (i64.const 0) (i32.const 0)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "loop_write") (param $h i32) (param $n i32)
    (loop $l
      (drop (call $cw (local.get $h) (i32.const 0) (i32.const 1024) (i32.const 64)
                      (i32.const 0) (i32.const 0)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  ;; $nch channels whose handles are at $hp (4 bytes each), $per writes of 64 bytes on each:
  ;; the inner loop is loop_write's; one pod entry covers $nch x $per writes.
  (func (export "loop_write_chs") (param $hp i32) (param $nch i32) (param $per i32)
    (local $h i32) (local $k i32)
    (loop $c
      (local.set $h (i32.load (local.get $hp)))
      (local.set $k (local.get $per))
      (loop $l
        (drop (call $cw (local.get $h) (i32.const 0) (i32.const 1024) (i32.const 64)
                        (i32.const 0) (i32.const 0)))
        (br_if $l (local.tee $k (i32.sub (local.get $k) (i32.const 1)))))
      (local.set $hp (i32.add (local.get $hp) (i32.const 4)))
      (br_if $c (local.tee $nch (i32.sub (local.get $nch) (i32.const 1))))))
  (func (export "loop_read") (param $h i32) (param $n i32)
    (loop $l
      (drop (call $cr (local.get $h) (i32.const 0) (i32.const 2048) (i32.const 0)
                      (i32.const 64) (i32.const 0) (i32.const 0) (i32.const 0)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "loop_write_read") (param $h0 i32) (param $h1 i32) (param $n i32)
    (loop $l
      (drop (call $cw (local.get $h0) (i32.const 0) (i32.const 1024) (i32.const 64)
                      (i32.const 0) (i32.const 0)))
      (drop (call $cr (local.get $h1) (i32.const 0) (i32.const 2048) (i32.const 0)
                      (i32.const 64) (i32.const 0) (i32.const 0) (i32.const 0)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "loop_dup_close") (param $h i32) (param $n i32)
    (loop $l
      (drop (call $dup (local.get $h) (i32.const 0x80000000) (i32.const 48)))
      (drop (call $close (i32.load (i32.const 48))))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
)
