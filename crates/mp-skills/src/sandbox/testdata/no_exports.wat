;; Exports nothing: refused at load.
(module (memory 1))
