package commands

import (
	"slices"
	"testing"
)

func TestChildEnvKeepsOrderAndDropsOnlySecrets(t *testing.T) {
	got := childEnv([]string{"A=1", "API_TOKEN=x", "B=2", "MALFORMED", "RUNLENS_LOG_LEVEL=debug", "PWD=/p", "GH_PAT=y"},
		[]string{"*_TOKEN", "RUNLENS_*", "*_PAT", "*"})
	if want := []string{"PWD=/p"}; !slices.Equal(got, want) {
		t.Errorf("childEnv with a lone * = %q, want only the known non-secret %q", got, want)
	}
	got = childEnv([]string{"A=1", "API_TOKEN=x", "B=2", "MALFORMED", "RUNLENS_LOG_LEVEL=debug", "PWD=/p", "GH_PAT=y"},
		[]string{"*_TOKEN", "RUNLENS_*", "*_PAT"})
	if want := []string{"A=1", "B=2", "MALFORMED", "PWD=/p"}; !slices.Equal(got, want) {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
}
