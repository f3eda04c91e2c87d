package contract_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract"
	"github.com/runlens/runlens/internal/contract/oracle"
)

// BenchmarkValidate compares the generated validators with the run-time library (schemas
// already compiled) on what a tools/call validates: a tool's arguments and its answer.
func BenchmarkValidate(b *testing.B) {
	cases := []struct{ name, tool, side, file string }{
		{"list_runs arguments", "list_runs", "input", "valid-input-1.json"},
		{"get_run answer", "get_run", "output", "valid-output-1.json"},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join(examplesDir, c.tool, c.file))
		if err != nil {
			b.Fatal(err)
		}
		tool, _ := gen.Lookup(c.tool)
		path, schema := contract.InputPath(c.tool), tool.InputSchema
		if c.side == "output" {
			path, schema = contract.OutputPath(c.tool), tool.OutputSchema
		}
		b.Run(c.name+"/generated", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if fields, err := contract.Validate(path, data); err != nil || fields != nil {
					b.Fatal(fields, err)
				}
			}
		})
		b.Run(c.name+"/library", func(b *testing.B) {
			o := oracle.NewValidator()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if fields, err := o.Validate(c.tool+"."+c.side, schema, data); err != nil || fields != nil {
					b.Fatal(fields, err)
				}
			}
		})
	}
}
