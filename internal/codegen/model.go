package codegen

import "slices"

// Model is everything the renderers need, decided once: the tools in registry order, every
// named Go type with its fields, and the published schemas. Naming decisions are methods on
// the Model, so templates never branch on names.
type Model struct {
	src *Source
	// Full and Compact are the tools of each profile, in registry order.
	Full, Compact []*Tool
	// Config and Conventions are the root types of the configuration and telemetry
	// conventions schemas, nil when the tree has none.
	Config, Conventions *Type
	// Published holds every bundled schema, sorted by path.
	Published []*Published

	types map[string]*Type   // by Go name
	byLoc map[Location]*Type // by the location that defines them
}

// Tool is one tool with its generated types and published schemas.
type Tool struct {
	Meta          ToolMeta
	Source        *ToolSource
	Input, Output *Type
	// InputSchema and OutputSchema are the published schemas, compact JSON.
	InputSchema, OutputSchema []byte
	// ListedInput and ListedOutput are what tools/list serves of them (listing.go).
	ListedInput, ListedOutput []byte
}

// Published is one bundled, self-contained schema as tools/list serves it.
type Published struct {
	// Path is the file's path below the bundled folder, e.g. "tools/get_run.input.json".
	Path string
	// Source is the schema file it was bundled from.
	Source string
	// Compact is the schema as compact JSON with sorted keys.
	Compact []byte
}

// Kind says what Go declaration a named type becomes.
type Kind int

// The kinds of named types.
const (
	// Struct is a closed JSON object: a Go struct.
	Struct Kind = iota
	// Enum is a typed enum: a named Go type with one constant per string value.
	Enum
	// Map is an open JSON object with typed values: a named map type.
	Map
)

// Type is one named Go type.
type Type struct {
	Name        string
	Loc         Location
	Kind        Kind
	Description string
	// Fields of a Struct, sorted by JSON name (go-jsonschema's order).
	Fields []*Field
	// EnumValues of an Enum in schema order, and EnumBase, the Go type underneath.
	EnumValues []any
	EnumBase   string
	// Value is the value type of a Map.
	Value *GoType
	// Group is the generated file the type goes to: "types" or "config".
	Group string
}

// Field is one property of a Struct.
type Field struct {
	JSON        string
	Name        string
	Description string
	Required    bool
	// Pointer is true when the Go field is a pointer (see Model.pointerField).
	Pointer bool
	Type    *GoType
	// Default is the schema default (string, json.Number or bool), nil when there is none.
	Default any
	Loc     Location
	schema  map[string]any
}

// GoType is a Go type expression: exactly one of Prim, Named, Elem (a slice) or MapOf is set.
type GoType struct {
	Prim  string // "string", "int", "int64", "float64", "bool" or "any"
	Named *Type
	Elem  *GoType
	MapOf *GoType
}

// String renders the type expression as Go source.
func (g *GoType) String() string {
	switch {
	case g.Named != nil:
		return g.Named.Name
	case g.Elem != nil:
		return "[]" + g.Elem.String()
	case g.MapOf != nil:
		return "map[string]" + g.MapOf.String()
	}
	return g.Prim
}

// nillable reports whether the zero value already means "absent" (nil).
func (g *GoType) nillable() bool {
	return g.Elem != nil || g.MapOf != nil || g.Prim == "any" || (g.Named != nil && g.Named.Kind == Map)
}

// Build resolves the schema tree into a Model. It expects a tree that passed Lint.
func Build(src *Source) (*Model, error) {
	m := &Model{src: src, types: map[string]*Type{}, byLoc: map[Location]*Type{}}
	var p problems
	build := func(ts []*ToolSource) []*Tool {
		var tools []*Tool
		for _, ts := range ts {
			t := &Tool{Meta: ts.Meta, Source: ts}
			var err error
			if t.Input, err = m.rootType(Location{File: ts.InputFile}, m.ToolTypeName(ts.Meta.Name, "Input")); err != nil {
				p.addErr(Location{File: ts.InputFile}, err)
			}
			if t.Output, err = m.rootType(Location{File: ts.OutputFile}, m.ToolTypeName(ts.Meta.Name, "Output")); err != nil {
				p.addErr(Location{File: ts.OutputFile}, err)
			}
			tools = append(tools, t)
		}
		return tools
	}
	m.Full = build(src.Full)
	m.Compact = build(src.Compact)
	// Every shared definition that is an object or an enum gets its Go type, used by a tool
	// schema or not: defs/error.json is the domain error object flows return (ToolError,
	// with its ErrorCode constants) although no output schema contains it.
	for _, f := range sortedKeys(src.Docs) {
		if m.isDefsFile(f) {
			if _, err := m.goType(Location{File: f}, src.Docs[f], ""); err != nil {
				p.addErr(Location{File: f}, err)
			}
		}
	}
	for _, f := range []struct {
		file string
		into **Type
	}{{src.Config, &m.Config}, {src.Conventions, &m.Conventions}} {
		if f.file == "" {
			continue
		}
		t, err := m.rootType(Location{File: f.file}, m.rootName(f.file))
		if err != nil {
			p.addErr(Location{File: f.file}, err)
			continue
		}
		*f.into = t
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if err := m.publish(); err != nil {
		return nil, err
	}
	return m, nil
}

// Types returns every named type sorted by name.
func (m *Model) Types() []*Type {
	out := make([]*Type, 0, len(m.types))
	for _, name := range sortedKeys(m.types) {
		out = append(out, m.types[name])
	}
	return out
}

// Tools returns every tool, full profile first.
func (m *Model) Tools() []*Tool { return append(slices.Clone(m.Full), m.Compact...) }

// rootType declares the type of a whole schema file under a chosen name.
func (m *Model) rootType(at Location, name string) (*Type, error) {
	v, _ := m.src.node(at)
	g, err := m.goType(at, v, name)
	if err != nil {
		return nil, err
	}
	if g.Named == nil {
		return nil, errorf(at, "the root must be an object schema, got Go type %s", g)
	}
	return g.Named, nil
}

// goType maps the schema at location at to a Go type, declaring named types on the way.
// forced names the type when at is a file root (tool inputs and outputs have fixed names).
func (m *Model) goType(at Location, v any, forced string) (*GoType, error) {
	loc, tv, _, err := m.src.deref(at, v)
	if err != nil {
		return nil, err
	}
	s, ok := tv.(map[string]any)
	if !ok {
		return &GoType{Prim: "any"}, nil
	}
	if t, ok := m.byLoc[loc]; ok {
		return &GoType{Named: t}, nil
	}
	if forced != "" && loc != at {
		forced = ""
	}
	declare := func(kind Kind) (*Type, error) {
		name := forced
		if name == "" {
			name = m.TypeName(loc)
		}
		if other, taken := m.types[name]; taken {
			return nil, errorf(loc, "Go type name %s is already used for %s; rename one of them", name, other.Loc)
		}
		desc, _ := s["description"].(string)
		t := &Type{Name: name, Loc: loc, Kind: kind, Description: desc, Group: m.GroupOf(loc.File)}
		m.types[name] = t
		m.byLoc[loc] = t
		return t, nil
	}
	types := nonNull(typeList(s))
	if enum, ok := s["enum"].([]any); ok {
		t, err := declare(Enum)
		if err != nil {
			return nil, err
		}
		t.EnumValues = enum
		t.EnumBase = goPrim(types)
		return &GoType{Named: t}, nil
	}
	if len(types) != 1 {
		if c, ok := s["const"]; ok && len(types) == 0 {
			return &GoType{Prim: goPrim([]string{jsonTypeOf(c)})}, nil
		}
		return &GoType{Prim: "any"}, nil
	}
	switch types[0] {
	case "object":
		props, _ := s["properties"].(map[string]any)
		if ap, isSchema := s["additionalProperties"].(map[string]any); isSchema && len(props) == 0 {
			value, err := m.goType(loc.Child("additionalProperties"), ap, "")
			if err != nil {
				return nil, err
			}
			if !m.namedMapAt(loc) {
				return &GoType{MapOf: value}, nil
			}
			t, err := declare(Map)
			if err != nil {
				return nil, err
			}
			t.Value = value
			return &GoType{Named: t}, nil
		}
		t, err := declare(Struct)
		if err != nil {
			return nil, err
		}
		if err := m.fields(t, loc, s); err != nil {
			return nil, err
		}
		return &GoType{Named: t}, nil
	case "array":
		items, ok := s["items"]
		if !ok {
			return &GoType{Elem: &GoType{Prim: "any"}}, nil
		}
		elem, err := m.goType(loc.Child("items"), items, "")
		if err != nil {
			return nil, err
		}
		return &GoType{Elem: elem}, nil
	}
	return &GoType{Prim: integerWidth(goPrim(types), s)}, nil
}

// integerWidth picks the Go integer type of a JSON integer from its bounds. An integer the
// schema bounds with a maximum (a limit, a depth, a heading level, a timeout, an exit code, a
// configured size) is an int: Go counts, indexes and sizes with int. An integer with no
// maximum is an open-ended quantity measured in the world, an epoch millisecond or a count
// (spans, logs, errors, samples, items, bytes), and is an int64, the type the telemetry engine
// and the stores compute them in, so flows copy them without conversions.
func integerWidth(prim string, s map[string]any) string {
	if _, bounded := s["maximum"]; prim == "int" && !bounded {
		return "int64"
	}
	return prim
}

// fields declares the fields of a struct type.
func (m *Model) fields(t *Type, loc Location, s map[string]any) error {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	names := map[string]string{}
	for _, name := range sortedKeys(props) {
		at := loc.Child("properties", name)
		_, pv, desc, err := m.src.deref(at, props[name])
		if err != nil {
			return err
		}
		gt, err := m.goType(at, props[name], "")
		if err != nil {
			return err
		}
		f := &Field{
			JSON: name, Name: m.FieldName(name), Description: desc, Required: required[name],
			Type: gt, Loc: at,
		}
		f.schema, _ = pv.(map[string]any)
		if site, ok := props[name].(map[string]any); ok && site["default"] != nil {
			f.Default = site["default"]
		} else if f.schema != nil {
			f.Default = f.schema["default"]
		}
		if other, dup := names[f.Name]; dup {
			return errorf(at, "properties %s and %s both become Go field %s", other, name, f.Name)
		}
		names[f.Name] = name
		f.Pointer = m.pointerField(f)
		t.Fields = append(t.Fields, f)
	}
	return nil
}

// pointerField decides whether a field is a pointer. Required fields are values. Optional
// slices, maps and interfaces are values too: nil already means absent. An optional field with
// a default is a value when its zero value can never be sent (a limit whose minimum is 1, an
// enum without ""): zero then means "absent", ApplyDefaults fills it in, and flows read a plain
// value. Every other optional field is a pointer, so that absent and zero stay distinct.
func (m *Model) pointerField(f *Field) bool {
	if f.Required || f.Type.nillable() {
		return false
	}
	if f.Default != nil && zeroInvalid(f.schema) {
		return false
	}
	return true
}

// namedMapAt reports whether a map schema at loc gets a named type: only a map that is a whole
// file or a definition does; a map property is written inline (map[string]string).
func (m *Model) namedMapAt(loc Location) bool {
	toks := loc.Tokens()
	return len(toks) == 0 || (len(toks) == 2 && toks[0] == "$defs")
}

// nonNull drops "null" from a type list: a nullable field is simply optional in Go.
func nonNull(types []string) []string {
	var out []string
	for _, t := range types {
		if t != "null" {
			out = append(out, t)
		}
	}
	return out
}

// goPrim maps a single JSON type to a Go type.
func goPrim(types []string) string {
	if len(types) != 1 {
		return "any"
	}
	switch types[0] {
	case "string":
		return "string"
	case "integer":
		return "int"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	}
	return "any"
}
