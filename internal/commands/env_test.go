package commands

import (
	"slices"
	"testing"
)

func TestSecretPatterns(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		varName string
		want    bool
	}{
		{"an exact name matches itself", "DATABASE_URL", "DATABASE_URL", true},
		{"an exact name does not match a longer one", "DATABASE_URL", "DATABASE_URL2", false},
		{"matching ignores case", "GITHUB_TOKEN", "github_token", true},
		{"a trailing star matches a prefix", "RUNLENS_*", "RUNLENS_TELEMETRY", true},
		{"a trailing star does not match elsewhere", "RUNLENS_*", "MY_RUNLENS_X", false},
		{"a leading star matches a suffix", "*_TOKEN", "NPM_TOKEN", true},
		{"a leading star does not match a middle", "*_TOKEN", "NPM_TOKEN_FILE", false},
		{"stars on both sides match anywhere", "*PASSWORD*", "PGPASSWORDFILE", true},
		{"a lone star matches everything", "*", "PATH", true},
		{"an empty pattern matches nothing", "", "PATH", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isSecret(tt.varName, []string{tt.pattern}); got != tt.want {
				t.Errorf("isSecret(%q, %q) = %v, want %v", tt.varName, tt.pattern, got, tt.want)
			}
		})
	}
}

func TestChildEnvKeepsOrderAndDropsOnlySecrets(t *testing.T) {
	got := childEnv([]string{"A=1", "API_TOKEN=x", "B=2", "MALFORMED", "RUNLENS_LOG_LEVEL=debug"}, []string{"*_TOKEN", "RUNLENS_*"})
	if want := []string{"A=1", "B=2", "MALFORMED"}; !slices.Equal(got, want) {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
}
