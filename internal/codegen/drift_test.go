package codegen

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyModule copies what `go build ./...` needs (go.mod, go.sum, gen, internal, schemas, cmd)
// into a temporary folder, skipping VCS data and testdata.
func copyModule(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "gen", "internal", "schemas", "cmd"} {
		src := filepath.Join(projectRoot, name)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if os.IsNotExist(err) && p == src {
				return nil
			}
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(projectRoot, p)
			if err != nil {
				return err
			}
			target := filepath.Join(dst, rel)
			if d.IsDir() {
				if p != src && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
					return fs.SkipDir
				}
				return os.MkdirAll(target, 0o755)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		})
		if err != nil {
			t.Fatalf("copy %s: %v", name, err)
		}
	}
	return dst
}

// regenerate runs the generator on the copy's schemas and writes into the copy.
func regenerate(t *testing.T, dir string) *Model {
	t.Helper()
	out, m, err := Generate(os.DirFS(filepath.Join(dir, "schemas")), "schemas")
	if err != nil {
		t.Fatalf("regenerate the copy: %v", err)
	}
	if err := Apply(out, Dirs{Gen: filepath.Join(dir, "gen"), Bundled: filepath.Join(dir, "schemas", "bundled"), Listed: filepath.Join(dir, "schemas", "listed")}); err != nil {
		t.Fatal(err)
	}
	return m
}

// goBuild builds the copy offline and returns whether it built and what the compiler said.
func goBuild(t *testing.T, dir string) (bool, string) {
	t.Helper()
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

// editJSON rewrites one JSON file of the copy.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	data, err = json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestANewToolSchemaBreaksTheBuild adds a 14th tool to a copy of the module and regenerates:
// the build must fail because the hand-written flows lack the new method. A tool in the
// schemas can never ship unimplemented.
func TestANewToolSchemaBreaksTheBuild(t *testing.T) {
	t.Parallel()
	dir := copyModule(t)
	tools := filepath.Join(dir, "schemas", "tools")
	files := map[string]string{
		"probe_drift.tool.json": `{"name": "probe_drift", "title": "Probe drift", "description": "A tool no flow implements.",
			"family": "meta", "annotations": {"readOnlyHint": true, "openWorldHint": false}, "budget": {"standard": 16384, "summary": 4096}}`,
		"probe_drift.input.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://runlens.dev/schemas/tools/probe_drift.input.json",
			"title": "probe_drift input", "description": "Nothing.", "type": "object", "properties": {}, "additionalProperties": false}`,
		"probe_drift.output.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://runlens.dev/schemas/tools/probe_drift.output.json",
			"title": "probe_drift output", "description": "Nothing.", "type": "object", "properties": {}, "additionalProperties": false}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	editJSON(t, filepath.Join(dir, "schemas", "registry.json"), func(v map[string]any) {
		v["full"] = append(v["full"].([]any), "probe_drift")
	})
	regenerate(t, dir)
	built, out := goBuild(t, dir)
	if built {
		t.Fatal("the module built with a tool no flow implements")
	}
	if !strings.Contains(out, "missing method ProbeDrift") {
		t.Errorf("the build failed, but not for the missing method ProbeDrift:\n%s", out)
	}
}

// TestRemovingARequiredOutputFieldIsCaught removes a required field from an output schema in a
// copy of the module and regenerates: the tools/list snapshot no longer matches, and once the
// flows exist, the build fails where they set the field.
func TestRemovingARequiredOutputFieldIsCaught(t *testing.T) {
	t.Parallel()
	dir := copyModule(t)
	const tool = "list_runs"
	var removed string
	editJSON(t, filepath.Join(dir, "schemas", "tools", tool+".output.json"), func(v map[string]any) {
		req := v["required"].([]any)
		removed = req[0].(string)
		v["required"] = req[1:]
		delete(v["properties"].(map[string]any), removed)
	})
	m := regenerate(t, dir)
	var changed *Tool
	for _, tl := range m.Full {
		if tl.Meta.Name == tool {
			changed = tl
		}
	}
	got, err := m.Snapshot(changed)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "toolsnaps", tool+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, golden) {
		t.Errorf("removing %s.%s left the tools/list snapshot unchanged", tool, removed)
	}
	built, out := goBuild(t, dir)
	if built {
		t.Fatalf("the module built although the flows set the removed field %s", removed)
	}
	if field := m.FieldName(removed); !strings.Contains(out, field) {
		t.Errorf("the build failed, but not over the removed field %s:\n%s", field, out)
	}
}
