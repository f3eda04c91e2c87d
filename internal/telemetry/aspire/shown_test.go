package aspire

import (
	"strings"
	"testing"
)

// The endpoint an answer shows holds no credentials, parameters or fragment: any of them
// could hold a secret.
func TestTheShownEndpointHoldsNoSecret(t *testing.T) {
	for raw, want := range map[string]string{
		"http://user:hunter2@127.0.0.1:18888":           "http://127.0.0.1:18888",
		"https://dash.local:18888/?api_key=hunter2#x":   "https://dash.local:18888/",
		"http://127.0.0.1:18888/base?t=hunter2#hunter2": "http://127.0.0.1:18888/base",
	} {
		if got := shown(raw); got != want || strings.Contains(got, "hunter2") {
			t.Errorf("shown(%q) = %q, want %q", raw, got, want)
		}
	}
}
