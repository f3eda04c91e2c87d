package codegen

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// schemaMapKeys are keywords whose value maps names to subschemas.
var schemaMapKeys = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

// schemaKeys are keywords whose value is one subschema.
var schemaKeys = map[string]bool{
	"items": true, "additionalProperties": true, "additionalItems": true, "not": true, "contains": true,
	"propertyNames": true, "if": true, "then": true, "else": true, "unevaluatedProperties": true,
	"unevaluatedItems": true, "contentSchema": true,
}

// schemaListKeys are keywords whose value is a list of subschemas.
var schemaListKeys = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}

// unpublishedKey reports keywords a published schema does not carry: identity and dialect
// (the bundle is anonymous and MCP's default dialect is 2020-12), definitions (everything is
// inlined), comments and vendor extensions.
func unpublishedKey(k string) bool {
	switch k {
	case "$schema", "$id", "$defs", "definitions", "$comment":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

// bundle returns a self-contained copy of the schema at location at: every $ref replaced by
// its target (the use site's description winning over the target's), nothing unpublished kept.
// Only the root keeps its title: an inlined definition's title names the definition, not the
// field, and would be repeated in every tools/list.
func (s *Source) bundle(at Location) (any, error) {
	v, ok := s.node(at)
	if !ok {
		return nil, errorf(at, "nothing to bundle")
	}
	return s.inline(at, v, []Location{at}, true)
}

// inline copies one schema node, expanding $refs; stack holds the definitions being expanded,
// so that a schema containing itself is reported instead of expanded forever.
func (s *Source) inline(at Location, v any, stack []Location, root bool) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	if ref, ok := m["$ref"].(string); ok {
		target, tv, err := s.resolveRef(at.Child("$ref"), ref)
		if err != nil {
			return nil, err
		}
		for _, l := range stack {
			if l == target {
				return nil, refCycleError(at, stack, target)
			}
		}
		expanded, err := s.inline(target, tv, append(stack, target), false)
		if err != nil {
			return nil, err
		}
		em, ok := expanded.(map[string]any)
		if !ok {
			return expanded, nil
		}
		out := make(map[string]any, len(em)+1)
		for k, x := range em {
			out[k] = x
		}
		for k, x := range m {
			if k == "$ref" || unpublishedKey(k) {
				continue
			}
			out[k] = x
		}
		return out, nil
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if unpublishedKey(k) || (k == "title" && !root) {
			continue
		}
		switch {
		case schemaMapKeys[k]:
			sub, ok := x.(map[string]any)
			if !ok {
				out[k] = x
				continue
			}
			cp := make(map[string]any, len(sub))
			for name, sv := range sub {
				e, err := s.inline(at.Child(k, name), sv, stack, false)
				if err != nil {
					return nil, err
				}
				cp[name] = e
			}
			out[k] = cp
		case schemaKeys[k]:
			e, err := s.inline(at.Child(k), x, stack, false)
			if err != nil {
				return nil, err
			}
			out[k] = e
		case schemaListKeys[k]:
			list, ok := x.([]any)
			if !ok {
				out[k] = x
				continue
			}
			cp := make([]any, len(list))
			for i, sv := range list {
				e, err := s.inline(at.Child(k, strconv.Itoa(i)), sv, stack, false)
				if err != nil {
					return nil, err
				}
				cp[i] = e
			}
			out[k] = cp
		default:
			out[k] = x
		}
	}
	return out, nil
}

// compactJSON encodes a decoded JSON value with sorted keys, no insignificant space and no
// HTML escaping: the deterministic bytes tools/list serves and the digest covers.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// indentJSON renders compact JSON as the files on disk hold it: two-space indent and a final
// newline. Key order is the compact form's (sorted).
func indentJSON(compact []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// publish bundles every tool schema and the configuration schemas.
func (m *Model) publish() error {
	var p problems
	// add publishes file and returns it and its tools/list form (by list) as compact JSON.
	add := func(file string, list func(any) any) (published, listed []byte) {
		v, err := m.src.bundle(Location{File: file})
		if err != nil {
			p.addErr(Location{File: file}, err)
			return nil, nil
		}
		b, err := compactJSON(v)
		if err != nil {
			p.addErr(Location{File: file}, err)
			return nil, nil
		}
		m.Published = append(m.Published, &Published{
			Path: strings.TrimPrefix(file, m.src.Root+"/"), Source: file, Compact: b,
		})
		if list == nil {
			return b, nil
		}
		l, err := compactJSON(list(v))
		if err != nil {
			p.addErr(Location{File: file}, err)
		}
		return b, l
	}
	for _, t := range m.Tools() {
		t.InputSchema, t.ListedInput = add(t.Source.InputFile, listInput)
		t.OutputSchema, t.ListedOutput = add(t.Source.OutputFile, listOutput)
	}
	for _, f := range []string{m.src.Config, m.src.Conventions} {
		if f != "" {
			add(f, nil)
		}
	}
	slices.SortFunc(m.Published, func(a, b *Published) int { return strings.Compare(a.Path, b.Path) })
	return p.err()
}
