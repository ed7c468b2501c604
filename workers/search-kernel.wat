;; Dot-product kernel of the flat vector index (src/search/flat-index.ts).
;;
;; The module imports the index's shared memory: rows of `stride` bytes, each holding a vector of
;; d16*16 float32 (zero padded, 16-byte aligned) followed by metadata the kernel never reads.
;; Scores go to an output region, one float32 per row, which the worker turns into a top-k.
;;
;; Assembled at build time by scripts/build-steps/20-wasm.mjs (wabt, features simd + threads).
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; dot(q, r) over d16*16 floats: 4 accumulators of 4 lanes, 16 floats per iteration.
  (func $dot (param $q i32) (param $r i32) (param $d16 i32) (result f32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $end i32)
    (local.set $end (i32.add (local.get $q) (i32.shl (local.get $d16) (i32.const 6))))
    (loop $l
      (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load offset=0 (local.get $q)) (v128.load offset=0 (local.get $r)))))
      (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $q)) (v128.load offset=16 (local.get $r)))))
      (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load offset=32 (local.get $q)) (v128.load offset=32 (local.get $r)))))
      (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load offset=48 (local.get $q)) (v128.load offset=48 (local.get $r)))))
      (local.set $q (i32.add (local.get $q) (i32.const 64)))
      (local.set $r (i32.add (local.get $r) (i32.const 64)))
      (br_if $l (i32.lt_u (local.get $q) (local.get $end))))
    (call $hsum (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3)))))

  (func $hsum (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))

  ;; Four rows at once against one query: each query load feeds four rows, which halves the loads
  ;; per row (the single-row loop is load-bound). Two accumulators per row keep the add chains
  ;; short while staying within the 16 vector registers: 8 accumulators + 2 query vectors.
  (func $dot4 (param $q i32) (param $r0 i32) (param $stride i32) (param $d16 i32) (param $out i32)
    (local $r1 i32) (local $r2 i32) (local $r3 i32) (local $end i32) (local $q0 v128) (local $q1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local.set $r1 (i32.add (local.get $r0) (local.get $stride)))
    (local.set $r2 (i32.add (local.get $r1) (local.get $stride)))
    (local.set $r3 (i32.add (local.get $r2) (local.get $stride)))
    (local.set $end (i32.add (local.get $q) (i32.shl (local.get $d16) (i32.const 6))))
    (loop $l
      (local.set $q0 (v128.load offset=0 (local.get $q)))
      (local.set $q1 (v128.load offset=16 (local.get $q)))
      (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (local.get $q0) (v128.load offset=0 (local.get $r0)))))
      (local.set $b0 (f32x4.add (local.get $b0) (f32x4.mul (local.get $q1) (v128.load offset=16 (local.get $r0)))))
      (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (local.get $q0) (v128.load offset=0 (local.get $r1)))))
      (local.set $b1 (f32x4.add (local.get $b1) (f32x4.mul (local.get $q1) (v128.load offset=16 (local.get $r1)))))
      (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $q0) (v128.load offset=0 (local.get $r2)))))
      (local.set $b2 (f32x4.add (local.get $b2) (f32x4.mul (local.get $q1) (v128.load offset=16 (local.get $r2)))))
      (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (local.get $q0) (v128.load offset=0 (local.get $r3)))))
      (local.set $b3 (f32x4.add (local.get $b3) (f32x4.mul (local.get $q1) (v128.load offset=16 (local.get $r3)))))
      (local.set $q0 (v128.load offset=32 (local.get $q)))
      (local.set $q1 (v128.load offset=48 (local.get $q)))
      (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (local.get $q0) (v128.load offset=32 (local.get $r0)))))
      (local.set $b0 (f32x4.add (local.get $b0) (f32x4.mul (local.get $q1) (v128.load offset=48 (local.get $r0)))))
      (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (local.get $q0) (v128.load offset=32 (local.get $r1)))))
      (local.set $b1 (f32x4.add (local.get $b1) (f32x4.mul (local.get $q1) (v128.load offset=48 (local.get $r1)))))
      (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $q0) (v128.load offset=32 (local.get $r2)))))
      (local.set $b2 (f32x4.add (local.get $b2) (f32x4.mul (local.get $q1) (v128.load offset=48 (local.get $r2)))))
      (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (local.get $q0) (v128.load offset=32 (local.get $r3)))))
      (local.set $b3 (f32x4.add (local.get $b3) (f32x4.mul (local.get $q1) (v128.load offset=48 (local.get $r3)))))
      (local.set $q (i32.add (local.get $q) (i32.const 64)))
      (local.set $r0 (i32.add (local.get $r0) (i32.const 64)))
      (local.set $r1 (i32.add (local.get $r1) (i32.const 64)))
      (local.set $r2 (i32.add (local.get $r2) (i32.const 64)))
      (local.set $r3 (i32.add (local.get $r3) (i32.const 64)))
      (br_if $l (i32.lt_u (local.get $q) (local.get $end))))
    (f32.store offset=0 (local.get $out) (call $hsum (f32x4.add (local.get $a0) (local.get $b0))))
    (f32.store offset=4 (local.get $out) (call $hsum (f32x4.add (local.get $a1) (local.get $b1))))
    (f32.store offset=8 (local.get $out) (call $hsum (f32x4.add (local.get $a2) (local.get $b2))))
    (f32.store offset=12 (local.get $out) (call $hsum (f32x4.add (local.get $a3) (local.get $b3)))))

  ;; scan(q, rows, n, stride, d16, out): out[i] = dot(q, rows + i*stride) for i < n.
  (func (export "scan") (param $q i32) (param $rows i32) (param $n i32) (param $stride i32) (param $d16 i32) (param $out i32)
    (local $end i32) (local $end4 i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end4 (i32.add (local.get $out) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $quads
      (loop $l4
        (br_if $quads (i32.ge_u (local.get $out) (local.get $end4)))
        (call $dot4 (local.get $q) (local.get $rows) (local.get $stride) (local.get $d16) (local.get $out))
        (local.set $rows (i32.add (local.get $rows) (i32.shl (local.get $stride) (i32.const 2))))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (br $l4)))
    (block $tail
      (loop $l1
        (br_if $tail (i32.ge_u (local.get $out) (local.get $end)))
        (f32.store (local.get $out) (call $dot (local.get $q) (local.get $rows) (local.get $d16)))
        (local.set $rows (i32.add (local.get $rows) (local.get $stride)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $l1))))

  ;; gather(q, base, idx, n, stride, d16, out): out[i] = dot(q, base + idx[i]*stride) for i < n,
  ;; where idx is an array of n int32 row slots. Used for selective filters (a subset of rows).
  (func (export "gather") (param $q i32) (param $base i32) (param $idx i32) (param $n i32) (param $stride i32) (param $d16 i32) (param $out i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (f32.store (local.get $out)
          (call $dot (local.get $q) (i32.add (local.get $base) (i32.mul (i32.load (local.get $idx)) (local.get $stride))) (local.get $d16)))
        (local.set $idx (i32.add (local.get $idx) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $l))))
)
