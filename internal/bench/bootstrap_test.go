package bench

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/runlens/runlens/gen"
)

func TestMeasureBootstrapCountsCompactBytes(t *testing.T) {
	list := []byte(`{ "tools": [ {"name": "a", "inputSchema": {"type": "object"}},
		{"name": "bb", "inputSchema": {"type": "object"}} ] }`)
	b, err := MeasureBootstrap("x", list)
	if err != nil {
		t.Fatal(err)
	}
	const one = `{"name":"a","inputSchema":{"type":"object"}}`
	const two = `{"name":"bb","inputSchema":{"type":"object"}}`
	if want := len(`{"tools":[` + one + `,` + two + `]}`); b.Bytes != want || b.ModelVisible != want || b.Output != 0 {
		t.Errorf("whole list: %d bytes, %d model-visible, %d output, want %d, %d, 0", b.Bytes, b.ModelVisible, b.Output, want, want)
	}
	want := []ToolSize{{"a", len(one), len(one), 0}, {"bb", len(two), len(two), 0}}
	if len(b.Tools) != 2 || b.Tools[0] != want[0] || b.Tools[1] != want[1] {
		t.Errorf("per tool: %+v, want %+v", b.Tools, want)
	}
}

func TestMeasureBootstrapSplitsWhatTheModelSeesFromTheOutputSchemas(t *testing.T) {
	list := []byte(`{"tools": [{"name": "a", "title": "A", "description": "d", "execution": {"taskSupport": "forbidden"},
		"inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
		"annotations": {"readOnlyHint": true}, "_meta": {"k": 1}}]}`)
	b, err := MeasureBootstrap("x", list)
	if err != nil {
		t.Fatal(err)
	}
	const visible = `{"tools":[{"name":"a","title":"A","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`
	const output = `{"type":"object","properties":{"n":{"type":"integer"}}}`
	if b.ModelVisible != len(visible) || b.Output != len(output) {
		t.Errorf("model-visible %d, output %d; want %d (%s) and %d", b.ModelVisible, b.Output, len(visible), visible, len(output))
	}
	if b.Bytes <= b.ModelVisible+b.Output {
		t.Errorf("whole list %d bytes, want more than its parts (%d + %d): execution and _meta are neither", b.Bytes, b.ModelVisible, b.Output)
	}
}

// TestListedOutputSchemasFitTheirB8Budget guards B8's output-schema part from the registry
// itself, so a schema change that breaks it fails in `make test`, not only in `make bench` (the
// compact profile has its own test in internal/codegen).
func TestListedOutputSchemasFitTheirB8Budget(t *testing.T) {
	output := 0
	for _, tool := range gen.Tools {
		var wire bytes.Buffer // as tools/list serves it: compact
		if err := json.Compact(&wire, tool.ListedOutputSchema); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		output += wire.Len()
	}
	t.Logf("full profile output schemas: %d bytes listed (budget %d)", output, targetB8Output)
	if output > targetB8Output {
		t.Errorf("full profile output schemas: %d bytes listed, want ≤ %d", output, targetB8Output)
	}
}
