package contract_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract"
	"github.com/runlens/runlens/internal/contract/oracle"
)

// examplesDir holds valid and invalid payloads per tool.
const examplesDir = "../../schemas/examples"

// TestExamplesAgreeWithThePublishedSchemas validates every example payload against the schema
// tools/list publishes for its tool: valid-* must pass, invalid-* must fail, every failure
// must carry a JSON pointer and say what was expected, and the generated validator must report
// exactly what the run-time library (the oracle) reports.
func TestExamplesAgreeWithThePublishedSchemas(t *testing.T) {
	dirs, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	o := oracle.NewValidator()
	seen := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		tool, ok := gen.Lookup(d.Name())
		if !ok {
			t.Errorf("examples/%s names no tool", d.Name())
			continue
		}
		seen[tool.Name] = true
		files, _ := filepath.Glob(filepath.Join(examplesDir, d.Name(), "*.json"))
		counts := map[string]int{}
		for _, f := range files {
			base := filepath.Base(f)
			kind, side, ok := exampleKind(base)
			if !ok {
				t.Errorf("%s: name must start with valid-input, valid-output, invalid-input or invalid-output", f)
				continue
			}
			counts[kind+"-"+side]++
			t.Run(tool.Name+"/"+strings.TrimSuffix(base, ".json"), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				schema, path := tool.InputSchema, contract.InputPath(tool.Name)
				if side == "output" {
					schema, path = tool.OutputSchema, contract.OutputPath(tool.Name)
				}
				errs, err := contract.Validate(path, data)
				if err != nil {
					t.Fatal(err)
				}
				want, err := o.Validate(tool.Name+"."+side, schema, data)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(errs) != fmt.Sprint(want) {
					t.Errorf("the generated validator and the oracle disagree:\ngenerated %v\noracle    %v", errs, want)
				}
				if kind == "valid" && len(errs) > 0 {
					t.Errorf("a valid example fails: %v", errs)
				}
				if kind == "invalid" && len(errs) == 0 {
					t.Error("an invalid example passes")
				}
				for _, e := range errs {
					if (e.Pointer != "" && !strings.HasPrefix(e.Pointer, "/")) || e.Message == "" {
						t.Errorf("malformed field error %+v", e)
					}
				}
			})
		}
		if counts["valid-input"] < 2 || counts["invalid-input"] < 3 || counts["valid-output"] < 2 {
			t.Errorf("examples/%s: want ≥2 valid inputs, ≥3 invalid inputs, ≥2 valid outputs, got %v", tool.Name, counts)
		}
	}
	for _, tl := range append(append([]gen.Tool{}, gen.Tools...), gen.CompactTools...) {
		if !seen[tl.Name] {
			t.Errorf("tool %s has no examples", tl.Name)
		}
	}
}

// exampleKind splits an example file name: valid-input-1.json → valid, input.
func exampleKind(name string) (kind, side string, ok bool) {
	for _, k := range []string{"valid", "invalid"} {
		for _, s := range []string{"input", "output"} {
			if strings.HasPrefix(name, k+"-"+s) {
				return k, s, true
			}
		}
	}
	return "", "", false
}
