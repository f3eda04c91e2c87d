package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the generator's fixture schema tree into dst.
func copyTree(t *testing.T, dst string) {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "schemas")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckExitsOneWhenGeneratedFilesAreStale(t *testing.T) {
	root := t.TempDir()
	schemas := filepath.Join(root, "schemas")
	copyTree(t, schemas)
	gen := filepath.Join(root, "gen")
	args := []string{"-schemas", schemas, "-out", gen, "-bundled", filepath.Join(schemas, "bundled")}
	var stdout, stderr bytes.Buffer

	if code := run(append(args, "-check"), &stdout, &stderr); code != 1 {
		t.Fatalf("-check before generating: exit %d, want 1 (stderr %s)", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "+++ "+filepath.Join(gen, "types_gen.go")) {
		t.Errorf("-check printed no diff for the missing files:\n%s", stdout.String())
	}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	if code := run(append(args, "-check"), &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Fatalf("-check after generating: exit %d, diff %q", code, stdout.String())
	}
	if err := os.WriteFile(filepath.Join(gen, "types_gen.go"), []byte("package gen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run(append(args, "-check"), &stdout, &stderr); code != 1 {
		t.Fatalf("-check after a hand edit: exit %d, want 1", code)
	}
}

func TestABrokenSchemaWritesNothing(t *testing.T) {
	root := t.TempDir()
	schemas := filepath.Join(root, "schemas")
	copyTree(t, schemas)
	gen := filepath.Join(root, "gen")
	args := []string{"-schemas", schemas, "-out", gen, "-bundled", filepath.Join(schemas, "bundled")}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, stderr.String())
	}
	before, err := os.ReadFile(filepath.Join(gen, "types_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(schemas, "tools", "get_widget.input.json")
	data, _ := os.ReadFile(input)
	broken := strings.Replace(string(data), `"description": "Widget id."`, `"title": "no description"`, 1)
	if err := os.WriteFile(input, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 1 {
		t.Fatalf("generate a broken tree: exit %d, want 1", code)
	}
	if want := "schemas/tools/get_widget.input.json#/properties/id: property id has no description"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not point into the schema (%q):\n%s", want, stderr.String())
	}
	after, _ := os.ReadFile(filepath.Join(gen, "types_gen.go"))
	if !bytes.Equal(before, after) {
		t.Error("a failed generation changed gen/")
	}
}
