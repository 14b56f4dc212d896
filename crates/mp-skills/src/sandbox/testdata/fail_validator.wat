;; A validator that always fails with a reason.
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
  (data (i32.const 0) "{\"passed\":false,\"failure_reason\":\"always fails\"}")
  ;; The answer sits at offset 0: (0 << 32) | 48.
  (func (export "call") (param $ptr i32) (param $len i32) (result i64)
    (i64.const 48))
)
