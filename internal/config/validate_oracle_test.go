package config

// The configuration schema checked by the run-time JSON Schema library, compiled from the source
// files: the oracle the generated validator (validate.go) is compared with.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/runlens/runlens/internal/contract/oracle"
)

// oracleLoader is a Loader checking files with the run-time library against the source
// schemas (config.schema.json and the conventions.schema.json it references), compiled once.
var oracleLoader = sync.OnceValues(func() (*Loader, error) {
	data, err := os.ReadFile(filepath.Join("..", "..", "schemas", "config.schema.json"))
	if err != nil {
		return nil, err
	}
	conv, err := os.ReadFile(filepath.Join("..", "..", "schemas", "conventions.schema.json"))
	if err != nil {
		return nil, err
	}
	s, err := oracleCompile(data, conv)
	if err != nil {
		return nil, err
	}
	return &Loader{check: func(d *document, origin string) Errors { return oracleProblems(s, d, origin) }}, nil
})

// oracleCompile compiles the configuration schema once, pinned to draft 2020-12. refs are the
// schemas it references (conventions.schema.json), each registered under its own $id.
func oracleCompile(schemaJSON []byte, refs ...[]byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Nothing is fetched: a reference to a schema that was not handed over fails to compile.
	c.UseLoader(oracleNoLoader{})
	for i, raw := range append([][]byte{schemaJSON}, refs...) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("parse schema %d: %w", i, err)
		}
		id := SchemaID
		if i > 0 {
			m, _ := doc.(map[string]any)
			id, _ = m["$id"].(string)
			if id == "" {
				return nil, fmt.Errorf("referenced schema %d has no $id", i)
			}
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("add schema %s: %w", id, err)
		}
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		return nil, fmt.Errorf("compile config schema: %w", err)
	}
	return s, nil
}

// oracleNoLoader refuses every URL, so compiling never reads files or the network.
type oracleNoLoader struct{}

func (oracleNoLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s was not provided", url)
}

// oracleProblems validates the document and turns each failing leaf into an Error that names the
// key, what was expected and a fix drawn from the schema's own descriptions.
func oracleProblems(root *jsonschema.Schema, d *document, origin string) Errors {
	err := root.Validate(d.value)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return Errors{{Origin: origin, Problem: err.Error(), Fix: "check the file against " + SchemaID}}
	}
	var out Errors
	for _, leaf := range oracleLeaves(verr) {
		out = append(out, oracleProblemsOf(root, d, origin, leaf)...)
	}
	for _, e := range out {
		e.Line, e.Column = d.locate(e.Pointer)
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return out
}

func oracleLeaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, oracleLeaves(c)...)
	}
	return out
}

func oracleProblemsOf(root *jsonschema.Schema, d *document, origin string, leaf *jsonschema.ValidationError) Errors {
	loc := leaf.InstanceLocation
	at := pointer(loc)
	here := oracleSchemaAt(root, loc)
	switch k := leaf.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		known := oracleKnownKeys(here)
		var out Errors
		for _, p := range k.Properties {
			out = append(out, &Error{
				Origin:  origin,
				Pointer: at + "/" + escapePointer(p),
				Problem: "unknown key " + quoteValue(p),
				Fix:     unknownKeyFix(p, known),
			})
		}
		return out
	case *kind.Required:
		var out Errors
		for _, m := range k.Missing {
			fix := fmt.Sprintf("add %q", m)
			if desc := oracleDescribe(oraclePropertyOf(here, m)); desc != "" {
				fix += ": " + desc
			}
			out = append(out, &Error{
				Origin:  origin,
				Pointer: at + "/" + escapePointer(m),
				Problem: fmt.Sprintf("missing required key %q", m),
				Fix:     fix,
			})
		}
		return out
	case *kind.Type:
		return Errors{{
			Origin:  origin,
			Pointer: at,
			Problem: fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got),
			Fix:     oracleFixFrom(here, "give a "+strings.Join(k.Want, " or ")),
		}}
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprintf("%q", fmt.Sprint(w))
		}
		got := fmt.Sprint(k.Got)
		return Errors{{
			Origin:  origin,
			Pointer: at,
			Problem: fmt.Sprintf("expected one of %s, got %s", strings.Join(want, ", "), quoteValue(got)),
			Fix:     "use one of " + strings.Join(want, ", "),
		}}
	case *kind.Pattern:
		// The value is not echoed: a malformed source URL may carry a password.
		return Errors{{
			Origin:  origin,
			Pointer: at,
			Problem: "the value does not have the expected form",
			Fix:     oracleFixFrom(here, "match the pattern "+k.Want),
		}}
	}
	return Errors{{
		Origin:  origin,
		Pointer: at,
		Problem: oracle.Describe(leaf.ErrorKind),
		Fix:     oracleFixFrom(here, "see "+SchemaID),
	}}
}

// oracleSchemaAt follows an instance location through properties and items to the schema that
// describes it; nil when the location is outside the schema (an unknown key).
func oracleSchemaAt(s *jsonschema.Schema, loc []string) *jsonschema.Schema {
	for _, tok := range loc {
		s = oracleDeref(s)
		if s == nil {
			return nil
		}
		if p, ok := s.Properties[tok]; ok {
			s = p
			continue
		}
		s = s.Items2020
	}
	return s
}

func oracleDeref(s *jsonschema.Schema) *jsonschema.Schema {
	for s != nil && s.Ref != nil && s.Properties == nil && s.Items2020 == nil {
		s = s.Ref
	}
	return s
}

func oraclePropertyOf(s *jsonschema.Schema, name string) *jsonschema.Schema {
	if s = oracleDeref(s); s == nil {
		return nil
	}
	return s.Properties[name]
}

// describe is the first description along a $ref chain: the use site's, else the target's.
func oracleDescribe(s *jsonschema.Schema) string {
	for ; s != nil; s = s.Ref {
		if s.Description != "" {
			return s.Description
		}
	}
	return ""
}

func oracleFixFrom(s *jsonschema.Schema, fallback string) string {
	if d := oracleDescribe(s); d != "" {
		return d
	}
	return fallback
}

func oracleKnownKeys(s *jsonschema.Schema) []string {
	if s = oracleDeref(s); s == nil {
		return nil
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
