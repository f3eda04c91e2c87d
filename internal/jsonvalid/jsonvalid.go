// Package jsonvalid is the run-time part of the validators that make generate emits into
// gen/validate_gen.go: the state of one validation, the violations it records, and the
// helpers every generated node function calls. One copy, imported by the generated code; the
// generator emits only the schema-specific functions.
package jsonvalid

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

// State is the state of one validation: where in the instance it is, and what failed.
type State struct {
	path []pathToken
	out  []Violation
}

// Violations are what the validation recorded, in the order the schema's keywords were
// checked.
func (st *State) Violations() []Violation { return st.out }

// pathToken is one step into the instance: a property name, or an array index when index >= 0.
type pathToken struct {
	name  string
	index int
}

func (st *State) Push(name string) { st.path = append(st.path, pathToken{name: name, index: -1}) }
func (st *State) PushIndex(i int)  { st.path = append(st.path, pathToken{index: i}) }
func (st *State) Pop()             { st.path = st.path[:len(st.path)-1] }

// pointer renders the current place (and, if child is not nil, one property below it).
func (st *State) pointer(child *string) string {
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

// Fail records a violation at the current place.
func (st *State) Fail(keyword, message string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: keyword, Message: message})
}

// Missing records a required property that is absent.
func (st *State) Missing(name string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(&name), Keyword: "required",
		Message: "missing property '" + name + "'", Property: name})
}

// Unexpected records a property that additionalProperties: false does not allow.
func (st *State) Unexpected(name string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(&name), Keyword: "additionalProperties",
		Message: "additional property '" + name + "' not allowed", Property: name})
}

// TypeError records a value of the wrong JSON type.
func (st *State) TypeError(x any, want []string) {
	got := jsonType(x)
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: "type",
		Message: "expected " + strings.Join(want, " or ") + ", got " + got, Want: want, Got: got})
}

// ValueError records a value outside an enum or other than a const.
func (st *State) ValueError(x any, keyword, message string, want []string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: keyword, Message: message,
		Want: want, Got: fmt.Sprint(x)})
}

// PatternError records a string that does not match its pattern.
func (st *State) PatternError(p string) {
	st.out = append(st.out, Violation{Pointer: st.pointer(nil), Keyword: "pattern",
		Message: "must match pattern " + p, Want: []string{p}})
}

// NumberError records a number outside a bound; message ends where the number goes.
func (st *State) NumberError(x json.Number, keyword, message string) {
	st.Fail(keyword, message+numberText(x))
}

// Passes reports whether x is valid against f, recording nothing.
func (st *State) Passes(x any, f func(any, *State)) bool {
	mark := len(st.out)
	f(x, st)
	ok := len(st.out) == mark
	st.out = st.out[:mark]
	return ok
}

// AllOf applies every subschema.
func (st *State) AllOf(x any, fs ...func(any, *State)) {
	for _, f := range fs {
		f(x, st)
	}
}

// AnyOf passes when one subschema passes; otherwise every subschema's violations stand.
func (st *State) AnyOf(x any, fs ...func(any, *State)) {
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

// OneOf passes when exactly one subschema passes; when none does, every subschema's
// violations stand; when several do, that is the violation.
func (st *State) OneOf(x any, fs ...func(any, *State)) {
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
		st.Fail("oneOf", "must match exactly one allowed shape, matched several")
	}
}

// Any is the schema true.
func Any(any, *State) {}

// None is the schema false.
func None(_ any, st *State) { st.Fail("false", "no value is allowed here") }

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

// IsType reports whether x has JSON type t; a number without a fractional part is an integer.
func IsType(x any, t string) bool {
	if t == "integer" {
		n, ok := x.(json.Number)
		return ok && isInteger(n)
	}
	return jsonType(x) == t
}

// IsOneOf reports whether s is one of list.
func IsOneOf(s string, list []string) bool { return slices.Contains(list, s) }

// SortedKeys returns an object's keys in order, so violations come in a stable order.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Bound is a number written in a schema: its text, its nearest float64, and its int64
// value when it is one.
type Bound struct {
	Text      string
	Float     float64
	Integer   int64
	IsInteger bool
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

// CompareNumber compares a JSON number with a bound exactly: -1, 0 or +1.
func CompareNumber(n json.Number, b Bound) int {
	if b.IsInteger {
		if i, ok := parseInt(string(n)); ok {
			return cmpInt(i, b.Integer)
		}
	}
	// Rounding to float64 keeps order, so different floats compare as the numbers do; only
	// numbers that round onto the same float need the exact comparison.
	if f, err := strconv.ParseFloat(string(n), 64); err == nil && f != b.Float {
		if f < b.Float {
			return -1
		}
		return 1
	}
	return rat(string(n)).Cmp(rat(b.Text))
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

// NumberEquals reports whether x is a number equal to b.
func NumberEquals(x any, b Bound) bool {
	n, ok := x.(json.Number)
	return ok && CompareNumber(n, b) == 0
}

// IsMultipleOf reports whether n divided by the schema number m is an integer.
func IsMultipleOf(n json.Number, m string) bool {
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

// LazyPattern is a pattern compiled the first time it is used, so start-up compiles none.
type LazyPattern struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled pattern; the generator compiled every pattern, so it cannot fail.
func (p *LazyPattern) Get() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.Expr) })
	return p.re
}
