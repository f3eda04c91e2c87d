package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// ajvReport is what testdata/ajv-draft07.mjs prints.
type ajvReport struct {
	Ajv     string `json:"ajv"`
	Schemas map[string]struct {
		OK       bool     `json:"ok"`
		Error    string   `json:"error"`
		Warnings []string `json:"warnings"`
	} `json:"schemas"`
	Instances []struct {
		Schema string   `json:"schema"`
		File   string   `json:"file"`
		Valid  *bool    `json:"valid"`
		Errors []string `json:"errors"`
	} `json:"instances"`
}

// TestPublishedSchemasUnderAjvDraft07 compiles every published schema with Ajv 8's default
// export (draft-07, strict mode), as clients such as the v1 TypeScript SDK do, and checks that
// every example gets the same verdict there as under the 2020-12 validator runlens itself uses
// (and the verdict its file name promises). A keyword that means something else in draft-07,
// or that strict Ajv refuses, fails here before it fails in a client.
func TestPublishedSchemasUnderAjvDraft07(t *testing.T) {
	root := repoRoot(t)
	nodeBin := node(t)
	dir := scriptDir(t)
	sch := schemas(t)

	bundled := filepath.Join(root, "schemas", "bundled")
	schemaFiles := map[string]string{}
	err := filepath.WalkDir(bundled, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(root, "schemas"), path)
		schemaFiles[filepath.ToSlash(rel)] = path
		return nil
	})
	if err != nil || len(schemaFiles) == 0 {
		t.Fatalf("no published schemas under schemas/bundled: %v", err)
	}

	type instance struct {
		Schema string `json:"schema"`
		File   string `json:"file"`
	}
	examples, err := filepath.Glob(filepath.Join(root, "schemas", "examples", "*", "*.json"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples under schemas/examples: %v", err)
	}
	var instances []instance
	for _, ex := range examples {
		tool, base := filepath.Base(filepath.Dir(ex)), filepath.Base(ex)
		kind := "output"
		if strings.Contains(base, "-input") {
			kind = "input"
		}
		key := "bundled/tools/" + tool + "." + kind + ".json"
		if _, ok := schemaFiles[key]; !ok {
			t.Errorf("example %s has no published schema %s", base, key)
			continue
		}
		instances = append(instances, instance{Schema: key, File: ex})
	}

	plan := writeJSON(t, dir, "ajv-plan.json", map[string]any{"schemas": schemaFiles, "instances": instances})
	p := run(t, runOpts{dir: dir, env: nodeEnv(t), timeout: 60 * time.Second}, nodeBin, filepath.Join(dir, "ajv-draft07.mjs"), plan)
	if p.exitCode != 0 {
		t.Fatalf("ajv-draft07.mjs exited %d; stderr:\n%s", p.exitCode, tail(p.stderr))
	}
	var r ajvReport
	if err := json.Unmarshal(p.stdout, &r); err != nil {
		t.Fatalf("decode Ajv report: %v\n%s", err, tail(p.stdout))
	}
	if r.Ajv != "http://json-schema.org/draft-07/schema" {
		t.Errorf("Ajv's default meta-schema is %q, want draft-07's", r.Ajv)
	}

	keys := make([]string, 0, len(schemaFiles))
	for k := range schemaFiles {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c, ok := r.Schemas[k]
		switch {
		case !ok:
			t.Errorf("%s: not reported by Ajv", k)
		case !c.OK:
			t.Errorf("%s: does not compile under Ajv draft-07: %s", k, c.Error)
		case len(c.Warnings) > 0:
			t.Errorf("%s: Ajv strict mode warns: %s", k, strings.Join(c.Warnings, "; "))
		}
	}

	if len(r.Instances) != len(instances) {
		t.Fatalf("Ajv judged %d examples, want %d", len(r.Instances), len(instances))
	}
	for _, in := range r.Instances {
		name := filepath.Base(filepath.Dir(in.File)) + "/" + filepath.Base(in.File)
		if in.Valid == nil {
			continue // its schema did not compile: reported above
		}
		raw, err := os.ReadFile(in.File)
		if err != nil {
			t.Fatal(err)
		}
		santhosh := sch.validate(t, in.Schema, raw) == nil
		promised := strings.HasPrefix(filepath.Base(in.File), "valid-")
		if *in.Valid != santhosh {
			t.Errorf("%s: Ajv draft-07 says valid=%v, the 2020-12 validator says valid=%v (Ajv errors: %v)", name, *in.Valid, santhosh, in.Errors)
		}
		if santhosh != promised {
			t.Errorf("%s: the 2020-12 validator says valid=%v, the file name promises %v", name, santhosh, promised)
		}
	}
	t.Logf("Ajv %s: %d published schemas compiled, %d examples judged alike", r.Ajv, len(r.Schemas), len(r.Instances))
}
