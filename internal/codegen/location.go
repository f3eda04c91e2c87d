package codegen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Location names one JSON value in the schema tree: the file (slash-separated, starting with
// the schemas root, e.g. "schemas/tools/get_run.input.json") and an RFC 6901 pointer into it.
type Location struct {
	File    string
	Pointer string
}

// String renders the location the way errors show it: file#pointer.
func (l Location) String() string { return l.File + "#" + l.Pointer }

// Child returns the location of a value below l, one pointer token per argument.
func (l Location) Child(tokens ...string) Location {
	p := l.Pointer
	for _, t := range tokens {
		p += "/" + escapeToken(t)
	}
	return Location{File: l.File, Pointer: p}
}

// Tokens returns the unescaped pointer tokens of l.
func (l Location) Tokens() []string { return splitPointer(l.Pointer) }

// escapeToken escapes one JSON pointer token.
func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// splitPointer splits a JSON pointer into unescaped tokens; "" is the root.
func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

// SchemaError is one problem at one place in the schemas.
type SchemaError struct {
	At  Location
	Msg string
}

// Error renders the problem as "file#pointer: message".
func (e *SchemaError) Error() string { return e.At.String() + ": " + e.Msg }

// errorf builds a SchemaError at a location.
func errorf(at Location, format string, args ...any) *SchemaError {
	return &SchemaError{At: at, Msg: fmt.Sprintf(format, args...)}
}

// problems collects schema errors so that one run reports all of them, in a stable order.
type problems struct{ errs []*SchemaError }

// add records one problem.
func (p *problems) add(at Location, format string, args ...any) {
	p.errs = append(p.errs, errorf(at, format, args...))
}

// addErr records an error, keeping its location when it has one.
func (p *problems) addErr(at Location, err error) {
	var se *SchemaError
	if errors.As(err, &se) {
		p.errs = append(p.errs, se)
		return
	}
	p.errs = append(p.errs, &SchemaError{At: at, Msg: err.Error()})
}

// err returns the collected problems sorted by place and deduplicated, or nil.
func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	slices.SortFunc(p.errs, func(a, b *SchemaError) int {
		if c := strings.Compare(a.At.File, b.At.File); c != 0 {
			return c
		}
		if c := strings.Compare(a.At.Pointer, b.At.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	errs := make([]error, 0, len(p.errs))
	var last string
	for _, e := range p.errs {
		if s := e.Error(); s != last {
			errs = append(errs, e)
			last = s
		}
	}
	return errors.Join(errs...)
}
