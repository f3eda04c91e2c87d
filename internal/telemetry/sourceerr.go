package telemetry

import "errors"

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
