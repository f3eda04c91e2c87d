package codegen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outputDirs makes empty gen and bundled folders in a temporary directory.
func outputDirs(t *testing.T) Dirs {
	t.Helper()
	root := t.TempDir()
	d := Dirs{Gen: filepath.Join(root, "gen"), Bundled: filepath.Join(root, "schemas", "bundled"), Listed: filepath.Join(root, "schemas", "listed")}
	if err := os.MkdirAll(d.Gen, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestApplyWritesEveryFileAndLeavesNoTemporaryFolder(t *testing.T) {
	out, _ := generateFixture(t, nil)
	d := outputDirs(t)
	if err := Apply(out, d); err != nil {
		t.Fatal(err)
	}
	for name, want := range out.Gen {
		got, err := os.ReadFile(filepath.Join(d.Gen, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("gen/%s not written as rendered (err %v)", name, err)
		}
	}
	for rel, want := range out.Bundled {
		got, err := os.ReadFile(filepath.Join(d.Bundled, filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("bundled/%s not written as rendered (err %v)", rel, err)
		}
	}
	for _, dir := range []string{d.Gen, d.Bundled} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".runlens-gen-") {
				t.Errorf("temporary folder %s left behind", filepath.Join(dir, e.Name()))
			}
		}
	}
}

func TestApplyRemovesStaleOutputsAndKeepsHandWrittenFiles(t *testing.T) {
	out, _ := generateFixture(t, nil)
	d := outputDirs(t)
	files := map[string]string{
		filepath.Join(d.Gen, "generate.go"):                  "package gen\n",
		filepath.Join(d.Gen, "old_gen.go"):                   "package gen\n",
		filepath.Join(d.Bundled, "tools", "gone.input.json"): "{}\n",
		filepath.Join(d.Bundled, "README.md"):                "kept\n",
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Apply(out, d); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{filepath.Join(d.Gen, "old_gen.go"), filepath.Join(d.Bundled, "tools", "gone.input.json")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("stale %s still exists", gone)
		}
	}
	for _, kept := range []string{filepath.Join(d.Gen, "generate.go"), filepath.Join(d.Bundled, "README.md")} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s must not be touched: %v", kept, err)
		}
	}
}

func TestApplyLeavesUnchangedFilesAlone(t *testing.T) {
	out, _ := generateFixture(t, nil)
	d := outputDirs(t)
	if err := Apply(out, d); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d.Gen, "names_gen.go")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Apply(out, d); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Equal(old) {
		t.Errorf("an unchanged file was rewritten (mtime %v, want %v)", st.ModTime(), old)
	}
}

func TestCheckReportsEveryDifferenceAsADiff(t *testing.T) {
	out, _ := generateFixture(t, nil)
	d := outputDirs(t)
	if err := Apply(out, d); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	clean, err := Check(out, d, &buf)
	if err != nil || !clean || buf.Len() != 0 {
		t.Fatalf("fresh output: clean %v, err %v, diff %q", clean, err, buf.String())
	}
	names := filepath.Join(d.Gen, "names_gen.go")
	data, _ := os.ReadFile(names)
	edited := strings.Replace(string(data), `= "get_widget"`, `= "get_gadget"`, 1)
	if err := os.WriteFile(names, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Gen, "stale_gen.go"), []byte("package gen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(d.Bundled, "tools", "router.output.json")); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	clean, err = Check(out, d, &buf)
	if err != nil || clean {
		t.Fatalf("edited output: clean %v, err %v", clean, err)
	}
	diff := buf.String()
	for _, want := range []string{
		"--- " + names + "\n+++ " + names + "\n",
		"-\tToolGetWidget = \"get_gadget\"\n+\tToolGetWidget = \"get_widget\"\n",
		"+++ /dev/null\n@@ -1,1 +0,0 @@\n-package gen\n",
		"--- /dev/null\n+++ " + filepath.Join(d.Bundled, "tools", "router.output.json"),
	} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if data, _ := os.ReadFile(names); string(data) != edited {
		t.Error("Check must not write")
	}
}

func TestUnifiedDiffShowsContextAroundChanges(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"
	want := "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
	if got := unifiedDiff("a", "b", a, b); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}
