// Package oracle is the run-time JSON Schema validator (santhosh-tekuri/jsonschema, draft
// 2020-12) that the generated validators in gen are tested against. Tests import it; runlens
// itself validates through package contract and never links it.
package oracle
