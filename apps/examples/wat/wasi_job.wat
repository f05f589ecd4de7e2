;; wasi_job.wat - a WASI command (a Job's module): _start writes two lines to stdout with
;; wasi_snapshot_preview1.fd_write (the kubelet sends fd 1 and 2 to the pod's log) and
;; returns, so the container ends with exit code 0 and the pod Succeeds. Any WASI toolchain
;; that emits only the functions the kubelet offers (fd_write, proc_exit, clock_time_get,
;; random_get, args_*, environ_*, fd_close, fd_seek, fd_fdstat_get) gives such a module.
;;
;;   wat2wasm --debug-names wasi_job.wat -o wasi_job.wasm
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; two iovecs at 0: {ptr 64, len 18}, {ptr 96, len 15}; bytes written go to 48
  (data (i32.const 0) "\40\00\00\00\12\00\00\00\60\00\00\00\0f\00\00\00")
  (data (i32.const 64) "wasi-job: working\n")  ;; 18 bytes
  (data (i32.const 96) "wasi-job: done\n")     ;; 15 bytes
  (func (export "_start")
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 48)))))
