package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atombender/go-jsonschema/pkg/generator"
	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// goTypeDecls renders every named type with go-jsonschema and returns each declaration's Go
// source by type name; an enum's entry also holds its constants.
//
// go-jsonschema is given one synthetic schema whose $defs are exactly the Model's named types,
// with every property carrying the Go identifier and pointer decision the Model made, so that
// go-jsonschema renders structs and enum constants while all naming stays in the Model. Only
// models are generated (no validating UnmarshalJSON): validation is the runtime's job.
func (m *Model) goTypeDecls() (map[string]string, error) {
	defs := map[string]any{}
	for _, t := range m.Types() {
		defs[t.Name] = m.synthetic(t)
	}
	doc, err := json.Marshal(map[string]any{"$id": "urn:runlens:gen", "$defs": defs})
	if err != nil {
		return nil, fmt.Errorf("encode type model: %w", err)
	}
	sch, err := schemas.FromJSONReader(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("read type model: %w", err)
	}
	if sch.ObjectAsType == nil {
		sch.ObjectAsType = &schemas.ObjectAsType{}
	}
	var warnings []string
	g, err := generator.New(generator.Config{
		OnlyModels:         true,
		DefaultPackageName: "gen",
		DefaultOutputName:  "types_gen.go",
		Tags:               []string{"json"},
		Capitalizations:    initialisms,
		DisableOmitEmpty:   true,
		Warner:             func(w string) { warnings = append(warnings, w) },
	})
	if err != nil {
		return nil, fmt.Errorf("start go-jsonschema: %w", err)
	}
	if err := g.AddFile("runlens-types.json", sch); err != nil {
		return nil, fmt.Errorf("go-jsonschema: %w", err)
	}
	sources, err := g.Sources()
	if err != nil {
		return nil, fmt.Errorf("go-jsonschema: %w", err)
	}
	if len(warnings) > 0 {
		return nil, fmt.Errorf("go-jsonschema: %s", strings.Join(warnings, "; "))
	}
	src, ok := sources["types_gen.go"]
	if !ok || len(sources) != 1 {
		return nil, fmt.Errorf("go-jsonschema produced %d files, want types_gen.go", len(sources))
	}
	return m.splitDecls(src)
}

// synthetic is the schema go-jsonschema sees for one named type.
func (m *Model) synthetic(t *Type) map[string]any {
	switch t.Kind {
	case Enum:
		return map[string]any{"type": jsonTypeName(t.EnumBase), "enum": t.EnumValues, "description": typeDoc(t)}
	case Map:
		return map[string]any{"type": "object", "description": typeDoc(t), "additionalProperties": m.syntheticType(t.Value)}
	}
	props := map[string]any{}
	required := []string{}
	for _, f := range t.Fields {
		p := m.syntheticType(f.Type)
		p["description"] = f.Description
		ext, _ := p["goJSONSchema"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
		}
		ext["identifier"] = f.Name
		ext["pointer"] = f.Pointer
		p["goJSONSchema"] = ext
		props[f.JSON] = p
		if f.Required {
			required = append(required, f.JSON)
		}
	}
	return map[string]any{
		"type": "object", "description": typeDoc(t), "properties": props,
		"required": required, "additionalProperties": false,
	}
}

// syntheticType is the schema of one Go type expression: a $ref for a named type, a Go type
// override for a map (so that go-jsonschema does not invent a name for it).
func (m *Model) syntheticType(g *GoType) map[string]any {
	switch {
	case g.Named != nil:
		return map[string]any{"$ref": "#/$defs/" + g.Named.Name}
	case g.Elem != nil:
		return map[string]any{"type": "array", "items": m.syntheticType(g.Elem)}
	case g.MapOf != nil:
		return map[string]any{"type": "object", "goJSONSchema": map[string]any{"type": g.String(), "nillable": true}}
	case g.Prim == "any":
		return map[string]any{}
	case g.Prim == "int64":
		return map[string]any{"type": "integer", "goJSONSchema": map[string]any{"type": "int64"}}
	}
	return map[string]any{"type": jsonTypeName(g.Prim)}
}

// jsonTypeName maps a Go primitive back to its JSON type name.
func jsonTypeName(goPrim string) string {
	switch goPrim {
	case "int", "int64":
		return "integer"
	case "float64":
		return "number"
	case "bool":
		return "boolean"
	}
	return "string"
}

// splitDecls parses go-jsonschema's file and cuts it into declarations by type name, checking
// that every type and enum constant is named exactly as the Model expects.
func (m *Model) splitDecls(src []byte) (map[string]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "types_gen.go", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse go-jsonschema output: %w", err)
	}
	text := func(n ast.Node, doc *ast.CommentGroup) string {
		start := n.Pos()
		if doc != nil {
			start = doc.Pos()
		}
		return string(src[fset.Position(start).Offset:fset.Position(n.End()).Offset])
	}
	typeDecls := map[string]string{}
	consts := map[string]string{} // constant name → its spec source
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			return nil, fmt.Errorf("go-jsonschema produced an unexpected declaration at %s", fset.Position(d.Pos()))
		}
		for _, spec := range gd.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				typeDecls[s.Name.Name] = text(gd, gd.Doc)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					consts[n.Name] = string(src[fset.Position(s.Pos()).Offset:fset.Position(s.End()).Offset])
				}
			}
		}
	}
	out := map[string]string{}
	for _, t := range m.Types() {
		decl, ok := typeDecls[t.Name]
		if !ok {
			return nil, fmt.Errorf("go-jsonschema did not declare %s (from %s)", t.Name, t.Loc)
		}
		decl = strings.ReplaceAll(decl, "interface{}", "any")
		// go-jsonschema wraps comments near 80 columns; a schema location is one token and
		// stays on its "Ref:" line.
		decl = strings.ReplaceAll(decl, "// Ref:\n// ", "// Ref: ")
		if t.Kind != Enum {
			out[t.Name] = decl
			continue
		}
		var b strings.Builder
		b.WriteString(comment(typeDoc(t)))
		b.WriteString(decl)
		var specs []string
		for _, v := range t.EnumValues {
			if _, isString := v.(string); !isString {
				continue
			}
			name := m.EnumConstName(t, v)
			spec, ok := consts[name]
			if !ok {
				return nil, fmt.Errorf("go-jsonschema did not name the %q constant of %s %s", v, t.Name, name)
			}
			specs = append(specs, spec)
		}
		if len(specs) > 0 {
			fmt.Fprintf(&b, "\n\n// The values of %s.\nconst (\n\t%s\n)", t.Name, strings.Join(specs, "\n\t"))
		}
		out[t.Name] = b.String()
	}
	return out, nil
}

// typeDoc is a named type's doc comment: its name and the schema's description, as Go doc
// comments begin, and where in the schemas it comes from (ogen's "Ref:").
func typeDoc(t *Type) string {
	d := strings.TrimSpace(t.Description)
	if d != "" {
		r, n := utf8.DecodeRuneInString(d)
		if !unicode.IsUpper(r) || n == len(d) || !unicode.IsUpper(rune(d[n])) { // keep acronyms (OTLP …)
			d = string(unicode.ToLower(r)) + d[n:]
		}
		d = t.Name + ": " + d
	} else {
		d = t.Name + "."
	}
	ref := t.Loc.File
	if t.Loc.Pointer != "" {
		ref += "#" + t.Loc.Pointer
	}
	return d + "\n\nRef: " + ref
}

// comment renders a description as a Go comment, wrapped near 100 columns.
func comment(desc string) string {
	if strings.TrimSpace(desc) == "" {
		return ""
	}
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimSpace(desc), "\n") {
		line := "//"
		for _, w := range strings.Fields(para) {
			if len(line)+1+len(w) > 100 && line != "//" {
				b.WriteString(line + "\n")
				line = "//"
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
