package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
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

// A docs root outside the project is a configuration error: the doctor's config check fails
// naming it, and the docs tools answer config_invalid without reading a file.
func TestADocsRootOutsideTheProjectIsAConfigurationError(t *testing.T) {
	for _, root := range []string{"../outside", "/", "linked"} {
		t.Run(root, func(t *testing.T) {
			project := t.TempDir()
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(project, "linked")); err != nil {
				t.Skipf("symbolic links unavailable: %v", err)
			}
			file := `{"docs": {"root": "` + root + `"}}`
			if err := os.WriteFile(filepath.Join(project, config.FileName), []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := Open(project, nil, config.Overrides{ProjectRoot: project, Receiver: "off"}, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer a.Close()
			isErr, code, msg, _ := callTool(t, a, "get_doc", `{"slug": "secret"}`)
			if !isErr || code != "config_invalid" || !strings.Contains(msg, "/docs/root") || !strings.Contains(msg, "outside the project") {
				t.Errorf("get_doc = %v %s %q, want config_invalid at /docs/root", isErr, code, msg)
			}
			if isErr, code, _, _ := callTool(t, a, "list_docs", `{}`); !isErr || code != "config_invalid" {
				t.Errorf("list_docs = %v %s, want config_invalid", isErr, code)
			}
			check := workspaceCheck(t, a, "config_valid")
			if check.Status != "fail" || !strings.Contains(check.Summary, "outside the project") {
				t.Errorf("config_valid = %+v, want a failure naming the problem", check)
			}
		})
	}
}

// The default docs folder, with no runlens.json, may link out of the project too.
func TestADefaultDocsFolderLinkingOutIsRefused(t *testing.T) {
	project, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(project, "docs")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	a, err := Open(project, nil, config.Overrides{ProjectRoot: project, Receiver: "off"}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer a.Close()
	if isErr, code, msg, _ := callTool(t, a, "get_doc", `{"slug": "secret"}`); !isErr || code != "config_invalid" || !strings.Contains(msg, "outside the project") {
		t.Errorf("get_doc = %v %s %q, want config_invalid", isErr, code, msg)
	}
	if check := workspaceCheck(t, a, "docs_present"); check.Status != "fail" {
		t.Errorf("docs_present = %+v, want a failure", check)
	}
}

// workspaceCheck runs the doctor's workspace family and returns the named check.
func workspaceCheck(t *testing.T, a *App, name string) gen.Check {
	t.Helper()
	out, err := newDoctor(a).Run(context.Background(), gen.DoctorInput{Family: ptrTo(gen.DoctorFamily("workspace"))})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Families {
		for _, c := range f.Checks {
			if c.Name == name {
				return c
			}
		}
	}
	t.Fatalf("no %s check in %+v", name, out.Families)
	return gen.Check{}
}

func ptrTo[T any](v T) *T { return &v }
