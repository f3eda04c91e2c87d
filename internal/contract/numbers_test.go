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

// The generated validators compare numbers exactly, taking int64 and float64 short cuts only
// where they cannot change the answer: numbers that round onto a bound or onto an integer as
// float64 must still be judged by their exact value, as the run-time library judges them.
func TestNumbersAreJudgedByTheirExactValue(t *testing.T) {
	answer, err := os.ReadFile(filepath.Join(examplesDir, "analyze_db_bottlenecks", "valid-output-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	const field = `"percentileRelativeError":`
	at := strings.Index(string(answer), field)
	if at < 0 {
		t.Fatal("the example answer has no percentileRelativeError")
	}
	end := at + len(field) + strings.IndexAny(string(answer[at+len(field):]), ",}")
	withError := func(n string) string { return string(answer[:at]) + field + n + string(answer[end:]) }
	tests := []struct {
		tool, side, instance string
		valid                bool
	}{
		{"list_runs", "input", `{"limit": 1.0}`, true},
		{"list_runs", "input", `{"limit": 1e2}`, true},
		{"list_runs", "input", `{"limit": 100.0}`, true},
		{"list_runs", "input", `{"limit": 1.00000000000000000001}`, false}, // 1.0 as a float64
		{"list_runs", "input", `{"limit": 0.99999999999999999999}`, false},
		{"list_runs", "input", `{"limit": 101}`, false},
		{"list_runs", "input", `{"limit": 1e3}`, false},
		{"list_runs", "input", `{"sinceUnixMs": -0}`, true},
		{"list_runs", "input", `{"sinceUnixMs": -1e-400}`, false},
		{"list_runs", "input", `{"sinceUnixMs": 123456789012345678901234567890}`, true},
		{"list_runs", "input", `{"sinceUnixMs": -123456789012345678901234567890}`, false},
		{"analyze_db_bottlenecks", "output", withError("0.01"), true},
		{"analyze_db_bottlenecks", "output", withError("0.0100000000000000000001"), false}, // 0.01 as a float64
		{"analyze_db_bottlenecks", "output", withError("0.0099999999999999999999"), true},
		{"analyze_db_bottlenecks", "output", withError("1e-400"), true},
		{"analyze_db_bottlenecks", "output", withError("-1e-400"), false},
	}
	o := oracle.NewValidator()
	for _, tc := range tests {
		tool, _ := gen.Lookup(tc.tool)
		path, schema := contract.InputPath(tc.tool), tool.InputSchema
		if tc.side == "output" {
			path, schema = contract.OutputPath(tc.tool), tool.OutputSchema
		}
		got, err := contract.Validate(path, []byte(tc.instance))
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) == 0) != tc.valid {
			t.Errorf("%s %.80s: valid = %v, want %v (%v)", tc.tool, tc.instance, len(got) == 0, tc.valid, got)
		}
		want, err := o.Validate(tc.tool+"."+tc.side, schema, []byte(tc.instance))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %.80s:\ngenerated %v\noracle    %v", tc.tool, tc.instance, got, want)
		}
	}
}

func TestEveryPublishedSchemaHasAGeneratedValidator(t *testing.T) {
	for _, p := range gen.Published {
		if _, ok := gen.ValidatePublished(p.Path, map[string]any{}); !ok {
			t.Errorf("no generated validator for %s", p.Path)
		}
	}
	if _, ok := gen.ValidatePublished("tools/nothing.input.json", nil); ok {
		t.Error("a path nothing is published at must have no validator")
	}
}
