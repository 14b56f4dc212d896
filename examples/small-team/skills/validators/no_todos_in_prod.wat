;; no_todos_in_prod: fails when a commit subject contains "TODO" (any letter case).
;;
;; ABI (docs/skills-abi.md): exports memory, alloc(len) -> ptr, call(ptr, len) -> u64.
;; The input is the {"pr": {...}} JSON document. The module scans it for every
;; `"subject":"` key and looks for t-o-d-o inside the string that follows (up to the
;; closing, unescaped quote). The answer is one of two constant JSON documents.
(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))

  (data (i32.const 0) "{\"passed\":true,\"failure_reason\":null}")
  (data (i32.const 64) "{\"passed\":false,\"failure_reason\":\"a commit subject contains TODO\"}")
  (data (i32.const 192) "\"subject\":\"")

  ;; Bump allocator: hands out `len` bytes, growing memory when needed.
  (func (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get $len)))
    (block $done
      (loop $grow
        (br_if $done
          (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
        (br $grow)))
    (local.get $p))

  ;; 1 when the 11 bytes at $at are `"subject":"`.
  (func $is_key (param $at i32) (result i32)
    (local $i i32)
    (block $no
      (loop $next
        (br_if $no
          (i32.ne (i32.load8_u (i32.add (local.get $at) (local.get $i)))
                  (i32.load8_u (i32.add (i32.const 192) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $i) (i32.const 11))))
      (return (i32.const 1)))
    (i32.const 0))

  ;; The byte at $at in lower case (ASCII letters only).
  (func $lower (param $at i32) (result i32)
    (i32.or (i32.load8_u (local.get $at)) (i32.const 0x20)))

  ;; 1 when the string starting at $at (just after the opening quote) contains "todo"
  ;; before its closing quote or $end.
  (func $has_todo (param $at i32) (param $end i32) (result i32)
    (local $c i32)
    (block $stop
      (loop $scan
        (br_if $stop (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $at)))
        (br_if $stop (i32.eq (local.get $c) (i32.const 0x22)))
        (if (i32.eq (local.get $c) (i32.const 0x5c))
          (then
            (local.set $at (i32.add (local.get $at) (i32.const 2)))
            (br $scan)))
        (if (i32.le_u (i32.add (local.get $at) (i32.const 4)) (local.get $end))
          (then
            (if (i32.and
                  (i32.and (i32.eq (call $lower (local.get $at)) (i32.const 0x74))
                           (i32.eq (call $lower (i32.add (local.get $at) (i32.const 1))) (i32.const 0x6f)))
                  (i32.and (i32.eq (call $lower (i32.add (local.get $at) (i32.const 2))) (i32.const 0x64))
                           (i32.eq (call $lower (i32.add (local.get $at) (i32.const 3))) (i32.const 0x6f))))
              (then (return (i32.const 1))))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $scan)))
    (i32.const 0))

  (func (export "call") (param $ptr i32) (param $len i32) (result i64)
    (local $at i32)
    (local $end i32)
    (local.set $at (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (block $clean
      (loop $scan
        (br_if $clean
          (i32.gt_u (i32.add (local.get $at) (i32.const 11)) (local.get $end)))
        (if (call $is_key (local.get $at))
          (then
            (if (call $has_todo (i32.add (local.get $at) (i32.const 11)) (local.get $end))
              (then
                ;; The failure answer: offset 64, 66 bytes.
                (return (i64.or (i64.shl (i64.const 64) (i64.const 32)) (i64.const 66)))))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $scan)))
    ;; The passing answer: offset 0, 37 bytes.
    (i64.const 37))
)
