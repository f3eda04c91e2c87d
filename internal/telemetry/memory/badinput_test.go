package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// Data that real instrumentation sends by mistake gives sensible answers: no crash, no wrong
// count.
func TestBadInputGivesSensibleAnswers(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) int64 { return now.Add(-ago).UnixNano() }
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	tests := []struct {
		name       string
		spans      []telemetry.SpanRow
		logs       []telemetry.LogRow
		wantErrors int64
		wantRuns   int
	}{
		{
			name: "two spans with one id in one trace count one failure",
			spans: []telemetry.SpanRow{
				{TraceID: "t1", SpanID: "a", Name: "req", Kind: telemetry.KindServer, Service: "api", StartNs: at(time.Minute), DurationNs: 10, StatusCode: telemetry.CodeError},
				{TraceID: "t1", SpanID: "b", ParentSpanID: "a", Name: "dup", Service: "api", StartNs: at(time.Minute), DurationNs: 5, StatusCode: telemetry.CodeError, StatusMessage: "boom"},
				{TraceID: "t1", SpanID: "b", ParentSpanID: "a", Name: "dup", Service: "api", StartNs: at(time.Minute), DurationNs: 5, StatusCode: telemetry.CodeError, StatusMessage: "boom"},
			},
			wantErrors: 1, wantRuns: 1, // a span sent twice (a retried batch) is one span
		},
		{
			name: "a parent that points at itself does not loop",
			spans: []telemetry.SpanRow{
				{TraceID: "t2", SpanID: "a", ParentSpanID: "a", Name: "self", Service: "api", StartNs: at(time.Minute), DurationNs: 10, StatusCode: telemetry.CodeError},
			},
			wantErrors: 1, wantRuns: 0,
		},
		{
			name: "a cycle of parents does not loop",
			spans: []telemetry.SpanRow{
				{TraceID: "t3", SpanID: "a", ParentSpanID: "b", Name: "x", Service: "api", StartNs: at(time.Minute), DurationNs: 10, StatusCode: telemetry.CodeError},
				{TraceID: "t3", SpanID: "b", ParentSpanID: "a", Name: "y", Service: "api", StartNs: at(time.Minute), DurationNs: 10, StatusCode: telemetry.CodeError},
			},
			wantErrors: 1, wantRuns: 0, // each is below the other: the earliest stands for the failure
		},
		{
			name: "a child that starts before its parent and ends before it starts",
			spans: []telemetry.SpanRow{
				{TraceID: "t4", SpanID: "a", Name: "req", Kind: telemetry.KindServer, Service: "api", StartNs: at(time.Minute), DurationNs: 10},
				{TraceID: "t4", SpanID: "b", ParentSpanID: "a", Name: "skewed", Service: "api", StartNs: at(2 * time.Minute), DurationNs: 0, StatusCode: telemetry.CodeError},
			},
			wantErrors: 1, wantRuns: 1,
		},
		{
			name:       "an error log of a trace nobody sent is an occurrence of its own",
			logs:       []telemetry.LogRow{{TimeNs: at(time.Minute), TraceID: "nope", Service: "api", SeverityText: " error "}},
			wantErrors: 1,
		},
		{
			name: "an error status without any message gets a sample message",
			spans: []telemetry.SpanRow{
				{TraceID: "t5", SpanID: "a", Name: "charge", Kind: telemetry.KindServer, Service: "pay", StartNs: at(time.Minute), DurationNs: 10, StatusCode: telemetry.CodeError},
			},
			wantErrors: 1, wantRuns: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &memory.Backend{}
			b.AddSpans(tt.spans...)
			b.AddLogRows(tt.logs...)
			e := telemetry.NewEngine(b, nil)
			ctx := context.Background()
			st, err := e.Status(ctx, telemetry.StatusQuery{Window: w})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := e.Errors(ctx, telemetry.ErrorsQuery{Window: w})
			if err != nil {
				t.Fatal(err)
			}
			runs, err := e.Runs(ctx, telemetry.RunsQuery{Window: w, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if st.Errors != tt.wantErrors || rep.Events != tt.wantErrors || runs.Total != tt.wantRuns {
				t.Fatalf("errors %d/%d runs %d, want %d errors and %d runs", st.Errors, rep.Events, runs.Total, tt.wantErrors, tt.wantRuns)
			}
			for _, g := range rep.Groups {
				if g.SampleMessage == "" {
					t.Fatalf("group without a sample message: %+v", g)
				}
			}
			for _, s := range tt.spans {
				if _, err := e.Run(ctx, telemetry.RunQuery{ID: s.TraceID}); err != nil {
					t.Fatalf("get_run %s: %v", s.TraceID, err)
				}
				if _, err := e.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: s.Service}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
