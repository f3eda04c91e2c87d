package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Error is one configuration problem, located precisely enough to fix it without reading code:
// where it came from, the key path, what was expected and how to fix it.
type Error struct {
	// Origin is the file path, or "environment variable RUNLENS_…" or "flag --…".
	Origin string
	// Pointer is the JSON pointer of the offending key inside the file ("" for the whole
	// document, or when the problem did not come from the file).
	Pointer string
	// Line and Column are 1-based positions in the file; zero when unknown.
	Line, Column int
	// Problem says what is wrong and what was expected.
	Problem string
	// Fix says what to change.
	Fix string
}

// Error renders origin:line:column: pointer: problem (fix: …).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Origin)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Pointer != "" {
		b.WriteString(e.Pointer)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString(" (fix: ")
		b.WriteString(e.Fix)
		b.WriteString(")")
	}
	return b.String()
}

// Location renders where the problem is, origin:line:column, with a file origin relative to
// root: an answer names the file the way the user sees it in the project, never where the
// project lives on the machine.
func (e *Error) Location(root string) string {
	origin := e.Origin
	if filepath.IsAbs(origin) {
		if rel, err := filepath.Rel(root, origin); err == nil && !strings.HasPrefix(rel, "..") {
			origin = filepath.ToSlash(rel)
		} else {
			origin = filepath.Base(origin)
		}
	}
	if e.Line > 0 {
		origin += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	return origin
}

// Errors is every problem found in one load, so a user fixes them in one pass rather than one
// run at a time. errors.As with *Error finds the first.
type Errors []*Error

// maxErrors bounds how many problems one load reports; the rest are counted.
const maxErrors = 20

// Error renders one problem per line.
func (es Errors) Error() string {
	lines := make([]string, 0, len(es))
	for _, e := range es {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// bounded keeps at most maxErrors problems, replacing the rest by one that counts them.
func bounded(es Errors) Errors {
	if len(es) <= maxErrors {
		return es
	}
	rest := len(es) - (maxErrors - 1)
	out := append(Errors(nil), es[:maxErrors-1]...)
	return append(out, &Error{
		Origin:  es[0].Origin,
		Problem: fmt.Sprintf("%d more problems not shown", rest),
		Fix:     "fix the problems above and load again",
	})
}

// quoteValue renders a user value for a message, shortened so a long value (or a pasted
// secret) does not flood the output.
func quoteValue(s string) string {
	const limit = 40
	r := []rune(s)
	if len(r) > limit {
		return fmt.Sprintf("%q…", string(r[:limit]))
	}
	return fmt.Sprintf("%q", s)
}
