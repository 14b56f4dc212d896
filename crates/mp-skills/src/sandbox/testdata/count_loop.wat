;; Counts to 2,000,000 (more fuel than one slice), then passes.
(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))
  ;; Bump allocator: hands out `len` bytes, growing memory when needed.
  (func (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get $len)))
    (block $done
      (loop $grow
        (br_if $done (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
        (br $grow)))
    (local.get $p))
  (data (i32.const 0) "{\"passed\":true,\"failure_reason\":null}")
  (func (export "call") (param $ptr i32) (param $len i32) (result i64)
    (local $i i32)
    (loop $again
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 2000000))))
    (i64.const 37))
)
