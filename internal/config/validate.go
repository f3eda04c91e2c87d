package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/runlens/runlens/gen"
)

// SchemaID is the $id of the configuration schema, which runlens.json files name in "$schema".
const SchemaID = "https://runlens.dev/schemas/config.schema.json"

// publishedSchema is the path of the configuration schema among the published schemas.
const publishedSchema = "config.schema.json"

// schemaProblems validates the document with the generated validator of the configuration
// schema and turns each violation into an Error that names the key, what was expected and a fix
// drawn from the schema's own descriptions.
func schemaProblems(d *document, origin string) Errors {
	vs, ok := gen.ValidatePublished(publishedSchema, d.value)
	if !ok {
		return Errors{{Origin: origin, Problem: "runlens has no configuration schema built in", Fix: "report this: gen was not regenerated"}}
	}
	if len(vs) == 0 {
		return nil
	}
	root, err := schemaTree()
	if err != nil {
		return Errors{{Origin: origin, Problem: err.Error(), Fix: "report this: the configuration schema built into runlens does not decode"}}
	}
	out := make(Errors, 0, len(vs))
	for _, v := range vs {
		out = append(out, problemOf(root, origin, v))
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

// schemaTree is the published configuration schema, decoded once and only when a file has a
// problem to explain: its descriptions become the fixes.
var schemaTree = sync.OnceValues(func() (map[string]any, error) {
	var root map[string]any
	if err := json.Unmarshal(gen.ConfigSchema, &root); err != nil {
		return nil, fmt.Errorf("decode the configuration schema: %w", err)
	}
	return root, nil
})

// problemOf words one violation for a person editing runlens.json.
func problemOf(root map[string]any, origin string, v gen.Violation) *Error {
	tokens := splitPointer(v.Pointer)
	e := &Error{Origin: origin, Pointer: v.Pointer}
	switch v.Keyword {
	case "additionalProperties":
		e.Problem = "unknown key " + quoteValue(v.Property)
		e.Fix = unknownKeyFix(v.Property, knownKeys(schemaAt(root, tokens[:len(tokens)-1])))
	case "required":
		e.Problem = fmt.Sprintf("missing required key %q", v.Property)
		e.Fix = fmt.Sprintf("add %q", v.Property)
		if desc := describe(propertyOf(schemaAt(root, tokens[:len(tokens)-1]), v.Property)); desc != "" {
			e.Fix += ": " + desc
		}
	case "type":
		e.Problem = v.Message
		e.Fix = fixFrom(schemaAt(root, tokens), "give a "+strings.Join(v.Want, " or "))
	case "enum":
		want := make([]string, len(v.Want))
		for i, w := range v.Want {
			want[i] = fmt.Sprintf("%q", w)
		}
		e.Problem = fmt.Sprintf("expected one of %s, got %s", strings.Join(want, ", "), quoteValue(v.Got))
		e.Fix = "use one of " + strings.Join(want, ", ")
	case "pattern":
		// The value is not echoed: a malformed source URL may carry a password.
		e.Problem = "the value does not have the expected form"
		e.Fix = fixFrom(schemaAt(root, tokens), "match the pattern "+v.Want[0])
	default:
		e.Problem = v.Message
		e.Fix = fixFrom(schemaAt(root, tokens), "see "+SchemaID)
	}
	return e
}

// schemaAt follows an instance location through properties and items to the schema node that
// describes it; nil when the location is outside the schema (an unknown key).
func schemaAt(s map[string]any, tokens []string) map[string]any {
	for _, tok := range tokens {
		if s == nil {
			return nil
		}
		if p := propertyOf(s, tok); p != nil {
			s = p
			continue
		}
		s, _ = s["items"].(map[string]any)
	}
	return s
}

// propertyOf is the schema of one declared property, nil when it is not declared.
func propertyOf(s map[string]any, name string) map[string]any {
	props, _ := s["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

// describe is a schema node's description ("" when it has none; the published schema keeps the
// use site's description where a definition was inlined).
func describe(s map[string]any) string {
	d, _ := s["description"].(string)
	return d
}

func fixFrom(s map[string]any, fallback string) string {
	if d := describe(s); d != "" {
		return d
	}
	return fallback
}

func knownKeys(s map[string]any) []string {
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// splitPointer splits a JSON pointer into unescaped tokens; "" is the root.
func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(p[1:], "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
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
