package telemetry

import (
	"errors"
	"fmt"
	"slices"
)

// ErrRefused: the source answered but refused the request (a credential missing or wrong). It
// is not ErrUnreachable: the tools answer it as an error with the fix, never as a quiet
// "unreachable" status, because waiting will not make it answer.
var ErrRefused = errors.New("telemetry source refused the request")

// SourceError is a failure of a remote source described for people: what went wrong and what
// fixes it. Kind is ErrUnreachable or ErrRefused, so callers can still tell the two apart. The
// message names the endpoint at most, never a credential, so it may be shown in an answer.
type SourceError struct {
	Kind    error
	Message string
	// Hint says how to fix it (the doctor's fix, the tool error's hint).
	Hint string
}

func (e *SourceError) Error() string { return e.Message }
func (e *SourceError) Unwrap() error { return e.Kind }

// Fix returns the hint, so the doctor shows it as the check's fix.
func (e *SourceError) Fix() string { return e.Hint }

// UnknownNameError is a filter that names something the conventions do not define, such as a
// domain: the query could only answer nothing, so it is refused with the names that exist.
type UnknownNameError struct {
	// Arg is the argument's name (domain); Name what it asked for.
	Arg, Name string
	// Known are the names that exist, in configuration order.
	Known []string
}

func (e *UnknownNameError) Error() string {
	return fmt.Sprintf("no %s is named %q", e.Arg, e.Name)
}

// CheckDomain returns an *UnknownNameError when domain is set and not one of the
// conventions' domains (docs/semantics.md R6).
func CheckDomain(domain string, names []string) error {
	if domain == "" || slices.Contains(names, domain) {
		return nil
	}
	return &UnknownNameError{Arg: "domain", Name: domain, Known: names}
}
