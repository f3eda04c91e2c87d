package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The binary validates with the generated validator of the bundled schema; the run-time JSON
// Schema library, compiling the source files, is the oracle: both must report the same
// problems the same way, for every keyword the configuration schema uses.
func TestTheGeneratedValidatorReportsLikeTheOracle(t *testing.T) {
	oracle, err := oracleLoader()
	if err != nil {
		t.Fatal(err)
	}
	files := []string{
		`{"comands": {}}`,
		`{"mcp": {"profile": "tiny"}}`,
		`{"conventions": {"executionIdKeys": "run.id"}}`,
		`{"commands": {"catalog": [{"path": "test"}]}}`,
		`{"telemetry": {"source": "postgres://x"}}`,
		`[]`,
		`{"mcp": {"profile": "full", "extra": 1, "other": 2}}`,
		`{"commands": {"outputTailBytes": 0}}`,
		`{"commands": {"catalog": [{"argv": [], "path": 7}]}}`,
		`{"conventions": {"domains": [{"domain": "Bad Name", "when": {}}]}}`,
		`{"conventions": {"domains": [{"domain": "db", "when": {"key": "a", "keyPrefix": "b"}}]}}`,
		`{"conventions": {"domains": [{"domain": "db", "when": {"keyPrefix": "b", "equals": "x"}}]}}`,
	}
	for _, f := range files {
		want := oracle.Check("runlens.json", []byte(f))
		got := Check("runlens.json", []byte(f))
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s:\ngenerated: %v\noracle:    %v", f, got, want)
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
