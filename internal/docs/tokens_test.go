package docs

import (
	"slices"
	"strings"
	"testing"
)

func TestEachToken(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"splits on punctuation and space", "set-up the_receiver, now!", []string{"set", "up", "the", "receiver", "now"}},
		{"lowercases", "OpenTelemetry HTTP", []string{"opentelemetry", "http"}},
		{"keeps digits with letters", "http2 v1.8.7", []string{"http2", "v1", "8", "7"}},
		{"handles other scripts", "Größe Über 東京 café", []string{"größe", "über", "東京", "café"}},
		{"drops overlong runs", strings.Repeat("x", maxTokenBytes+1) + " ok", []string{"ok"}},
		{"nothing in punctuation", "--- ... !!!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			eachToken(tt.in, func(tok token) {
				if tt.in[tok.start:tok.end] == "" {
					t.Errorf("empty token span for %q", tok.term)
				}
				got = append(got, tok.term)
			})
			if !slices.Equal(got, tt.want) {
				t.Fatalf("tokens = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestQueryTermsAreDistinctAndBounded(t *testing.T) {
	if got := queryTerms("Retention retention RETENTION policy"); !slices.Equal(got, []string{"retention", "policy"}) {
		t.Fatalf("terms = %q", got)
	}
	var many []string
	for i := range 3 * maxQueryTerms {
		many = append(many, strings.Repeat("w", 1+i%50)+string(rune('a'+i%26)))
	}
	if got := queryTerms(strings.Join(many, " ")); len(got) != maxQueryTerms {
		t.Fatalf("%d terms kept, want %d", len(got), maxQueryTerms)
	}
}
