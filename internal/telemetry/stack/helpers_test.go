package stack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeProject lays out files (slash paths → content) under a new temporary folder.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// openProject opens dir as a project with opts, failing the test on error.
func openProject(t *testing.T, dir string, opts Options) *Project {
	t.Helper()
	p, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return p
}

// newProject writes files and opens them as a project with default options.
func newProject(t *testing.T, files map[string]string) *Project {
	t.Helper()
	return openProject(t, writeProject(t, files), Options{})
}

// requireTool finds a runtime the test captures real traces from. Under CI a missing runtime
// fails the test; elsewhere the test is skipped.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required under CI to capture real stack traces: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

// assertNothingLeaks fails when any displayed part of the trace holds one of the forbidden
// strings (absolute folders of this machine).
func assertNothingLeaks(t *testing.T, tr Trace, forbidden ...string) {
	t.Helper()
	for _, f := range tr.Frames {
		for _, s := range []string{f.File, f.Function, f.Module, f.String()} {
			for _, bad := range forbidden {
				if bad != "" && strings.Contains(s, bad) {
					t.Errorf("frame %d %q shows %q", f.Depth, s, bad)
				}
			}
			if !f.InProject && strings.HasPrefix(f.File, "/") {
				t.Errorf("frame %d outside the project shows an absolute path %q", f.Depth, f.File)
			}
		}
	}
}

// frameStrings renders frames for failure messages.
func frameStrings(fs []Frame) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n\t")
		b.WriteString(f.String())
		if f.InProject {
			b.WriteString(" [project]")
		}
	}
	return b.String()
}
