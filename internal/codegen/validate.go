package codegen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// validatedKeywords are the assertions the generated validators check.
var validatedKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minLength": true, "maxLength": true, "pattern": true,
	"minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true, "anyOf": true,
	"oneOf": true, "allOf": true, "not": true, "$ref": true,
}

// annotationKeywords assert nothing under draft 2020-12 as runlens uses it: format is an
// annotation unless a validator opts into asserting it, and neither the published schemas'
// validators nor the clients' do.
var annotationKeywords = map[string]bool{
	"default": true, "description": true, "title": true, "examples": true, "format": true,
	"$schema": true, "$id": true, "$defs": true, "$comment": true,
}

// vnode is one schema node compiled into one generated function.
type vnode struct {
	name string   // the Go function name
	at   Location // the node's place in the source schemas
	body string   // the function body
}

// vprogram collects the generated validator: one function per schema node reached from a
// published schema, each node compiled once however many schemas share it.
type vprogram struct {
	src      *Source
	p        *problems
	nodes    []*vnode
	byLoc    map[Location]*vnode
	byBody   map[string]*vnode
	patterns []string // translated patterns, by index
	patIndex map[string]int
}

// compileValidators compiles the validator of every published schema; roots maps each published
// path to its root function name.
func (m *Model) compileValidators() (*vprogram, map[string]string, error) {
	vp := &vprogram{src: m.src, p: &problems{}, byLoc: map[Location]*vnode{}, byBody: map[string]*vnode{}, patIndex: map[string]int{}}
	roots := map[string]string{}
	for _, pub := range m.Published {
		at := Location{File: pub.Source}
		v, ok := m.src.node(at)
		if !ok {
			vp.p.add(at, "nothing to validate")
			continue
		}
		roots[pub.Path] = vp.compile(at, v)
	}
	return vp, roots, vp.p.err()
}

// compile returns the name of the function validating the schema v at location at, compiling
// it on first use. $refs are followed to their targets, which are compiled once.
func (vp *vprogram) compile(at Location, v any) string {
	switch b := v.(type) {
	case bool:
		if b {
			return "jsonvalid.Any"
		}
		return "jsonvalid.None"
	case map[string]any:
		if ref, ok := b["$ref"].(string); ok {
			target, tv, err := vp.src.resolveRef(at.Child("$ref"), ref)
			if err != nil {
				vp.p.addErr(at.Child("$ref"), err)
				return "jsonvalid.Any"
			}
			return vp.compile(target, tv)
		}
	default:
		vp.p.add(at, "a schema must be a JSON object or a boolean")
		return "jsonvalid.Any"
	}
	if n, ok := vp.byLoc[at]; ok {
		return n.name
	}
	body := vp.body(at, v.(map[string]any))
	if same, ok := vp.byBody[body]; ok {
		// Another node checks exactly the same: share its function.
		vp.byLoc[at] = same
		return same.name
	}
	n := &vnode{name: "v" + strconv.Itoa(len(vp.nodes)+1), at: at, body: body}
	vp.byLoc[at] = n
	vp.byBody[body] = n
	vp.nodes = append(vp.nodes, n)
	return n.name
}

// body renders the checks of one schema object, in the order draft 2020-12 validators apply
// them: type, const and enum first (a failure there ends the node), then the checks of the
// instance's own kind, then the applicators.
func (vp *vprogram) body(at Location, m map[string]any) string {
	for _, k := range sortedKeys(m) {
		if !validatedKeywords[k] && !annotationKeywords[k] && !strings.HasPrefix(k, "x-") {
			vp.p.add(at.Child(k), "keyword %s has no generated validator", k)
		}
	}
	var b strings.Builder
	vp.typeCheck(&b, at, m)
	vp.valueCheck(&b, at, m, "const")
	vp.valueCheck(&b, at, m, "enum")
	kinds := []struct {
		goType string
		render func(*strings.Builder, Location, map[string]any) bool
	}{
		{"map[string]any", vp.objectChecks},
		{"[]any", vp.arrayChecks},
		{"string", vp.stringChecks},
		{"json.Number", vp.numberChecks},
	}
	var cases strings.Builder
	for _, k := range kinds {
		var c strings.Builder
		if k.render(&c, at, m) {
			fmt.Fprintf(&cases, "case %s:\n%s", k.goType, c.String())
		}
	}
	if cases.Len() > 0 {
		b.WriteString("switch x := x.(type) {\n" + cases.String() + "}\n")
	}
	vp.applicators(&b, at, m)
	return b.String()
}

// typeCheck renders the type keyword: a mismatch is the node's only violation.
func (vp *vprogram) typeCheck(b *strings.Builder, at Location, m map[string]any) {
	raw, ok := m["type"]
	if !ok {
		return
	}
	types := typeList(m)
	if types == nil {
		vp.p.add(at.Child("type"), "type must be a type name or a list of them")
		return
	}
	var conds []string
	for _, t := range types {
		switch t {
		case "null", "boolean", "number", "integer", "string", "array", "object":
			conds = append(conds, fmt.Sprintf("jsonvalid.IsType(x, %q)", t))
		default:
			vp.p.add(at.Child("type"), "unknown type %q", t)
		}
	}
	if _, isList := raw.([]any); isList && len(types) == 0 {
		vp.p.add(at.Child("type"), "an empty type list admits nothing")
	}
	fmt.Fprintf(b, "if !(%s) {\nst.TypeError(x, %s)\nreturn\n}\n", strings.Join(conds, " || "), goStrings(types))
}

// valueCheck renders const or enum: a mismatch is the node's only violation.
func (vp *vprogram) valueCheck(b *strings.Builder, at Location, m map[string]any, key string) {
	raw, ok := m[key]
	if !ok {
		return
	}
	values := []any{raw}
	if key == "enum" {
		list, isList := raw.([]any)
		if !isList || len(list) == 0 {
			vp.p.add(at.Child(key), "enum must be a non-empty list")
			return
		}
		values = list
	}
	var conds, want, shown []string
	for i, v := range values {
		c, ok := equalsExpr(v)
		if !ok {
			loc := at.Child(key)
			if key == "enum" {
				loc = at.Child(key, itoa(i))
			}
			vp.p.add(loc, "%s value %v: only strings, numbers, booleans and null are validated", key, v)
			continue
		}
		conds = append(conds, c)
		want = append(want, fmt.Sprint(v))
		shown = append(shown, showValue(v))
	}
	msg := "must be one of " + strings.Join(shown, ", ")
	if key == "const" {
		msg = "must be " + shown[0]
	}
	fmt.Fprintf(b, "if !(%s) {\nst.ValueError(x, %q, %q, %s)\nreturn\n}\n", strings.Join(conds, " || "), key, msg, goStrings(want))
}

// equalsExpr renders a comparison of x with a scalar JSON value.
func equalsExpr(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("x == any(%q)", v), true
	case bool:
		return fmt.Sprintf("x == any(%t)", v), true
	case nil:
		return "x == nil", true
	case json.Number:
		return fmt.Sprintf("jsonvalid.NumberEquals(x, %s)", boundLit(v)), true
	}
	return "", false
}

// showValue renders an enum or const value in a message: strings in single quotes.
func showValue(v any) string {
	switch v := v.(type) {
	case string:
		return "'" + v + "'"
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// objectChecks renders the object keywords; false when there are none.
func (vp *vprogram) objectChecks(b *strings.Builder, at Location, m map[string]any) bool {
	n0 := b.Len()
	vp.countCheck(b, at, m, "minProperties", "len(x) < %s", "minimum is %s properties, got ")
	vp.countCheck(b, at, m, "maxProperties", "len(x) > %s", "maximum is %s properties, got ")
	if req, ok := m["required"]; ok {
		list, _ := req.([]any)
		for i, r := range list {
			name, ok := r.(string)
			if !ok {
				vp.p.add(at.Child("required", itoa(i)), "required must list property names")
				continue
			}
			fmt.Fprintf(b, "if _, ok := x[%q]; !ok {\nst.Missing(%q)\n}\n", name, name)
		}
		if list == nil {
			vp.p.add(at.Child("required"), "required must be a list of property names")
		}
	}
	props, _ := m["properties"].(map[string]any)
	names := sortedKeys(props)
	ap, hasAP := m["additionalProperties"]
	closed := hasAP && ap == false
	if len(names) > 0 && closed {
		b.WriteString("known := 0\n")
	}
	for _, name := range names {
		fn := vp.compile(at.Child("properties", name), props[name])
		fmt.Fprintf(b, "if y, ok := x[%q]; ok {\n", name)
		if closed {
			b.WriteString("known++\n")
		}
		if fn != "jsonvalid.Any" {
			fmt.Fprintf(b, "st.Push(%q)\n%s(y, st)\nst.Pop()\n", name, fn)
		}
		b.WriteString("}\n")
	}
	if hasAP && ap != true {
		vp.additional(b, at, ap, names, closed)
	}
	return b.Len() > n0
}

// additional renders additionalProperties: false (every undeclared property is a violation)
// or a schema (every undeclared property is checked against it), in key order.
func (vp *vprogram) additional(b *strings.Builder, at Location, ap any, names []string, closed bool) {
	undeclared := "if !jsonvalid.IsOneOf(k, " + goStrings(names) + ") {\n"
	if len(names) == 0 {
		undeclared = "{\n"
	}
	if closed {
		known := "0"
		if len(names) > 0 {
			known = "known"
		}
		fmt.Fprintf(b, "if len(x) > %s {\nfor _, k := range jsonvalid.SortedKeys(x) {\n%sst.Unexpected(k)\n}\n}\n}\n", known, undeclared)
		return
	}
	fn := vp.compile(at.Child("additionalProperties"), ap)
	fmt.Fprintf(b, "for _, k := range jsonvalid.SortedKeys(x) {\n%sst.Push(k)\n%s(x[k], st)\nst.Pop()\n}\n}\n", undeclared, fn)
}

// arrayChecks renders the array keywords; false when there are none.
func (vp *vprogram) arrayChecks(b *strings.Builder, at Location, m map[string]any) bool {
	n0 := b.Len()
	vp.countCheck(b, at, m, "minItems", "len(x) < %s", "minimum is %s items, got ")
	vp.countCheck(b, at, m, "maxItems", "len(x) > %s", "maximum is %s items, got ")
	if items, ok := m["items"]; ok {
		if _, isList := items.([]any); isList {
			vp.p.add(at.Child("items"), "items must be one schema")
		} else if fn := vp.compile(at.Child("items"), items); fn != "jsonvalid.Any" {
			fmt.Fprintf(b, "for i, y := range x {\nst.PushIndex(i)\n%s(y, st)\nst.Pop()\n}\n", fn)
		}
	}
	return b.Len() > n0
}

// stringChecks renders the string keywords; false when there are none.
func (vp *vprogram) stringChecks(b *strings.Builder, at Location, m map[string]any) bool {
	_, hasMin := m["minLength"]
	_, hasMax := m["maxLength"]
	n0 := b.Len()
	if hasMin || hasMax {
		b.WriteString("n := utf8.RuneCountInString(x)\n")
	}
	vp.countCheck(b, at, m, "minLength", "n < %s", "minimum length is %s characters, got ")
	vp.countCheck(b, at, m, "maxLength", "n > %s", "maximum length is %s characters, got ")
	if raw, ok := m["pattern"]; ok {
		p, isStr := raw.(string)
		if !isStr {
			vp.p.add(at.Child("pattern"), "pattern must be a string")
		} else if re, err := translatePattern(p); err != nil {
			vp.p.add(at.Child("pattern"), "pattern %q: %v", p, err)
		} else {
			i, seen := vp.patIndex[re]
			if !seen {
				i = len(vp.patterns)
				vp.patIndex[re] = i
				vp.patterns = append(vp.patterns, re)
			}
			fmt.Fprintf(b, "if !pattern(%d).MatchString(x) {\nst.PatternError(%q)\n}\n", i, p)
		}
	}
	return b.Len() > n0
}

// numberChecks renders the numeric keywords; false when there are none.
func (vp *vprogram) numberChecks(b *strings.Builder, at Location, m map[string]any) bool {
	n0 := b.Len()
	checks := []struct{ key, cond, msg string }{
		{"minimum", "< 0", "minimum is %s, got "},
		{"maximum", "> 0", "maximum is %s, got "},
		{"exclusiveMinimum", "<= 0", "must be greater than %s, got "},
		{"exclusiveMaximum", ">= 0", "must be less than %s, got "},
	}
	for _, c := range checks {
		n, ok := vp.number(at, m, c.key)
		if !ok {
			continue
		}
		fmt.Fprintf(b, "if jsonvalid.CompareNumber(x, %s) %s {\nst.NumberError(x, %q, %q)\n}\n", boundLit(n), c.cond, c.key, fmt.Sprintf(c.msg, ratText(n)))
	}
	if n, ok := vp.number(at, m, "multipleOf"); ok {
		r, _ := new(big.Rat).SetString(string(n))
		if r.Sign() <= 0 {
			vp.p.add(at.Child("multipleOf"), "multipleOf must be greater than 0")
		} else {
			fmt.Fprintf(b, "if !jsonvalid.IsMultipleOf(x, %q) {\nst.NumberError(x, \"multipleOf\", %q)\n}\n", string(n), "must be a multiple of "+ratText(n)+", got ")
		}
	}
	return b.Len() > n0
}

// number reads a numeric keyword; false when it is absent or not a number (then reported).
func (vp *vprogram) number(at Location, m map[string]any, key string) (json.Number, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	n, isNum := raw.(json.Number)
	if _, err := new(big.Rat).SetString(string(n)); !isNum || !err {
		vp.p.add(at.Child(key), "%s must be a number", key)
		return "", false
	}
	return n, true
}

// countCheck renders a length or count bound; cond and msg take the bound.
func (vp *vprogram) countCheck(b *strings.Builder, at Location, m map[string]any, key, cond, msg string) {
	raw, ok := m[key]
	if !ok {
		return
	}
	n, isNum := raw.(json.Number)
	v, err := strconv.Atoi(string(n))
	if !isNum || err != nil || v < 0 {
		vp.p.add(at.Child(key), "%s must be a non-negative integer", key)
		return
	}
	count := "len(x)"
	if strings.HasPrefix(cond, "n ") {
		count = "n"
	}
	fmt.Fprintf(b, "if "+cond+" {\nst.Fail(%q, %q+strconv.Itoa(%s))\n}\n", strconv.Itoa(v), key, fmt.Sprintf(msg, strconv.Itoa(v)), count)
}

// applicators renders not, allOf, anyOf and oneOf.
func (vp *vprogram) applicators(b *strings.Builder, at Location, m map[string]any) {
	if sub, ok := m["not"]; ok {
		fmt.Fprintf(b, "if st.Passes(x, %s) {\nst.Fail(\"not\", \"must not match the excluded shape\")\n}\n", vp.compile(at.Child("not"), sub))
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		raw, ok := m[key]
		if !ok {
			continue
		}
		list, isList := raw.([]any)
		if !isList || len(list) == 0 {
			vp.p.add(at.Child(key), "%s must be a non-empty list of schemas", key)
			continue
		}
		fns := make([]string, len(list))
		for i, sub := range list {
			fns[i] = vp.compile(at.Child(key, itoa(i)), sub)
		}
		fmt.Fprintf(b, "st.%s(x, %s)\n", strings.ToUpper(key[:1])+key[1:], strings.Join(fns, ", "))
	}
}

// boundLit renders a schema number as a jsonvalid.Bound literal.
func boundLit(n json.Number) string {
	f, _ := strconv.ParseFloat(string(n), 64) // a number the schema checks decoded; ±Inf only beyond 1e308
	if math.IsInf(f, 0) {
		f = math.Copysign(math.MaxFloat64, f)
	}
	float := strconv.FormatFloat(f, 'g', -1, 64)
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return fmt.Sprintf("jsonvalid.Bound{Text: %q, Float: %s, Integer: %d, IsInteger: true}", string(n), float, i)
	}
	return fmt.Sprintf("jsonvalid.Bound{Text: %q, Float: %s}", string(n), float)
}

// ratText renders a schema number in a message: exactly when it is an integer, as a short
// decimal otherwise.
func ratText(n json.Number) string {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return string(n)
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

// goStrings renders a Go []string literal.
func goStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

// renderValidators renders validate_gen.go: the runtime, one function per schema node and the
// lookup from published path to root function.
func (m *Model) renderValidators() ([]byte, error) {
	vp, roots, err := m.compileValidators()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(header(m.src.Root + "/tools, defs and configuration schemas (what " + m.src.Root + "/" + BundledFolder + " publishes)"))
	b.WriteString(validatorRuntime)
	b.WriteString("\n// validatorFor returns the root function of the published schema at path.\nfunc validatorFor(path string) func(any, *jsonvalid.State) {\nswitch path {\n")
	paths := sortedKeys(roots)
	for _, p := range paths {
		fmt.Fprintf(&b, "case %q:\nreturn %s\n", p, roots[p])
	}
	b.WriteString("}\nreturn nil\n}\n")
	if len(vp.patterns) > 0 {
		b.WriteString("\n// patterns are the schemas' patterns rewritten for RE2 with their ECMA-262 meaning, each\n// compiled on first use.\nvar patterns = [...]jsonvalid.LazyPattern{\n")
		for _, p := range vp.patterns {
			fmt.Fprintf(&b, "{Expr: %q},\n", p)
		}
		b.WriteString("}\n\n// pattern returns compiled pattern i.\nfunc pattern(i int) *regexp.Regexp { return patterns[i].Get() }\n")
	} else {
		b.WriteString("\n// pattern is unused: no schema has a pattern.\nfunc pattern(int) *regexp.Regexp { return nil }\n")
	}
	for _, n := range vp.nodes {
		fmt.Fprintf(&b, "\n// %s validates %s (and every node that checks the same).\nfunc %s(x any, st *jsonvalid.State) {\n%s}\n", n.name, n.at, n.name, n.body)
	}
	return gofmt("validate_gen.go", []byte(b.String()))
}
