package codegen

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// renamedDefs gives a shared definition a Go name other than its file's, where the file name
// would mislead in Go: defs/error.json is the domain error object, not a Go error.
var renamedDefs = map[string]string{"Error": "ToolError"}

// ToolTypeName names a tool's input or output struct: list_runs + Input → ListRunsInput.
func (m *Model) ToolTypeName(tool, suffix string) string { return pascal(tool) + suffix }

// ToolConstName names the constant holding a tool's wire name: ToolListRuns.
func (m *Model) ToolConstName(t *Tool) string { return "Tool" + pascal(t.Meta.Name) }

// MethodName names a tool's method on the Flows interface: ListRuns.
func (m *Model) MethodName(t *Tool) string { return pascal(t.Meta.Name) }

// SchemaConstName names the unexported variable holding a tool's published input or output
// schema: schemaListRunsInput.
func (m *Model) SchemaConstName(t *Tool, suffix string) string {
	return "schema" + m.ToolTypeName(t.Meta.Name, suffix)
}

// ListedConstName names the unexported variable holding what tools/list serves of a tool's
// input or output schema: listedListRunsInput.
func (m *Model) ListedConstName(t *Tool, suffix string) string {
	return "listed" + m.ToolTypeName(t.Meta.Name, suffix)
}

// PublishedConstName names the exported variable of a published configuration schema:
// config.schema.json → ConfigSchema.
func (m *Model) PublishedConstName(p *Published) string { return m.filePrefix(p.Source) + "Schema" }

// FieldName names a struct field after its JSON property: traceId → TraceID.
func (m *Model) FieldName(jsonName string) string { return pascal(jsonName) }

// EnumConstName names one enum constant as go-jsonschema does: the type name followed by the
// value (DetailSummary, ErrorCodeRunNotFound), with an underscore after a trailing digit.
func (m *Model) EnumConstName(t *Type, v any) string {
	s := fmt.Sprint(v)
	id := pascal(s)
	if s == "*" {
		id = "Wildcard"
	}
	if strings.ContainsAny(t.Name[len(t.Name)-1:], "0123456789") {
		return t.Name + "_" + id
	}
	return t.Name + id
}

// GroupOf names the generated file a type declared in file goes to: the configuration and
// conventions types live apart from the tool contracts.
func (m *Model) GroupOf(file string) string {
	if file == m.src.Config || file == m.src.Conventions {
		return "config"
	}
	return "types"
}

// filePrefix is the name every type declared in a file starts with: the tool type name for a
// tool file, the Pascal-cased file stem otherwise (defs/page.json → Page, config.schema.json →
// Config).
func (m *Model) filePrefix(file string) string {
	rel := strings.TrimPrefix(file, m.src.Root+"/")
	base := path.Base(rel)
	if strings.HasPrefix(rel, "tools/") {
		for _, suffix := range []string{"input", "output"} {
			if stem, ok := strings.CutSuffix(base, "."+suffix+".json"); ok {
				return m.ToolTypeName(stem, pascal(suffix))
			}
		}
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".json"), ".schema")
	return pascal(stem)
}

// rootName names the type of a whole file: its prefix, unless renamedDefs says otherwise.
func (m *Model) rootName(file string) string {
	p := m.filePrefix(file)
	if strings.HasPrefix(file, m.src.Root+"/defs/") {
		if r, ok := renamedDefs[p]; ok {
			return r
		}
	}
	return p
}

// isDefsFile reports whether file holds shared definitions.
func (m *Model) isDefsFile(file string) bool { return strings.HasPrefix(file, m.src.Root+"/defs/") }

// TypeName names the type declared at a location from the path that leads there: a property
// adds its name (ListRunsOutput + runs), an array item makes the name singular
// (ListRunsOutputRun), a map value adds Value, a definition in a shared file is named by its
// key alone and elsewhere by the file prefix and its key.
func (m *Model) TypeName(loc Location) string {
	toks := loc.Tokens()
	if len(toks) == 0 {
		return m.rootName(loc.File)
	}
	name := m.filePrefix(loc.File)
	for i := 0; i < len(toks); i++ {
		switch tok := toks[i]; tok {
		case "properties", "$defs":
			if i+1 >= len(toks) {
				return name + pascal(tok)
			}
			i++
			if tok == "$defs" && i == 1 && m.isDefsFile(loc.File) {
				name = pascal(toks[i])
			} else {
				name += pascal(toks[i])
			}
		case "items":
			name = singular(name)
		case "additionalProperties":
			name += "Value"
		case "anyOf", "oneOf", "allOf":
			if i+1 < len(toks) {
				i++
				name += "Variant" + toks[i]
			}
		default:
			name += pascal(tok)
		}
	}
	return name
}

// zeroInvalid reports whether the Go zero value of a field ("" or 0 or false) can never be a
// valid value of its schema, so that zero can stand for "absent".
func zeroInvalid(s map[string]any) bool {
	if s == nil {
		return false
	}
	types := nonNull(typeList(s))
	if len(types) != 1 {
		return false
	}
	var zero any
	switch types[0] {
	case "string":
		zero = ""
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil && !re.MatchString("") {
				return true
			}
		}
	case "integer", "number":
		zero = jsonNumber("0")
	case "boolean":
		zero = false
	default:
		return false
	}
	return checkValue(s, zero) != ""
}
