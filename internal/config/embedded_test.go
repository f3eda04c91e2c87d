package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The binary validates with the bundled schema from gen, the tests with the source files: both
// must report the same problems the same way.
func TestTheEmbeddedSchemaReportsLikeTheSourceSchema(t *testing.T) {
	files := []string{
		`{"comands": {}}`,
		`{"mcp": {"profile": "tiny"}}`,
		`{"conventions": {"executionIdKeys": "run.id"}}`,
		`{"commands": {"catalog": [{"path": "test"}]}}`,
		`{"telemetry": {"source": "postgres://x"}}`,
	}
	for _, f := range files {
		want := testLoader(t).Check("runlens.json", []byte(f))
		got := Check("runlens.json", []byte(f))
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s:\nembedded: %v\nsource:   %v", f, got, want)
		}
	}
}

func TestLoadUsesTheEmbeddedSchema(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, FileName), []byte(`{"docs": {"root": "site"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(root, nil, Overrides{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !strings.HasSuffix(cfg.Docs.Root, "site") {
		t.Errorf("docs root = %q, want the file's", cfg.Docs.Root)
	}
}
