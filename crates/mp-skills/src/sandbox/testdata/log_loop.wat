;; Logs its input 100 times through mp.log, then passes: each host call costs fuel.
(module
  (import "mp" "log" (func $log (param i32 i32)))
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
      (call $log (local.get $ptr) (local.get $len))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 100))))
    (i64.const 37))
)
