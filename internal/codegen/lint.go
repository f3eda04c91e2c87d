package codegen

import (
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// dialect is the only $schema the source files may declare.
const dialect = "https://json-schema.org/draft/2020-12/schema"

// allowedKeywords mean the same in draft-07 and 2020-12, so a published schema validates
// alike under every client's validator; everything else is refused, which also catches typos.
var allowedKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minLength": true, "maxLength": true, "pattern": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "minProperties": true, "maxProperties": true,
	"default": true, "description": true, "title": true, "examples": true, "$ref": true, "anyOf": true,
	"oneOf": true, "allOf": true, "not": true, "format": true, "$schema": true, "$id": true, "$defs": true,
	"$comment": true,
}

// forbiddenKeywords explain why a keyword some validator knows is still refused.
var forbiddenKeywords = map[string]string{
	"prefixItems":           "draft-07 validators ignore it",
	"$dynamicRef":           "draft-07 validators do not resolve it",
	"$dynamicAnchor":        "draft-07 validators do not resolve it",
	"$recursiveRef":         "draft-07 validators do not resolve it",
	"$anchor":               "some validators crash on it; use a #/ pointer",
	"dependentSchemas":      "draft-07 spells it differently",
	"unevaluatedProperties": "draft-07 validators ignore it; use additionalProperties: false",
	"unevaluatedItems":      "draft-07 validators ignore it",
	"definitions":           "use $defs",
	"patternProperties":     "maps are typed with additionalProperties and maxProperties",
	"if":                    "conditional schemas generate no Go type; describe the rule instead",
	"then":                  "conditional schemas generate no Go type",
	"else":                  "conditional schemas generate no Go type",
}

// formats are the only format values: both drafts agree on them.
var formats = map[string]bool{"date-time": true, "uri": true}

// Lint checks the schema tree against the rules of the contract (CONTRACTS.md, "Schema form")
// and reports every broken rule at its place. Generation stops when Lint fails.
func Lint(src *Source) error {
	var p problems
	mv := &metaValidator{src: src, compiled: map[string]*jsonschema.Schema{}}
	p.errs = append(p.errs, mv.validate(registryMetaSchema, src.Root+"/registry.json")...)
	for _, t := range src.Tools() {
		lintToolMeta(src, t, &p)
		p.errs = append(p.errs, mv.validate(toolMetaSchema, t.MetaFile)...)
	}
	for _, f := range src.lintedFiles() {
		l := &linter{src: src, p: &p}
		v := src.Docs[f]
		at := Location{File: f}
		l.root(at, v)
		l.schema(at, v, "")
	}
	return p.err()
}

// lintedFiles are the contract schemas: tool inputs and outputs, shared definitions, and the
// configuration and conventions schemas when present.
func (s *Source) lintedFiles() []string {
	var files []string
	for _, f := range sortedKeys(s.Docs) {
		rel := strings.TrimPrefix(f, s.Root+"/")
		switch {
		case strings.HasPrefix(rel, "tools/") && (strings.HasSuffix(rel, ".input.json") || strings.HasSuffix(rel, ".output.json")),
			strings.HasPrefix(rel, "defs/"),
			f == s.Config, f == s.Conventions:
			files = append(files, f)
		}
	}
	return files
}

// lintToolMeta checks what tools/list shows besides the schemas.
func lintToolMeta(src *Source, t *ToolSource, p *problems) {
	at := Location{File: t.MetaFile}
	m := t.Meta
	if strings.TrimSpace(m.Title) == "" {
		p.add(at.Child("title"), "tool has no title")
	}
	if strings.TrimSpace(m.Description) == "" {
		p.add(at.Child("description"), "tool has no description")
	}
	raw, _ := src.Docs[t.MetaFile].(map[string]any)
	if _, ok := raw["annotations"].(map[string]any); !ok {
		p.add(at.Child("annotations"), "tool has no annotations")
	} else {
		if m.Annotations.ReadOnlyHint == nil {
			p.add(at.Child("annotations", "readOnlyHint"), "annotations must say readOnlyHint")
		}
		if m.Annotations.OpenWorldHint == nil {
			p.add(at.Child("annotations", "openWorldHint"), "annotations must say openWorldHint")
		}
	}
	if m.Budget.Standard <= 0 || m.Budget.Summary <= 0 {
		p.add(at.Child("budget"), "budget must give positive standard and summary byte ceilings")
	}
}

// linter walks one schema document.
type linter struct {
	src *Source
	p   *problems
}

// root checks what only a file's root carries: dialect, identity and an object type.
func (l *linter) root(at Location, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		l.p.add(at, "a schema file must be a JSON object")
		return
	}
	if s, _ := m["$schema"].(string); s != dialect {
		l.p.add(at.Child("$schema"), "$schema must be %q", dialect)
	}
	if s, _ := m["$id"].(string); s == "" {
		l.p.add(at.Child("$id"), "$id must name the file")
	}
	rel := strings.TrimPrefix(at.File, l.src.Root+"/")
	if strings.HasPrefix(rel, "tools/") || at.File == l.src.Config || at.File == l.src.Conventions {
		if typeList(m) == nil || len(typeList(m)) != 1 || typeList(m)[0] != "object" {
			l.p.add(at.Child("type"), "the root of a tool or configuration schema must be type object")
		}
	}
}

// schema checks one schema node; parentKey is the keyword holding it ("" for a root or a
// named member of properties or $defs).
func (l *linter) schema(at Location, v any, parentKey string) {
	switch n := v.(type) {
	case bool:
		if parentKey == "additionalProperties" && !n {
			return
		}
		l.p.add(at, "boolean subschema %v is not allowed; the only boolean schema is additionalProperties: false", n)
		return
	case map[string]any:
		l.object(at, n)
	default:
		l.p.add(at, "a schema must be a JSON object")
	}
}

// object checks the keywords of one schema object, then its subschemas.
func (l *linter) object(at Location, m map[string]any) {
	for _, k := range sortedKeys(m) {
		if why, bad := forbiddenKeywords[k]; bad {
			l.p.add(at.Child(k), "keyword %s is forbidden: %s", k, why)
			continue
		}
		if !allowedKeywords[k] && !strings.HasPrefix(k, "x-") {
			l.p.add(at.Child(k), "unknown keyword %s", k)
		}
		if (k == "$schema" || k == "$id") && at.Pointer != "" {
			l.p.add(at.Child(k), "%s belongs at the root of a file only", k)
		}
	}
	if ref, ok := m["$ref"]; ok {
		l.ref(at, m, ref)
		return
	}
	l.keywordValues(at, m)
	types := typeList(m)
	if _, ok := m["type"]; ok && types == nil {
		l.p.add(at.Child("type"), "type must be a type name or a list of them")
	}
	if _, ok := m["enum"]; ok && types == nil {
		l.p.add(at.Child("enum"), "enum must be typed (add \"type\")")
	}
	if hasType(m, "object") || m["properties"] != nil {
		l.objectRules(at, m)
	}
	if hasType(m, "array") {
		l.arrayRules(at, m)
	}
	if hasType(m, "string") {
		_, enum := m["enum"]
		_, cnst := m["const"]
		_, pattern := m["pattern"]
		if _, ok := m["maxLength"]; !ok && !enum && !cnst && !pattern {
			l.p.add(at, "string without maxLength (only enums, consts and patterns may omit it)")
		}
	}
	if f, ok := m["format"]; ok {
		if s, _ := f.(string); !formats[s] {
			l.p.add(at.Child("format"), "format %v is not allowed (date-time, uri)", f)
		}
	}
	l.children(at, m)
}

// ref checks a $ref node: alone but for a description, relative, and resolving to a schema.
func (l *linter) ref(at Location, m map[string]any, ref any) {
	s, ok := ref.(string)
	if !ok {
		l.p.add(at.Child("$ref"), "$ref must be a string")
		return
	}
	for _, k := range sortedKeys(m) {
		if k != "$ref" && k != "description" && k != "$comment" && !strings.HasPrefix(k, "x-") {
			l.p.add(at.Child(k), "%s next to $ref is not allowed (draft-07 ignores it); only description may accompany $ref", k)
		}
	}
	if _, _, _, err := l.src.deref(at, m); err != nil {
		l.p.addErr(at.Child("$ref"), err)
	}
	if strings.Contains(s, "#") && !strings.Contains(s, "#/") && !strings.HasSuffix(s, "#") {
		l.p.add(at.Child("$ref"), "$ref %q names an anchor; use a #/ pointer", s)
	}
}

// objectRules: every object is closed, or is a described, bounded map; every property is
// described; required names exist.
func (l *linter) objectRules(at Location, m map[string]any) {
	props, _ := m["properties"].(map[string]any)
	ap, hasAP := m["additionalProperties"]
	switch a := ap.(type) {
	case bool:
		if a {
			l.p.add(at.Child("additionalProperties"), "additionalProperties must be false (or a described schema for a map)")
		}
	case map[string]any:
		if len(props) > 0 {
			l.p.add(at.Child("additionalProperties"), "an object with properties must set additionalProperties: false")
		}
		if d, _ := a["description"].(string); d == "" && a["$ref"] == nil {
			l.p.add(at.Child("additionalProperties"), "a map's value schema needs a description")
		}
		if _, ok := m["maxProperties"]; !ok {
			l.p.add(at, "a map (additionalProperties schema) needs maxProperties")
		}
	default:
		if !hasAP {
			l.p.add(at, "object without additionalProperties: false (or, for a map, a described value schema and maxProperties)")
		}
	}
	for _, name := range sortedKeys(props) {
		pat := at.Child("properties", name)
		_, _, desc, err := l.src.deref(pat, props[name])
		if err == nil && strings.TrimSpace(desc) == "" {
			l.p.add(pat, "property %s has no description", name)
		}
	}
	if req, ok := m["required"].([]any); ok {
		for i, r := range req {
			s, ok := r.(string)
			if !ok {
				l.p.add(at.Child("required", itoa(i)), "required must list property names")
				continue
			}
			if _, ok := props[s]; !ok {
				l.p.add(at.Child("required", itoa(i)), "required property %s is not defined in properties", s)
			}
		}
	} else if _, has := m["required"]; has {
		l.p.add(at.Child("required"), "required must be a list of property names")
	}
}

// arrayRules: every array says what its items are and how many there can be.
func (l *linter) arrayRules(at Location, m map[string]any) {
	items, ok := m["items"]
	if !ok {
		l.p.add(at, "array without items")
	} else if _, isList := items.([]any); isList {
		l.p.add(at.Child("items"), "items must be one schema (tuple form is not allowed)")
	}
	if _, ok := m["maxItems"]; !ok {
		l.p.add(at, "array without maxItems")
	}
}

// keywordValues checks that bounds are numbers of the right kind, so that a typo is caught
// here rather than by a client's validator.
func (l *linter) keywordValues(at Location, m map[string]any) {
	integer := hasType(m, "integer") && !hasType(m, "number")
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		n, isNum := v.(json.Number)
		switch {
		case !isNum:
			l.p.add(at.Child(k), "%s must be a number", k)
		case integer && !isInteger(n):
			l.p.add(at.Child(k), "%s must be an integer", k)
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if n, isNum := v.(json.Number); !isNum || !isInteger(n) || strings.HasPrefix(string(n), "-") {
			l.p.add(at.Child(k), "%s must be a non-negative integer", k)
		}
	}
	for _, k := range []string{"description", "title", "pattern"} {
		if v, ok := m[k]; ok {
			if _, isStr := v.(string); !isStr {
				l.p.add(at.Child(k), "%s must be a string", k)
			}
		}
	}
	if e, ok := m["enum"]; ok {
		if list, isList := e.([]any); !isList || len(list) == 0 {
			l.p.add(at.Child("enum"), "enum must be a non-empty list")
		}
	}
	if d, ok := m["default"]; ok {
		if msg := checkValue(m, d); msg != "" {
			l.p.add(at.Child("default"), "default %s", msg)
		}
	}
}

// children lints every subschema of m.
func (l *linter) children(at Location, m map[string]any) {
	for _, k := range sortedKeys(m) {
		x := m[k]
		switch {
		case schemaMapKeys[k]:
			sub, ok := x.(map[string]any)
			if !ok {
				l.p.add(at.Child(k), "%s must map names to schemas", k)
				continue
			}
			for _, name := range sortedKeys(sub) {
				l.schema(at.Child(k, name), sub[name], "")
			}
		case schemaKeys[k]:
			if k == "items" {
				if _, isList := x.([]any); isList {
					continue
				}
			}
			l.schema(at.Child(k), x, k)
		case schemaListKeys[k]:
			list, ok := x.([]any)
			if !ok {
				l.p.add(at.Child(k), "%s must be a list of schemas", k)
				continue
			}
			for i, sv := range list {
				l.schema(at.Child(k, itoa(i)), sv, k)
			}
		}
	}
}
