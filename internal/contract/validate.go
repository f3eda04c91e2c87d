package contract

import (
	"fmt"
	"slices"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/jsonread"
)

// FieldError is one failing field of an instance: where it is and what was expected, worded so
// a model reading a tool error can correct its next call. It is the generated type of a tool
// error's fields (defs/error.json), so the validator's findings go into an invalid_arguments
// error as they are. Pointer is the RFC 6901 JSON pointer of the failing value, "" for the
// root; for a missing or unexpected property it points at that property, so every field is
// named. Message says what was expected, e.g. "maximum is 100, got 500".
type FieldError = gen.ErrorField

// InputPath and OutputPath name a tool's published schemas, as Validate takes them.
func InputPath(tool string) string { return "tools/" + tool + ".input.json" }

// OutputPath names a tool's published output schema; see InputPath.
func OutputPath(tool string) string { return "tools/" + tool + ".output.json" }

// Validate validates instance (raw JSON) against the published schema at path (below the
// bundled folder, e.g. "tools/get_run.input.json" or "conventions.schema.json"). It returns
// every failing field, sorted by pointer, then message; nil means the instance is valid. The
// error is reserved for an instance that is not JSON or a path no schema is published at.
func Validate(path string, instance []byte) ([]FieldError, error) {
	v, err := Decode(instance)
	if err != nil {
		return nil, fmt.Errorf("decode instance for %s: %w", path, err)
	}
	return ValidateValue(path, v)
}

// ValidateValue is Validate for an instance already decoded by Decode.
func ValidateValue(path string, instance any) ([]FieldError, error) {
	vs, ok := gen.ValidatePublished(path, instance)
	if !ok {
		return nil, fmt.Errorf("no published schema %s", path)
	}
	return Fields(vs), nil
}

// Fields turns violations into field errors, sorted by pointer and then message, without
// duplicates (two branches of a oneOf can fail the same way).
func Fields(vs []gen.Violation) []FieldError {
	if len(vs) == 0 {
		return nil
	}
	out := make([]FieldError, len(vs))
	for i, v := range vs {
		out[i] = FieldError{Pointer: v.Pointer, Message: v.Message}
	}
	slices.SortFunc(out, func(a, b FieldError) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.Compact(out)
}

// Decode decodes exactly one JSON value the way the generated validators read it: numbers as
// json.Number, so bounds are compared exactly (jsonread.Decode).
func Decode(data []byte) (any, error) { return jsonread.Decode(data) }
