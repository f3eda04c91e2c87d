package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBackendsImportOnlyTheVocabulary holds the layering: a backend imports the vocabulary and
// the rules (package telemetry), never the engine that composes answers over it, so no backend
// calls back up into it.
func TestBackendsImportOnlyTheVocabulary(t *testing.T) {
	const self = "github.com/runlens/runlens/internal/telemetry/engine"
	backends := []string{"store", "clickhouse", "memory", "aspire", "jaeger"}
	for _, b := range backends {
		out, err := exec.Command("go", "list", "-deps", "github.com/runlens/runlens/internal/telemetry/"+b).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", b, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == self {
				t.Errorf("backend %s links the engine (%s)", b, self)
			}
		}
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/runlens/runlens/internal/telemetry").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if strings.Contains(string(out), self+"\n") {
		t.Errorf("the vocabulary package links the engine")
	}
}
