package shape

import (
	"slices"
	"testing"
)

func TestSecretEnvValues(t *testing.T) {
	env := []string{
		"GITHUB_TOKEN=ghp_value_one",
		"AWS_SECRET_ACCESS_KEY=aws-secret-value",
		"AWS_ACCESS_KEY_ID=AKIAEXAMPLEVALUE",
		"AWS_REGION=us-east-1",
		"DATABASE_URL=postgres://u:p@db/app",
		"MY_API_KEY=my-api-key-value",
		"STRIPE_KEY=stripe-key-value",
		"DB_PASS=db-pass-value",
		"SENTRY_DSN=https://k@sentry/1",
		"Session_Secret=lower-case-name",
		"HOME=/home/someone",
		"PWD=/work/project",
		"TOKENIZERS_PARALLELISM=false-ish",
		"XDG_SESSION_TYPE=wayland",
		"SHORT_TOKEN=abc12",
		"EMPTY_SECRET=",
		"DUPLICATE_TOKEN=ghp_value_one",
		"MALFORMED",
	}
	got := SecretEnvValues(env)
	want := []string{
		"DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "MY_API_KEY", "STRIPE_KEY",
		"DB_PASS", "SENTRY_DSN", "Session_Secret", "GITHUB_TOKEN",
	}
	values := map[string]string{}
	for _, kv := range env {
		for i := range kv {
			if kv[i] == '=' {
				values[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	for _, name := range want {
		if !slices.Contains(got, values[name]) {
			t.Errorf("SecretEnvValues lost the value of %s; got %q", name, got)
		}
	}
	for _, name := range []string{"AWS_REGION", "HOME", "PWD", "TOKENIZERS_PARALLELISM", "XDG_SESSION_TYPE", "SHORT_TOKEN"} {
		if slices.Contains(got, values[name]) {
			t.Errorf("SecretEnvValues kept the value of %s, which is not secret or too short", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("SecretEnvValues returned %d values, want %d (duplicates merged): %q", len(got), len(want), got)
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return len(b) - len(a) }) {
		t.Errorf("SecretEnvValues = %q, want longest first", got)
	}
}

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
