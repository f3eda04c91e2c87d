// Package contract is the small runtime that generated code and the server share: the version
// gate that keeps gen/ and its runtime in step, and the JSON Schema validator that checks tool
// arguments and answers against the published schemas.
package contract

// GenVersion1 is referenced by every generated file set (`const _ = contract.GenVersion1`).
// Bump it (GenVersion2, removing GenVersion1) when the generated code's expectations of this
// runtime change, so that code generated for an older runtime fails to compile instead of
// misbehaving at run time.
const GenVersion1 = true
