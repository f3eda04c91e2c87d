// Package toolerr is the failure a model can act on: the error object of
// schemas/defs/error.json (the generated gen.ToolError, one type for the whole server) made a
// Go error. Flows return it; the server turns it into a tool result with isError set, so the
// model reads it instead of the client treating it as a protocol failure.
package toolerr

import (
	"errors"
	"fmt"

	"github.com/runlens/runlens/gen"
)

// Field is one argument that failed validation, named by its JSON pointer.
type Field = gen.ErrorField

// Error is a domain failure with a stable code. It adds nothing to the generated error object
// but the error interface, so its JSON form is exactly the published one.
type Error struct{ gen.ToolError }

// New returns an error with the given code and message.
func New(code gen.ErrorCode, message string) *Error {
	return &Error{gen.ToolError{Code: code, Message: message}}
}

// Newf is New with a formatted message.
func Newf(code gen.ErrorCode, format string, args ...any) *Error {
	return New(code, fmt.Sprintf(format, args...))
}

// WithHint says what to do next.
func (e *Error) WithHint(hint string) *Error { e.Hint = &hint; return e }

// WithChoices lists the valid alternatives (section slugs, known commands).
func (e *Error) WithChoices(choices []string) *Error { e.Choices = choices; return e }

// WithRetryable marks a failure the same call may not meet again.
func (e *Error) WithRetryable() *Error {
	retry := true
	e.Retryable = &retry
	return e
}

// HintText is the hint, "" when there is none.
func (e *Error) HintText() string {
	if e.Hint == nil {
		return ""
	}
	return *e.Hint
}

// Error renders the code, the message and the hint, for logs.
func (e *Error) Error() string {
	if h := e.HintText(); h != "" {
		return string(e.Code) + ": " + e.Message + " (" + h + ")"
	}
	return string(e.Code) + ": " + e.Message
}

// As finds a *Error in err's chain.
func As(err error) (*Error, bool) {
	var te *Error
	ok := errors.As(err, &te)
	return te, ok
}
