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

// fuzzSchemas are the published schemas the fuzzer validates against, by the byte that picks
// one: tool inputs with bounds, enums, patterns and arrays, a large output, and the two
// configuration schemas (maps, oneOf, not).
var fuzzSchemas = []string{
	contract.InputPath("list_runs"),
	contract.InputPath("get_run"),
	contract.InputPath("analyze_service_performance"),
	contract.InputPath("execute_command"),
	contract.OutputPath("get_run"),
	"config.schema.json",
	"conventions.schema.json",
}

// FuzzGeneratedValidatorAgreesWithOracle validates arbitrary JSON with the generated validator
// and the run-time library and requires the same field errors, pointers and messages. Inputs
// holding a character that ECMA-262 patterns and Go's RE2 read apart are skipped (the Ajv
// comparison covers those). The seeds are the example payloads of every tool.
func FuzzGeneratedValidatorAgreesWithOracle(f *testing.F) {
	index := map[string]uint8{}
	for i, path := range fuzzSchemas {
		index[path] = uint8(i)
	}
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*", "*.json"))
	for _, file := range files {
		tool, name := filepath.Base(filepath.Dir(file)), filepath.Base(file)
		path := contract.InputPath(tool)
		if strings.Contains(name, "-output") {
			path = contract.OutputPath(tool)
		}
		i, ok := index[path]
		if !ok {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(i, data)
	}
	f.Add(uint8(5), []byte(`{"mcp": {"profile": "full"}, "conventions": {"domains": [{"domain": "db", "when": {"key": "a"}}]}}`))
	f.Add(uint8(6), []byte(`{"domains": [{"domain": "db", "when": {"keyPrefix": "db.", "key": "x"}}], "executionIdKeys": ["run.id"]}`))
	schemas := map[string][]byte{}
	for _, p := range gen.Published {
		schemas[p.Path] = p.JSON
	}
	o := oracle.NewValidator()
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		path := fuzzSchemas[int(which)%len(fuzzSchemas)]
		v, err := contract.Decode(data)
		if err != nil {
			return
		}
		if holdsECMAOnly(v) {
			return
		}
		got, err := contract.ValidateValue(path, v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := o.Validate(path, schemas[path], data)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s on %s:\ngenerated %v\noracle    %v", path, data, got, want)
		}
	})
}
