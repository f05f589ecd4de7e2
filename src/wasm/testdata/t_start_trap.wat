;; The start function traps: instantiation returns TRAP.
(module (func $s unreachable) (start $s))
