package codegen

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// itoa formats a list index as a pointer token.
func itoa(i int) string { return strconv.Itoa(i) }

// isInteger reports whether a JSON number has no fractional part (1.0 counts, as in JSON Schema).
func isInteger(n json.Number) bool {
	r, ok := new(big.Rat).SetString(string(n))
	return ok && r.IsInt()
}

// jsonTypeOf names the JSON type of a decoded value; integers are "integer".
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// typeAllows reports whether a schema's type list admits a value of JSON type t.
func typeAllows(types []string, t string) bool {
	if len(types) == 0 {
		return true
	}
	for _, want := range types {
		if want == t || (want == "number" && t == "integer") {
			return true
		}
	}
	return false
}

// checkValue checks a literal (a default) against the simple constraints of the schema that
// holds it: type, enum, numeric bounds and string length. It returns "" when the value fits.
func checkValue(m map[string]any, v any) string {
	if !typeAllows(typeList(m), jsonTypeOf(v)) {
		return fmt.Sprintf("is %s, but the schema's type is %v", jsonTypeOf(v), typeList(m))
	}
	if enum, ok := m["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if reflect.DeepEqual(normalizeNumber(e), normalizeNumber(v)) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Sprintf("%v is not one of the enum values", v)
		}
	}
	if n, ok := v.(json.Number); ok {
		val, _ := new(big.Rat).SetString(string(n))
		if val == nil {
			return "is not a number"
		}
		bound := func(k string) *big.Rat {
			b, _ := m[k].(json.Number)
			r, ok := new(big.Rat).SetString(string(b))
			if !ok {
				return nil
			}
			return r
		}
		if b := bound("minimum"); b != nil && val.Cmp(b) < 0 {
			return fmt.Sprintf("%s is below minimum %s", n, m["minimum"])
		}
		if b := bound("maximum"); b != nil && val.Cmp(b) > 0 {
			return fmt.Sprintf("%s is above maximum %s", n, m["maximum"])
		}
		if b := bound("exclusiveMinimum"); b != nil && val.Cmp(b) <= 0 {
			return fmt.Sprintf("%s is not above exclusiveMinimum %s", n, m["exclusiveMinimum"])
		}
		if b := bound("exclusiveMaximum"); b != nil && val.Cmp(b) >= 0 {
			return fmt.Sprintf("%s is not below exclusiveMaximum %s", n, m["exclusiveMaximum"])
		}
	}
	if s, ok := v.(string); ok {
		n := utf8.RuneCountInString(s)
		if b, ok := intKeyword(m, "minLength"); ok && n < b {
			return fmt.Sprintf("%q is shorter than minLength %d", s, b)
		}
		if b, ok := intKeyword(m, "maxLength"); ok && n > b {
			return fmt.Sprintf("%q is longer than maxLength %d", s, b)
		}
	}
	return ""
}

// normalizeNumber makes 1 and 1.0 compare equal.
func normalizeNumber(v any) any {
	if n, ok := v.(json.Number); ok {
		if r, ok := new(big.Rat).SetString(string(n)); ok {
			return r.RatString()
		}
	}
	return v
}

// intKeyword reads a non-negative integer keyword such as maxLength.
func intKeyword(m map[string]any, k string) (int, bool) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil
}

// jsonNumber builds a JSON number literal.
func jsonNumber(s string) json.Number { return json.Number(s) }

// typeList returns the JSON type names a schema node allows.
func typeList(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// hasType reports whether a schema node allows the JSON type name.
func hasType(m map[string]any, name string) bool {
	for _, t := range typeList(m) {
		if t == name {
			return true
		}
	}
	return false
}
