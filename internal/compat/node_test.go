package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// nodeEnv is the environment of a Node client: a private HOME, so no client reads or writes a
// developer's own settings (the Inspector keeps a catalog and OAuth state under HOME), and a
// compile cache shared by the run, so the many short client processes start as an installed
// CLI would after its first use.
func nodeEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NODE_COMPILE_CACHE=" + filepath.Join(buildDir, "node-compile-cache"),
		"NO_COLOR=1",
		"FORCE_COLOR=0",
	}
}

// scriptDir copies the Node scripts of testdata/ into a fresh folder beside a node_modules link
// to the pinned tooling, so their bare imports resolve to the pinned packages.
func scriptDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(nodeTools(t), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join("testdata", "*.mjs"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no Node scripts in testdata: %v", err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeJSON writes v as a JSON file in dir and returns its path.
func writeJSON(t testing.TB, dir, name string, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
