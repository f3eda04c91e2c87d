package oracle

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// FieldError is one failing field, the type the generated validators report too
// (contract.FieldError), so the two can be compared as they are.
type FieldError = gen.ErrorField

// fieldErrors flattens the validator's error tree into its leaves, one FieldError per failing
// field, sorted by pointer and then message, without duplicates.
func fieldErrors(root *jsonschema.ValidationError) []FieldError {
	var out []FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, leafErrors(e)...)
	}
	walk(root)
	slices.SortFunc(out, func(a, b FieldError) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.Compact(out)
}

// leafErrors turns one leaf of the error tree into field errors. Required and
// additionalProperties failures name several properties at once; each becomes its own field.
func leafErrors(e *jsonschema.ValidationError) []FieldError {
	at := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		errs := make([]FieldError, 0, len(k.Missing))
		for _, name := range k.Missing {
			errs = append(errs, FieldError{
				Pointer: pointer(append(slices.Clone(e.InstanceLocation), name)),
				Message: fmt.Sprintf("missing property '%s'", name),
			})
		}
		return errs
	case *kind.AdditionalProperties:
		errs := make([]FieldError, 0, len(k.Properties))
		for _, name := range k.Properties {
			errs = append(errs, FieldError{
				Pointer: pointer(append(slices.Clone(e.InstanceLocation), name)),
				Message: fmt.Sprintf("additional property '%s' not allowed", name),
			})
		}
		return errs
	}
	return []FieldError{{Pointer: at, Message: Describe(e.ErrorKind)}}
}

// Describe words one error kind as an expectation. Values the caller sent are echoed only when
// they are numbers or types, never strings, so an answer cannot carry a pasted secret back.
func Describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return "must be one of " + joinValues(k.Want)
	case *kind.Const:
		return "must be " + joinValues([]any{k.Want})
	case *kind.Minimum:
		return fmt.Sprintf("minimum is %s, got %s", rat(k.Want), rat(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("maximum is %s, got %s", rat(k.Want), rat(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("must be greater than %s, got %s", rat(k.Want), rat(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("must be less than %s, got %s", rat(k.Want), rat(k.Got))
	case *kind.MultipleOf:
		return fmt.Sprintf("must be a multiple of %s, got %s", rat(k.Want), rat(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("minimum length is %d characters, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("maximum length is %d characters, got %d", k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("must match pattern %s", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("minimum is %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("maximum is %d items, got %d", k.Want, k.Got)
	case *kind.UniqueItems:
		return fmt.Sprintf("items must be unique: items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return fmt.Sprintf("minimum is %d properties, got %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("maximum is %d properties, got %d", k.Want, k.Got)
	case *kind.Format:
		return fmt.Sprintf("must be a valid %s", k.Want)
	case *kind.Not:
		return "must not match the excluded shape"
	case *kind.OneOf:
		if len(k.Subschemas) == 0 {
			return "must match exactly one allowed shape, matched none"
		}
		return "must match exactly one allowed shape, matched several"
	case *kind.AnyOf:
		return "must match at least one allowed shape"
	case *kind.FalseSchema:
		return "no value is allowed here"
	}
	return k.LocalizedString(englishPrinter)
}

// englishPrinter renders the validator's own wording for the rare kinds worded above.
var englishPrinter = message.NewPrinter(language.English)

// joinValues renders enum and const values as the schema would write them.
func joinValues(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		switch v := v.(type) {
		case string:
			parts[i] = "'" + v + "'"
		case nil:
			parts[i] = "null"
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, ", ")
}

// rat prints a number exactly when it is an integer, as a short decimal otherwise.
func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

// pointer encodes instance location tokens as an RFC 6901 JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}
