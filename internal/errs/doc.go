// Package errs is the one typed error of the packages whose errors are a stable code, a
// detail and a cause. Each such package names it for its own code type,
//
//	type Code string
//	type Error = errs.Error[Code]
//
// so its errors stay its own type (an *errs.Error[effector.Code] is never an
// *errs.Error[pubsub.Code]) while the methods are written once.
//
// Invariants:
//   - errors.Is(err, &Error{Code: c}) holds exactly when err's chain holds an *Error of the
//     same code type with code c; Detail and Err play no part.
//   - Unwrap returns the cause, so errors.Is and errors.As see through to it.
//   - Error() is "PACKAGE: CODE[: DETAIL][: CAUSE]", PACKAGE being the code type's package
//     path inside the module (effector, effector/store, model, pubsub).
package errs
