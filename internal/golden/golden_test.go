package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadWritesOnlyWhenUpdatingOrMissingOutsideCI(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.golden")
	t.Setenv("UPDATE_GOLDEN", "")
	t.Setenv("CI", "")
	if got := Read(t, path, []byte("one")); string(got) != "one" {
		t.Fatalf("a missing file outside CI reads %q; want it written", got)
	}
	if got := Read(t, path, []byte("two")); string(got) != "one" {
		t.Fatalf("an existing file reads %q; want the committed %q", got, "one")
	}
	t.Setenv("UPDATE_GOLDEN", "1")
	if got := Read(t, path, []byte("three")); string(got) != "three" {
		t.Fatalf("updating reads %q", got)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "three" {
		t.Fatalf("updating wrote %q", raw)
	}
}
