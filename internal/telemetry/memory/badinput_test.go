package memory_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// letters names n in letters (a fingerprint reads digits as a variable part).
func letters(n int) string {
	b := []byte{byte('a' + n%26)}
	for n /= 26; n > 0; n /= 26 {
		b = append(b, byte('a'+n%26))
	}
	return string(b)
}

// Data that real instrumentation sends by mistake gives sensible answers: no crash, no wrong
// count.
func TestBadInputGivesSensibleAnswers(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) int64 { return now.Add(-ago).UnixNano() }
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	// manyErrors is one request whose handler fails n times with each of causes texts.
	manyErrors := func(trace string, n, causes int) []telemetry.SpanRow {
		out := []telemetry.SpanRow{{TraceID: trace, SpanID: "root", Name: "POST /bulk", Kind: telemetry.KindServer, Service: "api",
			StartNs: at(time.Minute), DurationNs: int64(time.Second), StatusCode: telemetry.CodeError}}
		for i := range n {
			out = append(out, telemetry.SpanRow{TraceID: trace, SpanID: fmt.Sprintf("s%06d", i), ParentSpanID: "root", Name: "item",
				Service: "api", StartNs: at(time.Minute) + int64(i), DurationNs: 1, StatusCode: telemetry.CodeError,
				StatusMessage: "item rejected: rule " + letters(i%causes)})
		}
		return out
	}
	storm := telemetry.SpanRow{TraceID: "t8", SpanID: "a", Name: "GET /feed", Kind: telemetry.KindServer, Service: "api",
		StartNs: at(time.Minute), DurationNs: int64(time.Second), StatusCode: telemetry.CodeError}
	// 100,000 error events of binary text, every thousandth a megabyte long.
	huge := strings.Repeat("\x00\xff", 1<<19)
	for i := range 100_000 {
		msg := huge[:1+i%64]
		if i%1000 == 0 {
			msg = huge
		}
		storm.Events = append(storm.Events, telemetry.SpanEvent{TimeNs: storm.StartNs + int64(i), Name: "log",
			Attributes: conventions.Attributes{"level": "error", "message": msg}})
	}
	tests := []struct {
		name       string
		spans      []telemetry.SpanRow
		logs       []telemetry.LogRow
		wantErrors int64
		wantRuns   int
		// wantFailed is how many runs failed (the rest are ok).
		wantFailed int
	}{
		{
			name:       "a run with 10,000 error spans of one cause is one occurrence",
			spans:      manyErrors("t6", 10_000, 1),
			wantErrors: 1, wantRuns: 1, wantFailed: 1,
		},
		{
			name:       "a run with 1,000 causes is 1,000 occurrences",
			spans:      manyErrors("t7", 1_000, 1_000),
			wantErrors: 1_000, wantRuns: 1, wantFailed: 1,
		},
		{
			name:       "a storm of 100,000 binary, oversized error events on one span is one occurrence",
			spans:      []telemetry.SpanRow{storm},
			wantErrors: 1, wantRuns: 1, wantFailed: 1,
		},
		{
			name: "an entry span without any status or HTTP code is an ok run; its failed child is handled",
			spans: []telemetry.SpanRow{
				{TraceID: "t9", SpanID: "a", Name: "work", Service: "api", StartNs: at(time.Minute), DurationNs: 10},
				{TraceID: "t9", SpanID: "b", ParentSpanID: "a", Name: "GET", Kind: telemetry.KindClient, Service: "api", StartNs: at(time.Minute),
					DurationNs: 5, StatusCode: telemetry.CodeError, Attributes: conventions.Attributes{"http.response.status_code": "404"}},
			},
			wantErrors: 1, wantRuns: 1, wantFailed: 0,
		},
		{
			name: "a 4xx client span inside an ok request is a handled error, and the request is ok",
			spans: []telemetry.SpanRow{
				{TraceID: "t10", SpanID: "a", Name: "GET /user", Kind: telemetry.KindServer, Service: "api", StartNs: at(time.Minute), DurationNs: 10,
					Attributes: conventions.Attributes{"http.response.status_code": "200"}},
				{TraceID: "t10", SpanID: "b", ParentSpanID: "a", Name: "GET", Kind: telemetry.KindClient, Service: "api", StartNs: at(time.Minute),
					DurationNs: 5, StatusCode: telemetry.CodeError, Attributes: conventions.Attributes{"http.response.status_code": "404"}},
			},
			wantErrors: 1, wantRuns: 1, wantFailed: 0,
		},
		{
			name: "two spans with one id in one trace count one failure",
			spans: []telemetry.SpanRow{
				{TraceID: "t1", SpanID: "a", Name: "req", Kind: telemetry.KindServer, Service: "api", StartNs: at(time.Minute), DurationNs: 10, StatusCode: telemetry.CodeError},
				{TraceID: "t1", SpanID: "b", ParentSpanID: "a", Name: "dup", Service: "api", StartNs: at(time.Minute), DurationNs: 5, StatusCode: telemetry.CodeError, StatusMessage: "boom"},
				{TraceID: "t1", SpanID: "b", ParentSpanID: "a", Name: "dup", Service: "api", StartNs: at(time.Minute), DurationNs: 5, StatusCode: telemetry.CodeError, StatusMessage: "boom"},
			},
			wantErrors: 1, wantRuns: 1, wantFailed: 1, // a span sent twice (a retried batch) is one span
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
			wantErrors: 1, wantRuns: 1, wantFailed: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &memory.Backend{}
			b.AddSpans(tt.spans...)
			b.AddLogRows(tt.logs...)
			e := engine.New(b, nil)
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
			failed, err := e.Runs(ctx, telemetry.RunsQuery{Window: w, Status: telemetry.StatusError, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var handled, unhandled int64
			for _, g := range rep.Groups {
				handled += g.Handled
				unhandled += g.Count - g.Handled
			}
			if failed.Total != tt.wantFailed || st.HandledErrors != handled || (tt.wantFailed == 0 && unhandled > 0 && tt.wantRuns > 0) {
				t.Fatalf("%d failed runs, %d handled errors (groups: %d handled, %d not); want %d failed runs",
					failed.Total, st.HandledErrors, handled, unhandled, tt.wantFailed)
			}
			for _, g := range rep.Groups {
				if g.SampleMessage == "" {
					t.Fatalf("group without a sample message: %+v", g)
				}
			}
			asked := map[[2]string]bool{}
			for _, s := range tt.spans {
				if k := [2]string{s.TraceID, s.Service}; asked[k] {
					continue
				} else {
					asked[k] = true
				}
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

// A service filter that matches spans but no run says where the runs entered
// (docs/semantics.md R12); one that matches nothing says nothing.
func TestAServiceWithoutRunsSaysWhereItsRunsEntered(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute).UnixNano()
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	b := &memory.Backend{}
	for i, entry := range []string{"front", "front", "admin"} {
		trace := fmt.Sprintf("t%d", i)
		b.AddSpans(
			telemetry.SpanRow{TraceID: trace, SpanID: "a", Name: "GET /", Kind: telemetry.KindServer, Service: entry, StartNs: at, DurationNs: 10},
			telemetry.SpanRow{TraceID: trace, SpanID: "b", ParentSpanID: "a", Name: "validate", Kind: telemetry.KindServer, Service: "legacy", StartNs: at, DurationNs: 5})
	}
	e := engine.New(b, nil)
	for svc, want := range map[string][]string{"legacy": {"admin", "front"}, "front": nil, "nobody": nil} {
		p, err := e.Runs(context.Background(), telemetry.RunsQuery{Window: w, Service: svc, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.EnteredAt, want) {
			t.Errorf("runs of %s: entered at %q, want %q", svc, p.EnteredAt, want)
		}
	}
}

// Client spans that look like database calls but carry no key the conventions count are named
// with the key that holds their statement (docs/semantics.md R13); OpenTracing-era sql.query
// spans are operations under the default conventions and are not named.
func TestSpansThatLookLikeDatabaseCallsAreNamed(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute).UnixNano()
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	b := &memory.Backend{}
	b.AddSpans(
		telemetry.SpanRow{TraceID: "t1", SpanID: "a", Name: "SQL SELECT", Kind: telemetry.KindClient, Service: "legacy", StartNs: at, DurationNs: 10,
			Attributes: conventions.Attributes{"sql.query": "SELECT zip FROM addresses WHERE id = 7", "peer.service": "mysql"}},
		telemetry.SpanRow{TraceID: "t2", SpanID: "a", Name: "query", Kind: telemetry.KindClient, Service: "reports", StartNs: at, DurationNs: 10,
			Attributes: conventions.Attributes{"query.text": "SELECT count(*) FROM orders"}},
		telemetry.SpanRow{TraceID: "t3", SpanID: "a", Name: "GET", Kind: telemetry.KindClient, Service: "reports", StartNs: at, DurationNs: 10,
			Attributes: conventions.Attributes{"http.request.method": "GET", "peer.service": "billing"}},
	)
	e := engine.New(b, nil)
	ctx := context.Background()
	in, err := e.Instrumentation(ctx, telemetry.InstrumentationQuery{Window: w, NowMs: w.EndMs})
	if err != nil {
		t.Fatal(err)
	}
	if in.DBLookalikes != 1 || !slices.Equal(in.DBLookalikeSpans, []string{"reports: query"}) || !slices.Equal(in.DBLookalikeKeys, []string{"query.text"}) {
		t.Fatalf("lookalikes %d %q %q, want the reports query under query.text", in.DBLookalikes, in.DBLookalikeSpans, in.DBLookalikeKeys)
	}
	db, err := e.DBOperations(ctx, telemetry.DBQuery{Window: w})
	if err != nil {
		t.Fatal(err)
	}
	if db.Total != 1 || db.Operations[0].System != "mysql" {
		t.Fatalf("database operations %+v, want the legacy sql.query span, system mysql", db.Operations)
	}
}
