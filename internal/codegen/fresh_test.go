package codegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// projectRoot is the module root, seen from this package.
const projectRoot = "../.."

// generateProject runs the generator on the project's schemas.
func generateProject(t *testing.T) (*Output, *Model) {
	t.Helper()
	out, m, err := Generate(os.DirFS(filepath.Join(projectRoot, "schemas")), "schemas")
	if err != nil {
		t.Fatalf("generate from schemas/: %v", err)
	}
	return out, m
}

// TestGeneratedFilesAreFresh regenerates in memory into a temporary folder and compares with
// gen/ and schemas/bundled/ byte for byte: a schema edited without `make generate`, or a
// generated file edited by hand, fails plain `go test ./...`.
func TestGeneratedFilesAreFresh(t *testing.T) {
	out, _ := generateProject(t)
	tmp := Dirs{Gen: filepath.Join(t.TempDir(), "gen"), Bundled: filepath.Join(t.TempDir(), "bundled"), Listed: filepath.Join(t.TempDir(), "listed")}
	if err := Apply(out, tmp); err != nil {
		t.Fatal(err)
	}
	var diff strings.Builder
	clean, err := Check(out, Dirs{Gen: filepath.Join(projectRoot, "gen"), Bundled: filepath.Join(projectRoot, "schemas", "bundled"), Listed: filepath.Join(projectRoot, "schemas", "listed")}, &diff)
	if err != nil {
		t.Fatal(err)
	}
	if !clean {
		t.Errorf("gen/ or schemas/bundled/ is stale; run `make generate` (or `go generate ./gen`):\n%s", diff.String())
	}
}
