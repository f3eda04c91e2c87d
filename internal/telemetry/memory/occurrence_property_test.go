package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// However deep a failure propagates — through how many middleware spans, with how many error
// logs — and however many unrelated failures a run has, the error count is the number of
// failures: the origins, one each.
func TestErrorCountsAreTheNumberOfFailuresWhateverTheNesting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		b := &memory.Backend{}
		var want int64
		runs := rapid.IntRange(1, 8).Draw(t, "runs")
		for r := range runs {
			trace := fmt.Sprintf("%032x", r+1)
			start := now.Add(-time.Duration(r+1) * time.Minute).UnixNano()
			id := 0
			span := func(parent string, depth int) telemetry.SpanRow {
				id++
				return telemetry.SpanRow{
					TraceID: trace, SpanID: fmt.Sprintf("%016x", id), ParentSpanID: parent, Name: fmt.Sprintf("step %d", depth),
					Kind: telemetry.KindInternal, Service: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "service"),
					StartNs: start + int64(id)*1000, DurationNs: 500, StatusCode: telemetry.CodeUnset,
					Attributes: map[string]string{},
				}
			}
			root := span("", 0)
			rows := []telemetry.SpanRow{root}
			failures := rapid.IntRange(0, 3).Draw(t, "failures")
			rootFails := false
			for f := range failures {
				// Each failure is its own branch under the root: a chain of depth spans whose
				// innermost fails; the failure propagates up `up` of its ancestors.
				depth := rapid.IntRange(1, 6).Draw(t, "depth")
				up := rapid.IntRange(0, depth).Draw(t, "up")
				chain := []telemetry.SpanRow{}
				parent := root.SpanID
				for d := range depth {
					s := span(parent, d+1)
					parent = s.SpanID
					chain = append(chain, s)
				}
				for i := len(chain) - 1; i >= 0 && i >= len(chain)-1-up; i-- {
					chain[i].StatusCode = telemetry.CodeError
					chain[i].StatusMessage = fmt.Sprintf("failure %d at depth %d", f, i)
				}
				if up >= depth { // it reached the root's child: the root fails too
					rootFails = true
				}
				rows = append(rows, chain...)
				// Error logs written while it failed fold into it.
				for range rapid.IntRange(0, 2).Draw(t, "logs") {
					b.AddLogRows(telemetry.LogRow{TimeNs: start + 10, TraceID: trace, SpanID: chain[len(chain)-1].SpanID,
						Service: "a", SeverityNumber: 17, SeverityText: "ERROR", Body: "it failed"})
				}
				want++
			}
			if rootFails {
				rows[0].StatusCode = telemetry.CodeError
			}
			// Healthy siblings change nothing.
			for range rapid.IntRange(0, 3).Draw(t, "healthy") {
				rows = append(rows, span(root.SpanID, 1))
			}
			b.AddSpans(rows...)
		}
		e := telemetry.NewEngine(b, nil)
		w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
		st, err := e.Status(context.Background(), telemetry.StatusQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.Errors(context.Background(), telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		if st.Errors != want || rep.Events != want {
			t.Fatalf("%d failures, but status counts %d and errors %d", want, st.Errors, rep.Events)
		}
		var grouped int64
		for _, g := range rep.Groups {
			grouped += g.Count
			if g.SampleMessage == "" {
				t.Fatalf("group without a sample message: %+v", g)
			}
		}
		if grouped != want {
			t.Fatalf("groups hold %d occurrences, want %d", grouped, want)
		}
	})
}
