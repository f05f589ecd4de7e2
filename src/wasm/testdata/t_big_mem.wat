;; Asks for 2 pages (128 KiB): over a 64 KiB limit, instantiation must name both numbers.
(module (memory 2))
