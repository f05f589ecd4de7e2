;; Unit-test module for the compiler's folds (wrt_test.c test_compiler_folds): each export
;; exercises one rewrite whose result must equal plain Wasm semantics.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08")
  ;; i32.add of a constant folded into the address: the 32-bit add must still wrap
  (func (export "load_add") (param i32) (result i32)
    (i32.load8_u (i32.add (local.get 0) (i32.const 16))))
  ;; shl + add folded into a scaled address: the shift and add wrap at 32 bits
  (func (export "load_scaled") (param i32) (result i32)
    (i32.load8_u (i32.add (i32.shl (local.get 0) (i32.const 2)) (i32.const 1))))
  (func (export "store_scaled") (param i32 i32) (result i32)
    (i32.store8 (i32.add (i32.shl (local.get 0) (i32.const 2)) (i32.const 2)) (local.get 1))
    (i32.load8_u (i32.add (i32.shl (local.get 0) (i32.const 2)) (i32.const 2))))
  (func (export "store_imm") (param i32) (result i64)
    (i64.store (local.get 0) (i64.const -2))
    (i64.load (local.get 0)))
  ;; i32.eqz of a compare inverts it; a constant first operand mirrors it
  (func (export "not_lt") (param i32) (result i32)
    (i32.eqz (i32.lt_s (local.get 0) (i32.const 5))))
  (func (export "const_first") (param i32) (result i32)
    (i32.lt_u (i32.const 10) (local.get 0)))
  (func (export "fconst") (param f32) (result f32)
    (f32.mul (f32.const 2.5) (f32.add (local.get 0) (f32.const 1))))
  (func (export "dconst") (param f64) (result f64)
    (f64.sub (local.get 0) (f64.const 0.125)))
  ;; a pending local.get must see the value from before a later local.set
  (func (export "pending_get") (param i32) (result i32)
    (local.get 0)
    (local.set 0 (i32.const 100))
    (local.get 0)
    (i32.sub))
  ;; local.tee retargets the op, the stack keeps the value
  (func (export "tee") (param i32) (result i32) (local i32)
    (i32.add (local.tee 1 (i32.mul (local.get 0) (i32.const 3))) (local.get 1)))
  ;; while loops are rotated (if-headed and br_if-headed)
  (func (export "while_if") (param i32) (result i32) (local i32)
    (loop $l
      (if (i32.gt_s (local.get 0) (i32.const 0))
        (then
          (local.set 1 (i32.add (local.get 1) (local.get 0)))
          (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
          (br $l))))
    (local.get 1))
  (func (export "while_br_if") (param i32) (result i32) (local i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get 0)))
        (local.set 1 (i32.add (local.get 1) (i32.const 2)))
        (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get 1))
;; a while loop whose test reads a load (`while (p[i]) i++`): the back-edge repeats the
  ;; load and the test; a trap in the repeated load names the same place as the first
  (func (export "while_load") (param i32) (result i32) (local i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.tee 1 (i32.load8_u (local.get 0)))))
        (local.set 0 (i32.add (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get 0))
  (func (export "zscan") (param i32) (result i32)
    (block $done
      (loop $l
        (br_if $done (i32.ne (i32.load8_u offset=1 (local.get 0)) (i32.const 0)))
        (local.set 0 (i32.add (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get 0))
;; a loop whose first test (reading an and/add) jumps to the end of a block inside the
  ;; loop: the back-edge repeats it, inverted when that block falls through ...
  (func (export "while_inner") (param i32) (result i32) (local i32)
    (block $done
      (loop $l
        (block $odd
          (br_if $odd (i32.and (local.get 0) (i32.const 1)))
          (local.set 1 (i32.add (local.get 1) (i32.const 10))))
        (local.set 1 (i32.add (local.get 1) (i32.const 1)))
        (br_if $done (i32.eqz (local.get 0)))
        (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get 1))
  ;; ... and as it is when the block's end is only reached by that branch
  (func (export "while_inner2") (param i32) (result i32) (local i32)
    (block $done
      (loop $l
        (block $go
          (br_if $go (i32.add (local.get 0) (local.get 1)))
          (br $done))
        (local.set 1 (i32.add (local.get 1) (i32.const 2)))
        (local.set 0 (i32.sub (local.get 0) (i32.const 3)))
        (br_if $done (i32.lt_s (local.get 0) (i32.const -20)))
        (br $l)))
    (local.get 1))
;; a br to the end of its block as the block's last op is dropped (it is a fall-through)
  (func (export "br_next") (param i32) (result i32) (local i32)
    (block $b
      (local.set 1 (i32.const 5))
      (br_if $b (local.get 0))
      (local.set 1 (i32.const 7))
      (br $b))
    (local.get 1))
  ;; a branch carrying a constant or a local into a block result
  (func (export "br_value") (param i32) (result i32) (local i32)
    (local.set 1 (i32.const 7))
    (block $b (result i32)
      (br_if 0 (i32.const 40) (i32.eq (local.get 0) (i32.const 1)))
      (drop)
      (if (i32.eq (local.get 0) (i32.const 2)) (then (br $b (local.get 1))))
      (i32.const 99)))
  ;; select with constants
  (func (export "sel") (param i32) (result i32)
    (select (i32.const 3) (local.get 0) (i32.lt_u (local.get 0) (i32.const 10))))
  ;; rotation when the loop's leading if sits inside blocks and is closed at the back-edge
  (func (export "while_nested") (param i32) (result i32) (local i32)
    (block $exit
      (loop $l
        (block $b
          (if (local.get 0)
            (then
              (local.set 1 (i32.add (local.get 1) (local.get 0)))
              (local.set 0 (i32.sub (local.get 0) (i32.const 1))))
            (else (br $exit))))
        (local.set 1 (i32.add (local.get 1) (i32.const 100)))
        (br $l)))
    (local.get 1))
  (func (export "while_skip") (param i32) (result i32) (local i32)
    (block $exit
      (loop $l
        (if (i32.gt_s (local.get 0) (i32.const 0))
          (then (local.set 0 (i32.sub (local.get 0) (i32.const 1)))))
        (local.set 1 (i32.add (local.get 1) (i32.const 1)))
        (br_if $exit (i32.ge_u (local.get 1) (i32.const 10)))
        (br $l)))
    (i32.add (local.get 1) (i32.mul (local.get 0) (i32.const 1000))))
;; select on a compare: one fused op (slot and immediate forms, signed, inverted by eqz)
  (func (export "sel_max_s") (param i32 i32) (result i32)
    (select (local.get 0) (local.get 1) (i32.gt_s (local.get 0) (local.get 1))))
  (func (export "sel_lt_u_imm") (param i32 i32) (result i32)
    (select (local.get 1) (local.get 0) (i32.lt_u (local.get 0) (i32.const 100))))
  (func (export "sel_not_ge_u") (param i32 i32) (result i32)
    (select (local.get 0) (local.get 1) (i32.eqz (i32.ge_u (local.get 0) (local.get 1)))))
  ;; select writing one of its own compare operands
  (func (export "sel_self") (param i32 i32) (result i32)
    (local.set 0 (select (local.get 1) (local.get 0) (i32.lt_s (local.get 0) (local.get 1))))
    (local.get 0))
  ;; a zeroed declared local at entry (no code): a recursive call must still see zero
  (func $zr (export "zero_local") (param i32) (result i32) (local i32)
    (i32.const 0)
    (local.set 1)
    (if (local.get 0)
      (then (local.set 1 (call $zr (i32.sub (local.get 0) (i32.const 1))))))
    (i32.add (local.get 1) (local.get 0)))
  ;; the same set inside a loop is not at entry: it runs every iteration
  (func (export "zero_in_loop") (param i32) (result i32) (local i32 i32)
    (loop $l
      (local.set 1 (i32.const 0))
      (local.set 1 (i32.add (local.get 1) (local.get 0)))
      (local.set 2 (i32.add (local.get 2) (local.get 1)))
      (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
      (br_if $l (local.get 0)))
    (local.get 2))
;; loops stepping by a slot (j += i): the add joins the test (RADDBR)
  (func (export "step_while") (param i32 i32) (result i32) (local i32 i32)
    (block $exit
      (loop $l
        (br_if $exit (i32.ge_u (local.get 2) (local.get 1)))
        (local.set 3 (i32.add (local.get 3) (local.get 2)))
        (local.set 2 (i32.add (local.get 2) (local.get 0)))
        (br $l)))
    (local.get 3))
  (func (export "step_do") (param i32 i32) (result i32) (local i32 i32)
    (loop $l
      (local.set 3 (i32.add (local.get 3) (local.get 2)))
      (local.set 2 (i32.add (local.get 0) (local.get 2)))
      (br_if $l (i32.lt_s (local.get 2) (local.get 1))))
    (local.get 3))
  (func (export "step_double") (param i32) (result i32) (local i32)
    (loop $l
      (local.set 1 (i32.add (local.get 1) (i32.const 1)))
      (local.set 0 (i32.add (local.get 0) (local.get 0)))
      (br_if $l (i32.lt_u (local.get 0) (i32.const 100))))
    (i32.add (i32.mul (local.get 1) (i32.const 1000)) (local.get 0)))
  (func (export "step_down") (param i32 i32) (result i32) (local i32)
    (loop $l
      (if (local.get 0)
        (then
          (local.set 2 (i32.add (local.get 2) (i32.const 1)))
          (local.set 0 (i32.add (local.get 0) (local.get 1)))
          (br $l))))
    (local.get 2))
;; a rotated test on a byte loaded at p + 2 (LD8BR_NE_A at the back-edge)
  (func (export "find5") (param i32) (result i32)
    (block $done
      (loop $l
        (br_if $done (i32.eq (i32.load8_u (i32.add (local.get 0) (i32.const 2))) (i32.const 5)))
        (local.set 0 (i32.add (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get 0))
;; i32.sub from a constant (I32_RSUB_I), as in a CRC's `0 - (c & 1)`
  (func (export "rsub") (param i32) (result i32)
    (i32.sub (i32.const 10) (local.get 0)))
  (func (export "crc_mask") (param i32) (result i32)
    (i32.and (i32.sub (i32.const 0) (i32.and (local.get 0) (i32.const 1)))
             (i32.const 0xEDB88320)))
  ;; count-down loops: `x += k; br_if x` is one add-test-branch op
  (func (export "count_down") (param i32 i32) (result i32) (local i32)
    (loop $l
      (local.set 2 (i32.add (local.get 2) (local.get 0)))
      (br_if $l (local.tee 0 (i32.add (local.get 0) (local.get 1)))))
    (local.get 2))
  (func (export "count_down_k3") (param i32) (result i32) (local i32)
    (loop $l
      (block $b
        (br_if $b (local.get 0))
        (return (local.get 1)))
      (local.set 1 (i32.add (local.get 1) (i32.const 3)))
      (local.set 0 (i32.add (local.get 0) (i32.const -1)))
      (br $l))
    (unreachable))
;; a loop ending `local.set b (local.get t); br` (BR_SETL: move and jump)
  (func (export "fib_iter") (param i32) (result i32) (local i32 i32 i32)
    (local.set 2 (i32.const 1))
    (block $done
      (loop $l
        (local.set 3 (i32.add (local.get 1) (local.get 2)))
        (local.set 1 (local.get 2))
        (br_if $done (i32.eqz (local.tee 0 (i32.add (local.get 0) (i32.const -1)))))
        (local.set 2 (local.get 3))
        (br $l)))
    (local.get 1))
;; two increments in a row (`p++; q += 2`): one ADD2_I; a third one stays separate
  (func (export "two_incs") (param i32) (result i32) (local i32 i32 i32)
    (loop $l
      (local.set 1 (i32.add (local.get 1) (i32.const 1)))
      (local.set 2 (i32.add (local.get 2) (i32.const 2)))
      (local.set 3 (i32.add (local.get 3) (i32.const 3)))
      (br_if $l (i32.lt_u (local.get 1) (local.get 0))))
    (i32.add (i32.mul (local.get 2) (i32.const 1000)) (local.get 3)))
;; `i += k` with i the second operand of the loop test: operands and compare swapped
  (func (export "swap_brif") (param i32) (result i32) (local i32 i32)
    (loop $l
      (local.set 2 (i32.add (local.get 2) (local.get 1)))
      (local.set 1 (i32.add (local.get 1) (i32.const 1)))
      (br_if $l (i32.gt_u (local.get 0) (local.get 1))))
    (local.get 2))
  (func (export "swap_k3") (param i32) (result i32) (local i32 i32)
    (loop $l
      (block $b
        (br_if $b (i32.ne (local.get 0) (local.get 1)))
        (return (local.get 2)))
      (local.set 2 (i32.add (local.get 2) (local.get 1)))
      (local.set 1 (i32.add (local.get 1) (i32.const 1)))
      (br $l))
    (unreachable))
  (func (export "swap_k2") (param i32) (result i32) (local i32 i32)
    (block $exit
      (loop $l
        (br_if $exit (i32.le_s (local.get 0) (local.get 1)))
        (local.set 2 (i32.add (local.get 2) (local.get 1)))
        (local.set 1 (i32.add (local.get 1) (i32.const 1)))
        (br $l)))
    (local.get 2))
;; a byte load tested by br_if or compared with a constant in br_if / if: one op (LD8BR)
  (func (export "ld8_brif") (param i32) (result i32)
    (block $b (br_if $b (i32.load8_u (local.get 0))) (return (i32.const 0)))
    (i32.const 1))
  (func (export "ld8_eq") (param i32) (result i32)
    (block $b (br_if $b (i32.eq (i32.load8_u offset=2 (local.get 0)) (i32.const 5)))
      (return (i32.const 0)))
    (i32.const 1))
  (func (export "ld8_if_ne_a") (param i32) (result i32)
    (if (result i32) (i32.ne (i32.load8_u (i32.add (local.get 0) (i32.const 1))) (i32.const 2))
      (then (i32.const 7)) (else (i32.const 9))))
)
