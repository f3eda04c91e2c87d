package memory_test

import (
	"context"
	"testing"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

func TestASpanIDHeldAlreadyKeepsItsFirstSpan(t *testing.T) {
	first := telemetry.SpanRow{TraceID: "t", SpanID: "a", Name: "first", Service: "api", StartNs: 10, StatusCode: telemetry.CodeUnset}
	later := telemetry.SpanRow{TraceID: "t", SpanID: "a", Name: "later", Service: "db", StartNs: 20, StatusCode: telemetry.CodeError}
	other := telemetry.SpanRow{TraceID: "u", SpanID: "a", Name: "other trace", StartNs: 30}
	b := &memory.Backend{}
	b.AddSpans(first, later)
	b.AddSpans(other, first)
	ctx := context.Background()
	for _, svc := range []string{"", "api", "db"} {
		got, err := b.ScanSpans(ctx, telemetry.SpanScan{Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range got.Spans {
			names = append(names, s.Name)
		}
		want := map[string][]string{"": {"other trace", "first"}, "api": {"first"}, "db": nil}[svc]
		if len(names) != len(want) || (len(want) > 0 && (names[0] != want[0] || names[len(names)-1] != want[len(want)-1])) {
			t.Errorf("spans of service %q = %v, want %v: one span per trace and span id, the first that arrived", svc, names, want)
		}
	}
	if snap, _ := b.Fingerprint(ctx); snap.AsOf != 2 {
		t.Errorf("snapshot %d after two distinct spans, want 2: a dropped copy is not a row", snap.AsOf)
	}
}
