package codegen

import (
	"strings"
	"unicode"
)

// What tools/list carries of each schema. Every byte of it sits in the context of every agent
// session before the first call, so the listing keeps what a model or a client needs and the
// published files (schemas/bundled, `runlens schemas export`) keep everything:
//
//   - an input schema loses its root title and description, which repeat the tool's own title
//     and description, and "additionalProperties": false, which tells a model nothing the
//     list of properties does not (the server still rejects an unknown argument, naming it);
//     every argument keeps its type, bounds, default and description;
//   - an output schema keeps its shape (types, properties, items, enums, map value shapes),
//     which fields the answer and its top-level objects always carry (required, down to the
//     answer's top-level fields; below them the published file says it, and the server
//     validates against it), and the descriptions of the answer's top-level fields that
//     explain something:
//     at least three words, not just the words of the field's name, and not on page and scan,
//     which mean the same in every answer. Labels ("Run id.", "Newest first."), bounds,
//     closedness and nested descriptions stay in the published file: the server validates
//     every answer against that file before sending it, so a client learns nothing from them
//     in tools/list but pays for them in every session.

// listInput returns the tools/list form of a bundled input schema.
func listInput(bundled any) any {
	m, ok := bundled.(map[string]any)
	if !ok {
		return bundled
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "title" && k != "description" {
			out[k] = v
		}
	}
	return openObjects(out)
}

// openObjects drops "additionalProperties": false from a schema and every schema below it;
// a map's value schema (additionalProperties as a schema) stays.
func openObjects(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, sub := range x {
			if k == "additionalProperties" && sub == false {
				continue
			}
			out[k] = openObjects(sub)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, sub := range x {
			out[i] = openObjects(sub)
		}
		return out
	}
	return v
}

// outputShapeKeys are the keywords an output schema keeps in tools/list.
var outputShapeKeys = map[string]bool{"type": true, "properties": true, "items": true, "enum": true, "const": true}

// listOutput returns the tools/list form of a bundled output schema.
func listOutput(bundled any) any { return outputShape(bundled, 0) }

// outputShape copies the shape of one output schema node; depth is 1 for the answer's
// top-level fields, whose descriptions are kept.
func outputShape(v any, depth int) any { return outputShapeOf("", v, depth) }

// outputShapeOf is outputShape for the node of the field named name.
func outputShapeOf(name string, v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		switch {
		case k == "properties":
			props, ok := x.(map[string]any)
			if !ok {
				continue
			}
			cp := make(map[string]any, len(props))
			for name, p := range props {
				cp[name] = outputShapeOf(name, p, depth+1)
			}
			out[k] = cp
		case k == "items":
			out[k] = outputShape(x, depth+1)
		case k == "additionalProperties":
			if sub, ok := x.(map[string]any); ok { // a map: its value shape is part of the answer's shape
				out[k] = outputShape(sub, depth+1)
			}
		case k == "description":
			if text, _ := x.(string); depth == 1 && explains(name, text) {
				out[k] = x
			}
		case k == "required":
			if depth <= 1 {
				out[k] = x
			}
		case outputShapeKeys[k]:
			out[k] = x
		}
	}
	return out
}

// explains reports whether a top-level field's description is listed (see above).
func explains(name, description string) bool {
	return name != "page" && name != "scan" && len(strings.Fields(description)) >= 3 && !repeatsName(name, description)
}

// repeatsName reports whether a description says nothing but the words of the field's name:
// every word of it is a word of the camel-case name, plurals and case aside.
func repeatsName(name, description string) bool {
	words := map[string]bool{}
	for _, w := range camelWords(name) {
		words[stem(w)] = true
	}
	some := false
	for _, w := range strings.FieldsFunc(strings.ToLower(description), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if fillers[w] {
			continue
		}
		if !words[stem(w)] {
			return false
		}
		some = true
	}
	return some
}

// fillers are words a description may add without saying more than the name.
var fillers = map[string]bool{"the": true, "a": true, "an": true, "of": true, "in": true}

// camelWords splits a camel-case name into lower-case words: p95DurationMs → p95 duration ms.
func camelWords(name string) []string {
	var words []string
	start := 0
	for i, r := range name {
		if i > start && unicode.IsUpper(r) {
			words = append(words, strings.ToLower(name[start:i]))
			start = i
		}
	}
	return append(words, strings.ToLower(name[start:]))
}

// stem folds a plural to its singular, enough to match "services" with "service".
func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") {
		return w[:len(w)-1]
	}
	return w
}
