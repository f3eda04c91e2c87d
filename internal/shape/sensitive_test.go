package shape

import (
	"testing"
)

func TestKeyMatcher(t *testing.T) {
	m := newKeyMatcher(DefaultSensitiveKeys())
	tests := []struct {
		key  string
		want bool
	}{
		{"http.request.header.authorization", true},
		{"HTTP.Request.Header.Authorization", true},
		{"http.request.header.cookie", true},
		{"http.response.header.set-cookie", true},
		{"db.connection_string", true},
		{"connection_string", true},
		{"db.password", true},
		{"password", true},
		{"userPassword", true},
		{"app.secret", true},
		{"oauth.access_token", true},
		{"stripe.api_key", true},
		{"x-api-key", true},
		{"service.apikey", true},
		{"aws.secret_access_key", true},
		{"gcp.credentials", true},
		{"http.request.header.accept", false},
		{"db.user", false},
		{"gen_ai.usage.input_tokens", false},
		{"password_policy", false},
		{"secret_name", false},
		{"tokenizer", false},
		{"keyboard.layout", false},
	}
	for _, tt := range tests {
		if got := matchAny(m.globs, tt.key); got != tt.want {
			t.Errorf("sensitive(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestGlobFold(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"*.x", ".x", true},
		{"*.x", "a.b.x", true},
		{"*.x", "x", false},
		{"*ab*ab", "xxabyyab", true},
		{"*ab*ab", "xxabyyac", false},
		{"exact", "EXACT", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := globFold(tt.pattern, tt.s); got != tt.want {
			t.Errorf("globFold(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// containsFold is the obvious substring search the trigger index is checked against.
func containsFold(s, lowerSub string) bool {
	n := len(lowerSub)
	if n == 0 {
		return true
	}
	first := lowerSub[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper = first - ('a' - 'A')
	}
	for i := 0; i+n <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		if equalFoldASCII(s[i:i+n], lowerSub) {
			return true
		}
	}
	return false
}

// equalFoldASCII reports whether s equals lowerT ignoring ASCII case.
func equalFoldASCII(s, lowerT string) bool {
	if len(s) != len(lowerT) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) != lowerT[i] {
			return false
		}
	}
	return true
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   bool
	}{
		{"Authorization: x", "authorization", true},
		{"BEARER x", "bearer", true},
		{"bear", "bearer", false},
		{"", "", true},
		{"abc", "", true},
		{"xxPaSsWoRd", "password", true},
	}
	for _, tt := range tests {
		if got := containsFold(tt.s, tt.sub); got != tt.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", tt.s, tt.sub, got, tt.want)
		}
	}
}
