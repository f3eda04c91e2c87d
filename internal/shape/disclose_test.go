package shape

import (
	"errors"
	"strings"
	"testing"
)

func TestDiscloseRefusesAFullAnswerFarPastItsCeilingBeforeRedacting(t *testing.T) {
	raw := []byte(`{"content":"` + strings.Repeat("x", 300) + `"}`)
	// A nil redactor would panic if used: the early refusal must not reach it.
	_, _, err := Disclose(raw, Full, Limits{FullCeiling: 100}, nil, nil)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != len(raw) || tl.Limit != 100 {
		t.Fatalf("err = %v, want a TooLargeError of %d bytes against 100", err, len(raw))
	}
}
