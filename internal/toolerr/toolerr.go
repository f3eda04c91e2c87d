// Package toolerr is the failure a model can act on: a stable code from the closed list of
// schemas/defs/error.json, a message, and optionally a hint, a retry flag and the failing fields.
// Flows return it as a Go error; the server turns it into a tool result with isError set, so the
// model reads it instead of the client treating it as a protocol failure.
package toolerr

import (
	"errors"
	"fmt"
)

// Field is one argument that failed validation, named by its JSON pointer.
type Field struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Error is a domain failure with a stable code. Its JSON form is the error object of the
// published schemas.
type Error struct {
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	Hint      string   `json:"hint,omitempty"`
	Retryable bool     `json:"retryable,omitempty"`
	Fields    []Field  `json:"fields,omitempty"`
	Choices   []string `json:"choices,omitempty"`
}

// New returns an error with the given code and message.
func New(code, message string) *Error { return &Error{Code: code, Message: message} }

// Newf is New with a formatted message.
func Newf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with a hint telling the model what to do next.
func (e *Error) WithHint(hint string) *Error { e.Hint = hint; return e }

// WithChoices returns e listing valid alternatives (section slugs, known commands…).
func (e *Error) WithChoices(choices []string) *Error { e.Choices = choices; return e }

// WithRetryable marks e as worth retrying unchanged (for example an unreachable source).
func (e *Error) WithRetryable() *Error { e.Retryable = true; return e }

// Error implements error.
func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Code + ": " + e.Message + " (" + e.Hint + ")"
	}
	return e.Code + ": " + e.Message
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var te *Error
	ok := errors.As(err, &te)
	return te, ok
}
