package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/config"
)

// A docs root as long as the schema allows is quoted by the doctor's checks; the doctor still
// answers, each check within its bounds, instead of failing its own output schema.
func TestTheDoctorAnswersForALongDocsRoot(t *testing.T) {
	root := t.TempDir()
	file := `{"docs": {"root": "` + strings.Repeat("d", 4000) + `"}}`
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(root, nil, config.Overrides{ProjectRoot: root, Receiver: "off"}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer a.Close()
	if isErr, code, msg, _ := callTool(t, a, "doctor", `{"family": "workspace"}`); isErr {
		t.Fatalf("doctor = %s %q, want an answer", code, msg)
	}
}
