package codegen

// validatorRuntimePkg is the package the generated validators call: package jsonvalid.
const validatorRuntimePkg = "github.com/runlens/runlens/internal/jsonvalid"

// validatorRuntime is the fixed part of validate_gen.go: the violation type and the entry point.
// Everything the generated node functions call is package jsonvalid's, written once.
const validatorRuntime = `
package gen

import (
	"encoding/json"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/runlens/runlens/internal/jsonvalid"
)

// Violation is one failing keyword of a JSON instance (see jsonvalid.Violation).
type Violation = jsonvalid.Violation

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
	var st jsonvalid.State
	f(instance, &st)
	return st.Violations(), true
}

// The generated checks use these packages only where a schema asks for them.
var (
	_ = json.Number("")
	_ = strconv.Itoa
	_ = utf8.RuneCountInString
	_ = (*regexp.Regexp)(nil)
)
`
