package codegen

// validatorRuntime is the fixed part of validate_gen.go: the violation type, the entry point
// and the helpers every generated node function calls.
const validatorRuntime = `
package gen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Violation is one failing keyword of a JSON instance.
type Violation struct {
	// Pointer is the RFC 6901 JSON pointer of the failing value, "" for the root; for a missing
	// or unexpected property, the pointer of that property.
	Pointer string
	// Keyword is the schema keyword that failed, such as "type", "required" or "maxLength".
	Keyword string
	// Message says what was expected, such as "maximum is 100, got 500". It echoes numbers,
	// types and unexpected property names, never a string value of the instance.
	Message string
	// Property is the missing or unexpected property of a required or additionalProperties
	// violation.
	Property string
	// Want is what the keyword asks for: the types of type, the values of enum and const, the
	// pattern of pattern.
	Want []string
	// Got is the instance's JSON type for type, its value for enum and const (rendered by
	// fmt.Sprint; a caller bounds it before showing it).
	Got string
}

// ValidatePublished validates a decoded JSON instance against the published schema at path
// (below the bundled folder, such as "tools/get_run.input.json"). The instance is what a
// json.Decoder with UseNumber yields: objects as map[string]any, arrays as []any, numbers as
// json.Number. It returns every violation, in the order the schema's keywords were checked,
// and false when no schema is published at path.
func ValidatePublished(path string, instance any) ([]Violation, bool) {
	f := validatorFor(path)
	if f == nil {
		return nil, false
	}
	var st validation
	f(instance, &st)
	return st.out, true
}

// validation is the state of one validation: where in the instance it is, and what failed.
type validation struct {
	path []pathToken
	out  []Violation
}

// pathToken is one step into the instance: a property name, or an array index when index >= 0.
type pathToken struct {
	name  string
	index int
}

func (st *validation) push(name string) { st.path = append(st.path, pathToken{name: name, index: -1}) }
func (st *validation) pushIndex(i int)  { st.path = append(st.path, pathToken{index: i}) }
func (st *validation) pop()             { st.path = st.path[:len(st.path)-1] }

// pointer renders the current place (and, if child is not nil, one property below it).
func (st *validation) pointer(child *string) string {
	var b strings.Builder
	write := func(name string) {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1"))
	}
	for _, t := range st.path {
		if t.index >= 0 {
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(t.index))
			continue
		}
		write(t.name)
	}
	if child != nil {
		write(*child)
	}
	return b.String()
}

// fail records a violation at the current place.
func (st *validation) fail(keyword, message string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: keyword, Message: message})
}

// missing records a required property that is absent.
func (st *validation) missing(name string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(&name), Keyword: "required",
		Message: "missing property '" + name + "'", Property: name})
}

// unexpected records a property that additionalProperties: false does not allow.
func (st *validation) unexpected(name string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(&name), Keyword: "additionalProperties",
		Message: "additional property '" + name + "' not allowed", Property: name})
}

// typeError records a value of the wrong JSON type.
func (st *validation) typeError(x any, want []string) {
	got := jsonType(x)
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: "type",
		Message: "expected " + strings.Join(want, " or ") + ", got " + got, Want: want, Got: got})
}

// valueError records a value outside an enum or other than a const.
func (st *validation) valueError(x any, keyword, message string, want []string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: keyword, Message: message,
		Want: want, Got: fmt.Sprint(x)})
}

// patternError records a string that does not match its pattern.
func (st *validation) patternError(p string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: "pattern",
		Message: "must match pattern " + p, Want: []string{p}})
}

// numberError records a number outside a bound; message ends where the number goes.
func (st *validation) numberError(x json.Number, keyword, message string) {
	st.fail(keyword, message+numberText(x))
}

// passes reports whether x is valid against f, recording nothing.
func (st *validation) passes(x any, f func(any, *validation)) bool {
	mark := len(st.out)
	f(x, st)
	ok := len(st.out) == mark
	st.out = st.out[:mark]
	return ok
}

// allOf applies every subschema.
func (st *validation) allOf(x any, fs ...func(any, *validation)) {
	for _, f := range fs {
		f(x, st)
	}
}

// anyOf passes when one subschema passes; otherwise every subschema's violations stand.
func (st *validation) anyOf(x any, fs ...func(any, *validation)) {
	mark := len(st.out)
	for _, f := range fs {
		before := len(st.out)
		f(x, st)
		if len(st.out) == before {
			st.out = st.out[:mark]
			return
		}
	}
}

// oneOf passes when exactly one subschema passes; when none does, every subschema's
// violations stand; when several do, that is the violation.
func (st *validation) oneOf(x any, fs ...func(any, *validation)) {
	mark := len(st.out)
	matched := 0
	for _, f := range fs {
		before := len(st.out)
		f(x, st)
		if len(st.out) == before {
			if matched++; matched == 2 {
				break
			}
		}
	}
	if matched == 0 {
		return
	}
	st.out = st.out[:mark]
	if matched > 1 {
		st.fail("oneOf", "must match exactly one allowed shape, matched several")
	}
}

// validAny is the schema true.
func validAny(any, *validation) {}

// validNone is the schema false.
func validNone(_ any, st *validation) { st.fail("false", "no value is allowed here") }

// jsonType names the JSON type of a decoded value.
func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

// isType reports whether x has JSON type t; a number without a fractional part is an integer.
func isType(x any, t string) bool {
	if t == "integer" {
		n, ok := x.(json.Number)
		return ok && isInteger(n)
	}
	return jsonType(x) == t
}

// isOneOf reports whether s is one of list.
func isOneOf(s string, list []string) bool { return slices.Contains(list, s) }

// sortedKeys returns an object's keys in order, so violations come in a stable order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// numberBound is a number written in a schema: its text, its nearest float64, and its int64
// value when it is one.
type numberBound struct {
	text      string
	float     float64
	integer   int64
	isInteger bool
}

// rat returns a number as an exact rational; encoding/json only produces valid numbers.
func rat(text string) *big.Rat {
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return new(big.Rat)
	}
	return r
}

// isInteger reports whether a JSON number has no fractional part (1.0 counts).
func isInteger(n json.Number) bool {
	if _, ok := parseInt(string(n)); ok {
		return true
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil && math.Abs(f) < 1<<52 && f != math.Trunc(f) {
		// Below 2^52 a float with a fraction is the rounding of a number with one.
		return false
	}
	return rat(string(n)).IsInt()
}

// parseInt parses a plain decimal integer of at most 18 digits without allocating; false for
// anything else (a fraction, an exponent, a longer number).
func parseInt(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// compareNumber compares a JSON number with a bound exactly: -1, 0 or +1.
func compareNumber(n json.Number, b numberBound) int {
	if b.isInteger {
		if i, ok := parseInt(string(n)); ok {
			return cmpInt(i, b.integer)
		}
	}
	// Rounding to float64 keeps order, so different floats compare as the numbers do; only
	// numbers that round onto the same float need the exact comparison.
	if f, err := strconv.ParseFloat(string(n), 64); err == nil && f != b.float {
		if f < b.float {
			return -1
		}
		return 1
	}
	return rat(string(n)).Cmp(rat(b.text))
}

// cmpInt compares two integers: -1, 0 or +1.
func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// numberEquals reports whether x is a number equal to b.
func numberEquals(x any, b numberBound) bool {
	n, ok := x.(json.Number)
	return ok && compareNumber(n, b) == 0
}

// isMultipleOf reports whether n divided by the schema number m is an integer.
func isMultipleOf(n json.Number, m string) bool {
	return new(big.Rat).Quo(rat(string(n)), rat(m)).IsInt()
}

// numberText renders an instance number in a message: exactly when it is an integer, as a
// short decimal otherwise.
func numberText(n json.Number) string {
	if i, ok := parseInt(string(n)); ok {
		return strconv.FormatInt(i, 10)
	}
	r := rat(string(n))
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

// lazyPattern is a pattern compiled the first time it is used, so start-up compiles none.
type lazyPattern struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// get returns the compiled pattern; the generator compiled every pattern, so it cannot fail.
func (p *lazyPattern) get() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.expr) })
	return p.re
}

// runeCount keeps unicode/utf8 imported for the generated length checks.
var _ = utf8.RuneCountInString
`
