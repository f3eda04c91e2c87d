package oracle

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator checks JSON instances against published (bundled, self-contained) schemas. Each
// schema is compiled the first time its key is used, never at start-up, so a server with many
// tools starts in milliseconds and pays only for the tools it is asked to run. A Validator is
// safe for concurrent use.
type Validator struct {
	mu       sync.Mutex
	compiled map[string]*compiledSchema
}

// compiledSchema is one lazily compiled schema; once guards the compilation so concurrent
// first calls compile it exactly once.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// NewValidator returns a Validator with nothing compiled yet.
func NewValidator() *Validator {
	return &Validator{compiled: make(map[string]*compiledSchema)}
}

// Validate validates instance (raw JSON) against schema (bundled JSON) identified by key; it
// returns every failing field (all leaves of the validator's error tree), sorted by pointer.
// A nil slice means the instance is valid. The error is reserved for a schema that does not
// compile or an instance that is not JSON: both are programmer failures, not bad arguments.
//
// The schema bytes for a key must not change over the Validator's life: the first schema seen
// for a key is the one compiled.
func (v *Validator) Validate(key string, schema []byte, instance []byte) ([]FieldError, error) {
	sch, err := v.schemaFor(key, schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return nil, fmt.Errorf("decode instance for %s: %w", key, err)
	}
	if err := sch.Validate(doc); err != nil {
		verr, ok := err.(*jsonschema.ValidationError)
		if !ok {
			return nil, fmt.Errorf("validate %s: %w", key, err)
		}
		return fieldErrors(verr), nil
	}
	return nil, nil
}

// schemaFor returns the compiled schema for key, compiling it on first use.
func (v *Validator) schemaFor(key string, schema []byte) (*jsonschema.Schema, error) {
	v.mu.Lock()
	c, ok := v.compiled[key]
	if !ok {
		c = &compiledSchema{}
		v.compiled[key] = c
	}
	v.mu.Unlock()
	c.once.Do(func() { c.schema, c.err = compile(key, schema) })
	return c.schema, c.err
}

// compile compiles one self-contained schema with the default draft pinned to 2020-12: the
// published schemas carry no $schema, and MCP says such schemas are 2020-12.
func compile(key string, schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("decode schema %s: %w", key, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:runlens:schema:" + key
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add schema %s: %w", key, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", key, err)
	}
	return sch, nil
}
