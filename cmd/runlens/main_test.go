package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
)

func TestSchemasExportWritesThePublishedSchemas(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"schemas", "export", dir}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, s := range gen.Published {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Path)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "schemas", "bundled", filepath.FromSlash(s.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Errorf("%s differs from schemas/bundled", s.Path)
		}
	}
}

func TestDoctorJSONIsTheToolAnswerAndExitsOnFailure(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "runlens.json"), []byte(`{"docs": {"rooot": "x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"doctor", "--json", "--project-root", root}, nil, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "runlens.json:1:11: /docs/rooot") {
		t.Fatalf("invalid configuration: exit %d, want 1 with the file's problem in the answer:\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()

	if err := os.Remove(filepath.Join(root, "runlens.json")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code = run([]string{"doctor", "--json", "--project-root", root}, nil, &out, &errOut)
	var answer gen.DoctorOutput
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil {
		t.Fatalf("not the doctor's JSON: %v\n%s", err, out.String())
	}
	if len(answer.Families) != 5 || (answer.Status == gen.StatusFail) != (code == 1) {
		t.Fatalf("exit %d with status %s and %d families", code, answer.Status, len(answer.Families))
	}
}

func TestUnknownCommandsAndVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"frobnicate"}, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"version"}, nil, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "runlens ") {
		t.Fatalf("version: exit %d, %q", code, out.String())
	}
}
