package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// However deep a failure propagates — through how many middleware spans, with how many error
// logs — however many sibling spans record the same cause again (a handler and the
// error-handling middleware), and however many unrelated failures a run has, the error count
// is the number of causes in each run (docs/semantics.md R7): occurrences = causes × runs, the
// groups add up to it, and the handled ones are exactly those of runs whose root did not fail.
func TestErrorCountsAreTheNumberOfFailuresWhateverTheNesting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		b := &memory.Backend{}
		var want, wantHandled int64
		causes := []string{"payment declined", "inventory exhausted", "lock wait timeout", "upstream unavailable"}
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
			seen := map[[2]string]bool{}
			for range failures {
				cause := rapid.SampledFrom(causes).Draw(t, "cause")
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
					chain[i].StatusMessage = cause
				}
				// Siblings of the innermost span that record the same cause again.
				origin := chain[len(chain)-1]
				for range rapid.IntRange(0, 2).Draw(t, "copies") {
					c := span(origin.ParentSpanID, depth)
					c.Service, c.StatusCode, c.StatusMessage = origin.Service, telemetry.CodeError, cause
					chain = append(chain, c)
				}
				if up >= depth { // it reached the root's child: the root fails too
					rootFails = true
				}
				rows = append(rows, chain...)
				// Error logs written while it failed fold into it.
				for range rapid.IntRange(0, 2).Draw(t, "logs") {
					b.AddLogRows(telemetry.LogRow{TimeNs: start + 10, TraceID: trace, SpanID: origin.SpanID,
						Service: "a", SeverityNumber: 17, SeverityText: "ERROR", Body: cause})
				}
				seen[[2]string{origin.Service, cause}] = true
			}
			if rootFails {
				rows[0].StatusCode = telemetry.CodeError
			}
			want += int64(len(seen))
			if !rootFails {
				wantHandled += int64(len(seen))
			}
			// Healthy siblings change nothing.
			for range rapid.IntRange(0, 3).Draw(t, "healthy") {
				rows = append(rows, span(root.SpanID, 1))
			}
			b.AddSpans(rows...)
		}
		e := engine.New(b, nil)
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
			t.Fatalf("%d causes over the runs, but status counts %d and errors %d", want, st.Errors, rep.Events)
		}
		if st.HandledErrors != wantHandled {
			t.Fatalf("%d causes in runs that ended ok, but status counts %d handled", wantHandled, st.HandledErrors)
		}
		var grouped, handled int64
		for _, g := range rep.Groups {
			grouped += g.Count
			handled += g.Handled
			if g.SampleMessage == "" {
				t.Fatalf("group without a sample message: %+v", g)
			}
		}
		if grouped != want || handled != wantHandled {
			t.Fatalf("groups hold %d occurrences (%d handled), want %d (%d)", grouped, handled, want, wantHandled)
		}
	})
}
