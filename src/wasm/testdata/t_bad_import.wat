;; Imports host.add3 with the wrong signature: linking must fail with WRONG_TYPE.
(module (import "host" "add3" (func (param i64) (result i32))))
