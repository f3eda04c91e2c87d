package store

import (
	"math/rand/v2"
	"testing"

	"github.com/runlens/runlens/internal/telemetry"
)

// TestEntryGivenIsShapeTracesEntryFlag holds the in-place entry decision the writer makes for
// most spans of a batch to the engine's ShapeTrace on the same spans, over random traces of a
// few span ids, services and kinds (parents that are the span itself, missing, of another
// service, duplicated), and revisable to "a parent of its own service would end the entry".
func TestEntryGivenIsShapeTracesEntryFlag(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	ids := []string{"", "a", "b", "c", "d"}
	services := []string{"web", "db", ""}
	kinds := []string{telemetry.KindServer, telemetry.KindClient, telemetry.KindInternal, telemetry.KindConsumer,
		telemetry.KindProducer}
	span := func() telemetry.SpanRow {
		return telemetry.SpanRow{TraceID: "t", SpanID: ids[1+rng.IntN(len(ids)-1)], ParentSpanID: ids[rng.IntN(len(ids))],
			Service: services[rng.IntN(len(services))], Kind: kinds[rng.IntN(len(kinds))], StatusCode: telemetry.CodeUnset}
	}
	entries, notEntries := 0, 0
	for range 20000 {
		s := span()
		others := make([]telemetry.SpanRow, rng.IntN(5))
		for i := range others {
			others[i] = span()
		}
		want := telemetry.ShapeTrace(append([]telemetry.SpanRow{s}, others...))[0].Entry
		if got := entryGiven(s, others); got != want {
			t.Fatalf("entryGiven(%+v, %+v) = %v, ShapeTrace says %v", s, others, got, want)
		}
		if want {
			entries++
		} else {
			notEntries++
		}
		sameService := telemetry.SpanRow{TraceID: "t", SpanID: s.ParentSpanID, Service: s.Service,
			Kind: telemetry.KindInternal, StatusCode: telemetry.CodeUnset}
		wantRevisable := s.ParentSpanID != "" && !telemetry.ShapeTrace([]telemetry.SpanRow{s, sameService})[0].Entry
		if got := revisable(s, true); got != wantRevisable {
			t.Fatalf("revisable(%+v) = %v, want %v", s, got, wantRevisable)
		}
		if revisable(s, false) {
			t.Fatalf("revisable(%+v, not an entry) = true", s)
		}
	}
	if entries < 1000 || notEntries < 1000 {
		t.Fatalf("the draws must exercise both answers: %d entries, %d not", entries, notEntries)
	}
}
