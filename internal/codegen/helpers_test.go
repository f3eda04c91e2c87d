package codegen

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

// fixtureFS loads the small fixture tree under testdata/schemas into memory, with some files
// replaced (nil content deletes a file).
func fixtureFS(t *testing.T, replace map[string][]byte) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	root := os.DirFS("testdata/schemas")
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		fsys[p] = &fstest.MapFile{Data: data}
		return nil
	})
	if err != nil {
		t.Fatalf("read fixture tree: %v", err)
	}
	for p, data := range replace {
		if data == nil {
			delete(fsys, p)
			continue
		}
		fsys[p] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// generateFixture runs the whole pipeline on the fixture tree.
func generateFixture(t *testing.T, replace map[string][]byte) (*Output, *Model) {
	t.Helper()
	out, m, err := Generate(fixtureFS(t, replace), "schemas")
	if err != nil {
		t.Fatalf("generate the fixture tree: %v", err)
	}
	return out, m
}
