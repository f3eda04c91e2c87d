package jaeger

import (
	"strings"
	"testing"
)

// The endpoint an answer shows holds no credentials, parameters or fragment: any of them
// could hold a secret.
func TestTheShownEndpointHoldsNoSecret(t *testing.T) {
	for raw, want := range map[string]string{
		"http://user:hunter2@127.0.0.1:16686":       "http://127.0.0.1:16686",
		"https://jaeger.local/base?token=hunter2#x": "https://jaeger.local/base",
		"http://127.0.0.1:16686#user:hunter2@":      "http://127.0.0.1:16686",
	} {
		if got := redact(raw); got != want || strings.Contains(got, "hunter2") {
			t.Errorf("redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
