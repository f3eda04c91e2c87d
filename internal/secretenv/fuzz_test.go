package secretenv

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzValuesFollowTheClassification checks, for any variable, that the needles Values returns
// agree with Secret: a secret value long enough to scrub is a needle, and so is the password of
// a URL carrying one, on its own; and that no input makes either panic or take long.
func FuzzValuesFollowTheClassification(f *testing.F) {
	for _, kv := range [][2]string{
		{"DATABASE_URL", "postgres://app:s3cretPassw0rd@db:5432/app"},
		{"UPSTREAM", "https://deploy:p%40ss%2Fw0rd@git.example.com/x.git"},
		{"MYSQL_DSN", "app:my5qlPassw0rd@tcp(db:3306)/app"},
		{"DOCKER_AUTH_CONFIG", `{"auths":{"r.example.com":{"auth":"ZGVwbG95OnB3"}}}`},
		{"GOOGLE_CREDENTIALS", `{"private_key_id":"0123456789abcdef","nested":{"client_secret":"x1y2z3w4"}}`},
		{"REDIS_URL", "redis://localhost:6379/0"},
		{"OAUTH_REDIRECT_PATH", "/callback/oauth"},
		{"RUNLENS_TELEMETRY", "clickhouse://reader:chPassw0rd@ch:9000/otel"},
		{"PWD", "/home/someone"},
		{"X", "a://b:c@d@e:f@g"},
	} {
		f.Add(kv[0], kv[1])
	}
	m := New(DefaultPatterns()...)
	f.Fuzz(func(t *testing.T, name, value string) {
		if strings.Contains(name, "=") {
			t.Skip("an environment entry's name ends at its first =")
		}
		start := time.Now()
		got := m.Values([]string{name + "=" + value})
		secret := m.Secret(name, value)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("classifying %q took %v", name, took)
		}
		for _, v := range got {
			if len(v) < MinValueLength {
				t.Errorf("needle %q is shorter than %d bytes", v, MinValueLength)
			}
		}
		if !slices.IsSortedFunc(got, func(a, b string) int { return len(b) - len(a) }) {
			t.Errorf("Values = %q, want longest first", got)
		}
		scrubbable := len(value) >= MinValueLength && !strings.HasPrefix(strings.ToUpper(name), OwnPrefix) && !isExistingPath(value)
		if (secret && scrubbable || CarriesPassword(value) && len(value) >= MinValueLength) && !slices.Contains(got, value) {
			t.Errorf("%s=%q is secret but not a needle: %q", name, value, got)
		}
		if !secret && !CarriesPassword(value) && len(got) > 0 {
			t.Errorf("%s=%q is not secret but gives needles %q", name, value, got)
		}
		if CarriesPassword(value) && len(value) >= MinValueLength {
			for _, pw := range passwords(value) {
				if len(pw) >= MinValueLength && !slices.Contains(got, pw) {
					t.Errorf("the password %q of %q is not a needle of its own: %q", pw, value, got)
				}
			}
		}
	})
}
