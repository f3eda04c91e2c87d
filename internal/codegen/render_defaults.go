package codegen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
)

// needsDefaults reports whether a struct type has a schema default anywhere below it, so that
// it gets an ApplyDefaults method. Recursive types are handled by marking a type false while
// it is being examined.
func (m *Model) needsDefaults(t *Type) bool {
	memo := map[*Type]bool{}
	var visit func(t *Type) bool
	visit = func(t *Type) bool {
		if v, seen := memo[t]; seen {
			return v
		}
		memo[t] = false
		found := false
		for _, f := range t.Fields {
			if f.Default != nil {
				found = true
			}
			if s := structBelow(f.Type); s != nil && visit(s) {
				found = true
			}
		}
		memo[t] = found
		return found
	}
	return t != nil && t.Kind == Struct && visit(t)
}

// structBelow returns the struct type a field holds directly, in a slice, or in a map.
func structBelow(g *GoType) *Type {
	switch {
	case g.Named != nil && g.Named.Kind == Struct:
		return g.Named
	case g.Named != nil && g.Named.Kind == Map:
		return structBelow(g.Named.Value)
	case g.Elem != nil:
		return structBelow(g.Elem)
	case g.MapOf != nil:
		return structBelow(g.MapOf)
	}
	return nil
}

// defaultRoots are the types whose defaults are applied in Go: tool inputs and the
// configuration documents. Outputs are written by flows, which say what they mean.
func (m *Model) defaultRoots() []*Type {
	var roots []*Type
	for _, t := range m.Tools() {
		roots = append(roots, t.Input)
	}
	for _, t := range []*Type{m.Config, m.Conventions} {
		if t != nil {
			roots = append(roots, t)
		}
	}
	return roots
}

// defaultTypes lists, in name order, every struct reachable from a default root that needs an
// ApplyDefaults method.
func (m *Model) defaultTypes() []*Type {
	reach := map[*Type]bool{}
	var walk func(t *Type)
	walk = func(t *Type) {
		if t == nil || reach[t] {
			return
		}
		reach[t] = true
		for _, f := range t.Fields {
			walk(structBelow(f.Type))
		}
		if t.Kind == Map {
			walk(structBelow(t.Value))
		}
	}
	for _, r := range m.defaultRoots() {
		walk(r)
	}
	var out []*Type
	for _, t := range m.Types() {
		if reach[t] && m.needsDefaults(t) {
			out = append(out, t)
		}
	}
	return out
}

// renderDefaults renders ApplyDefaults for every input and configuration struct with a default
// anywhere below it: "limit defaults to 20" lives in the schema and reaches flows from here.
func (m *Model) renderDefaults() (*jen.File, error) {
	f := newFile(m.src.Root + "/tools/*.input.json and " + m.src.Root + "/defs/*.json")
	var p problems
	for _, t := range m.defaultTypes() {
		recv := "in"
		if t.Group == "config" {
			recv = "c"
		}
		var body []jen.Code
		for _, fl := range t.Fields {
			if fl.Default != nil {
				st, err := m.applyDefault(recv, fl)
				if err != nil {
					p.addErr(fl.Loc, err)
					continue
				}
				body = append(body, st)
			}
			if s := structBelow(fl.Type); s != nil && m.needsDefaults(s) {
				st, err := m.applyNested(recv, fl)
				if err != nil {
					p.addErr(fl.Loc, err)
					continue
				}
				body = append(body, st)
			}
		}
		f.Line()
		f.Comment("ApplyDefaults fills in the schema defaults of every field left out, nested ones included.")
		f.Func().Params(jen.Id(recv).Op("*").Id(t.Name)).Id("ApplyDefaults").Params().Block(body...)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// applyDefault renders the statement that sets one field to its default when it was left out:
// a value field is "left out" when it holds its zero value (which its schema forbids), a
// pointer field when it is nil.
func (m *Model) applyDefault(recv string, fl *Field) (jen.Code, error) {
	lit, err := m.literal(fl)
	if err != nil {
		return nil, err
	}
	field := jen.Id(recv).Dot(fl.Name)
	if fl.Pointer {
		return jen.If(field.Clone().Op("==").Nil()).Block(
			jen.Id("v").Op(":=").Add(lit),
			field.Clone().Op("=").Op("&").Id("v"),
		), nil
	}
	var zero jen.Code
	switch base := m.basePrim(fl.Type); base {
	case "string":
		zero = jen.Lit("")
	case "int", "int64", "float64":
		zero = jen.Lit(0)
	case "bool":
		zero = jen.False()
	default:
		return nil, fmt.Errorf("default on a field of Go type %s cannot be applied", fl.Type)
	}
	return jen.If(field.Clone().Op("==").Add(zero)).Block(field.Clone().Op("=").Add(lit)), nil
}

// basePrim is the primitive underneath a field's type (an enum's base).
func (m *Model) basePrim(g *GoType) string {
	if g.Named != nil && g.Named.Kind == Enum {
		return g.Named.EnumBase
	}
	return g.Prim
}

// literal renders a field's default as a Go expression of the field's type.
func (m *Model) literal(fl *Field) (*jen.Statement, error) {
	v, err := defaultLiteral(fl.Default)
	if err != nil {
		return nil, err
	}
	if n := fl.Type.Named; n != nil && n.Kind == Enum {
		if _, isString := v.(string); isString {
			return jen.Id(m.EnumConstName(n, v)), nil
		}
		lit, err := primLiteral(n.EnumBase, v)
		if err != nil {
			return nil, err
		}
		return jen.Id(n.Name).Call(lit), nil
	}
	return primLiteral(fl.Type.Prim, v)
}

// primLiteral renders a JSON scalar as a literal of a Go primitive type.
func primLiteral(goType string, v any) (*jen.Statement, error) {
	s := fmt.Sprint(v)
	switch goType {
	case "string":
		if str, ok := v.(string); ok {
			return jen.Lit(str), nil
		}
	case "bool":
		if b, ok := v.(bool); ok {
			return jen.Lit(b), nil
		}
	case "int", "int64":
		if i, err := strconv.Atoi(strings.TrimSuffix(s, ".0")); err == nil {
			return jen.Lit(i), nil
		}
	case "float64":
		if x, err := strconv.ParseFloat(s, 64); err == nil {
			return jen.Lit(x), nil
		}
	}
	return nil, fmt.Errorf("default %v does not fit Go type %s", v, goType)
}

// applyNested renders the statement that applies defaults inside a struct-valued field.
func (m *Model) applyNested(recv string, fl *Field) (jen.Code, error) {
	field := jen.Id(recv).Dot(fl.Name)
	g := fl.Type
	switch {
	case g.Named != nil && g.Named.Kind == Struct && fl.Pointer:
		return jen.If(field.Clone().Op("!=").Nil()).Block(field.Clone().Dot("ApplyDefaults").Call()), nil
	case g.Named != nil && g.Named.Kind == Struct:
		return field.Clone().Dot("ApplyDefaults").Call(), nil
	case g.Elem != nil && g.Elem.Named != nil && g.Elem.Named.Kind == Struct:
		return jen.For(jen.Id("i").Op(":=").Range().Add(field.Clone())).Block(
			field.Clone().Index(jen.Id("i")).Dot("ApplyDefaults").Call()), nil
	case (g.MapOf != nil && g.MapOf.Named != nil && g.MapOf.Named.Kind == Struct) ||
		(g.Named != nil && g.Named.Kind == Map && g.Named.Value.Named != nil && g.Named.Value.Named.Kind == Struct):
		return jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Add(field.Clone())).Block(
			jen.Id("v").Dot("ApplyDefaults").Call(),
			field.Clone().Index(jen.Id("k")).Op("=").Id("v"),
		), nil
	}
	return nil, fmt.Errorf("defaults inside %s (a collection of collections) are not supported", fl.Type)
}

// defaultLiteral checks that a default can be written as a Go literal.
func defaultLiteral(v any) (any, error) {
	switch x := v.(type) {
	case string, bool:
		return x, nil
	case json.Number:
		return x, nil
	}
	return nil, fmt.Errorf("default %v is not a string, number or boolean, so it cannot be applied in Go", v)
}
