// Package codegen turns the runlens JSON Schemas into Go code and published schemas.
//
// It is a pure core with a thin shell. Load reads a schema tree from an fs.FS; Generate lints it,
// resolves every $ref, builds one Model (where every naming decision lives, as methods), and
// renders the gen/ package (go-jsonschema for the structs and enum constants, jennifer for the
// rest) and the bundled schemas that tools/list serves, all in memory. Only Apply and Check
// touch the disk: Apply writes through a temporary folder and swaps files in once everything
// rendered, removing outputs no schema produces any more; Check reports the difference instead.
//
// Every problem found in the schemas is reported with its place, for example
// `schemas/tools/get_run.input.json#/properties/maxDepth: maximum must be an integer`.
package codegen
