package otlp

import (
	"encoding/json"
	"fmt"
)

// maxValueDepth is how deeply attribute values may nest: the protobuf decoder refuses
// AnyValue, ArrayValue, KeyValueList and KeyValue messages nested more than 100 deep (pdata's
// proto.RecursionLimit), and OTLP/JSON is held to the same limit, so neither encoding lets a
// sender make the decoder work through a value nested hundreds of thousands of levels deep.
const maxValueDepth = 100

// maxJSONDepth bounds the nesting of any JSON container, for what checkJSONDepth cannot
// place (a deep value under an unknown key, which the decoder still has to skip). Every value
// level of the protobuf limit takes at most two containers (an object and the array holding
// it); sixteen more cover the messages around the deepest attributes (an exemplar's).
const maxJSONDepth = 2*maxValueDepth + 16

// valueKeys name the fields whose values start the attribute-value family: lists of KeyValue
// (resource, scope, span, event, link, log record and data point attributes, an exemplar's
// filtered attributes, a metric's metadata) and a log record's body (an AnyValue).
var valueKeys = map[string]keyKind{
	"attributes":          keyValueList,
	"filteredAttributes":  keyValueList,
	"filtered_attributes": keyValueList,
	"metadata":            keyValueList,
	"body":                keyAnyValue,
}

type keyKind uint8

const (
	keyOther keyKind = iota
	keyValueList
	keyAnyValue
)

// frame is an open JSON container.
type frame struct {
	array bool
	// value: the container is part of an attribute value (an object here is one of the
	// messages the protobuf decoder counts).
	value bool
	// key is the kind of the object's current key; for an array, the kind of the key that
	// holds it.
	key keyKind
}

// checkJSONDepth refuses an OTLP/JSON body whose attribute values nest deeper than
// maxValueDepth messages, as the protobuf decoder counts them, or whose containers nest deeper
// than maxJSONDepth. It reads the bytes once, without decoding: brackets inside strings are
// skipped, and malformed JSON is left for the decoder to refuse.
func checkJSONDepth(b []byte) error {
	stack := make([]frame, 0, 32)
	values := 0 // value objects open
	expectKey := false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			j, escaped := i+1, false
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(b) {
				return nil // unterminated: the decoder says so
			}
			if expectKey && len(stack) > 0 {
				stack[len(stack)-1].key = kindOf(b[i:j+1], escaped)
				expectKey = false
			}
			i = j
		case '{', '[':
			f := frame{array: b[i] == '['}
			if n := len(stack); n > 0 {
				top := stack[n-1]
				f.value = top.value ||
					(!f.array && top.array && top.key == keyValueList) ||
					(!f.array && !top.array && top.key == keyAnyValue)
				if f.array && !top.array {
					f.key = top.key
				}
			}
			if len(stack) == maxJSONDepth {
				return fmt.Errorf("OTLP/JSON nested too deeply: more than %d levels of objects and arrays", maxJSONDepth)
			}
			if f.value && !f.array {
				if values++; values > maxValueDepth {
					return fmt.Errorf("OTLP/JSON nested too deeply: attribute values nest more than %d levels (the protobuf limit)", maxValueDepth)
				}
			}
			stack = append(stack, f)
			expectKey = !f.array
		case '}', ']':
			if n := len(stack); n > 0 {
				if top := stack[n-1]; top.value && !top.array {
					values--
				}
				stack = stack[:n-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && !stack[len(stack)-1].array
		}
	}
	return nil
}

// kindOf classifies a quoted key, unescaping it first when it holds escapes (the decoder
// reads "\u0062ody" as body).
func kindOf(quoted []byte, escaped bool) keyKind {
	key := string(quoted[1 : len(quoted)-1])
	if escaped {
		if err := json.Unmarshal(quoted, &key); err != nil {
			return keyOther
		}
	}
	return valueKeys[key]
}
