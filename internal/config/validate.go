package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaID is the $id of the configuration schema, which runlens.json files name in "$schema".
const SchemaID = "https://runlens.dev/schemas/config.schema.json"

var printer = message.NewPrinter(language.English)

// compileSchema compiles the configuration schema once, pinned to draft 2020-12. refs are the
// schemas it references (conventions.schema.json), each registered under its own $id.
func compileSchema(schemaJSON []byte, refs ...[]byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Nothing is fetched: a reference to a schema that was not handed over fails to compile.
	c.UseLoader(noLoader{})
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

// noLoader refuses every URL, so compiling never reads files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s was not provided", url)
}

// schemaProblems validates the document and turns each failing leaf into an Error that names the
// key, what was expected and a fix drawn from the schema's own descriptions.
func schemaProblems(root *jsonschema.Schema, d *document, origin string) Errors {
	err := root.Validate(d.value)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return Errors{{Origin: origin, Problem: err.Error(), Fix: "check the file against " + SchemaID}}
	}
	var out Errors
	for _, leaf := range leaves(verr) {
		out = append(out, problemsOf(root, d, origin, leaf)...)
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

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func problemsOf(root *jsonschema.Schema, d *document, origin string, leaf *jsonschema.ValidationError) Errors {
	loc := leaf.InstanceLocation
	at := pointer(loc)
	here := schemaAt(root, loc)
	switch k := leaf.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		known := knownKeys(here)
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
			if desc := describe(propertyOf(here, m)); desc != "" {
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
			Fix:     fixFrom(here, "give a "+strings.Join(k.Want, " or ")),
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
			Fix:     fixFrom(here, "match the pattern "+k.Want),
		}}
	}
	return Errors{{
		Origin:  origin,
		Pointer: at,
		Problem: leaf.ErrorKind.LocalizedString(printer),
		Fix:     fixFrom(here, "see "+SchemaID),
	}}
}

// schemaAt follows an instance location through properties and items to the schema that
// describes it; nil when the location is outside the schema (an unknown key).
func schemaAt(s *jsonschema.Schema, loc []string) *jsonschema.Schema {
	for _, tok := range loc {
		s = deref(s)
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

func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for s != nil && s.Ref != nil && s.Properties == nil && s.Items2020 == nil {
		s = s.Ref
	}
	return s
}

func propertyOf(s *jsonschema.Schema, name string) *jsonschema.Schema {
	if s = deref(s); s == nil {
		return nil
	}
	return s.Properties[name]
}

// describe is the first description along a $ref chain: the use site's, else the target's.
func describe(s *jsonschema.Schema) string {
	for ; s != nil; s = s.Ref {
		if s.Description != "" {
			return s.Description
		}
	}
	return ""
}

func fixFrom(s *jsonschema.Schema, fallback string) string {
	if d := describe(s); d != "" {
		return d
	}
	return fallback
}

func knownKeys(s *jsonschema.Schema) []string {
	if s = deref(s); s == nil {
		return nil
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// unknownKeyFix suggests the closest known key, so a typo is fixed without opening the schema.
func unknownKeyFix(got string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, got) {
			best, bestDist = k, 0
			break
		}
		if d := len(got) - len(k); d >= bestDist || -d >= bestDist {
			continue // the distance is at least the difference in length
		}
		if d := editDistance(strings.ToLower(got), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	list := strings.Join(known, ", ")
	if best != "" {
		return fmt.Sprintf("did you mean %q? keys allowed here: %s", best, list)
	}
	if len(known) == 0 {
		return "remove it"
	}
	return "remove it or use one of: " + list
}

// editDistance is the Levenshtein distance between two short keys.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
