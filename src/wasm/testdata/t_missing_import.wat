;; Imports a function no host provides: linking must fail with NOT_FOUND.
(module (import "host" "nope" (func)))
