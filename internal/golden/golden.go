// Package golden holds the one rule of the project's golden files, for tests: UPDATE_GOLDEN=1
// writes them from what the code produces; otherwise a test compares with what is committed,
// and a missing file is written (and said) on a developer's machine but fails under CI.
package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// Updating reports whether the run rewrites golden files (UPDATE_GOLDEN=1).
func Updating() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Read returns the golden file at path for a test to compare got with. When updating, or when
// the file is missing outside CI, it first writes got there (creating the folder).
func Read(t testing.TB, path string, got []byte) []byte {
	t.Helper()
	want, err := os.ReadFile(path)
	missing := os.IsNotExist(err)
	if Updating() || (missing && os.Getenv("CI") == "") {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		if !Updating() {
			t.Logf("wrote the missing golden file %s", path)
		}
		return got
	}
	if err != nil {
		t.Fatalf("golden file %s: %v (run with UPDATE_GOLDEN=1 to write it)", path, err)
	}
	return want
}
