// Package gen holds the Go code generated from the runlens JSON Schemas: the typed inputs and
// outputs of every tool, the tool-name constants, the Flows interface the hand-written flows
// implement, the registry table, schema defaults and the published schemas. Every other file in
// this folder is generated; fix the generator or the schemas, never the output.
package gen

//go:generate go run ../internal/codegen/cmd/runlens-gen -schemas ../schemas -out . -bundled ../schemas/bundled -listed ../schemas/listed
