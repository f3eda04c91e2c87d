package bench

import "testing"

func TestMeasureBootstrapCountsCompactBytes(t *testing.T) {
	list := []byte(`{ "tools": [ {"name": "a", "inputSchema": {"type": "object"}},
		{"name": "bb", "inputSchema": {"type": "object"}} ] }`)
	b, err := MeasureBootstrap("x", list)
	if err != nil {
		t.Fatal(err)
	}
	const one = `{"name":"a","inputSchema":{"type":"object"}}`
	const two = `{"name":"bb","inputSchema":{"type":"object"}}`
	if want := len(`{"tools":[` + one + `,` + two + `]}`); b.Bytes != want {
		t.Errorf("whole list: %d bytes, want %d", b.Bytes, want)
	}
	want := []ToolSize{{"a", len(one)}, {"bb", len(two)}}
	if len(b.Tools) != 2 || b.Tools[0] != want[0] || b.Tools[1] != want[1] {
		t.Errorf("per tool: %+v, want %+v", b.Tools, want)
	}
}
