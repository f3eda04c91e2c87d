package store

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestPlanChunksSharesOnlyTheColumnsEveryRowOfAChunkAgreesOn(t *testing.T) {
	// Three columns, five rows, chunks of two: column 0 always agrees, column 1 differs inside
	// the first chunk, column 2 is not sharable.
	args := []any{
		"a", int64(1), "x",
		"a", int64(2), "x",
		"a", int64(3), "x",
		"a", int64(3), "y",
		"a", nil, "x",
	}
	got := planChunks(args, 3, 2, columnMask(0, 1))
	want := []chunkPlan{
		{first: 0, rows: 2, shared: columnMask(0)},
		{first: 2, rows: 2, shared: columnMask(0, 1)},
		{first: 4, rows: 1, shared: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("planChunks = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("chunk %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestSpansOfInterleavedResourcesKeepTheirOwnResourceAndScope(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	td := ptrace.NewTraces()
	// 70 spans from two senders' resources and scopes, alternating resource every few spans and
	// then keeping one, so that some INSERT chunks share the resource and others do not.
	type sent struct{ service, scope, status string }
	var want []sent
	for i := range 70 {
		rs := td.ResourceSpans().AppendEmpty()
		svc := "alpha"
		if (i/3)%2 == 1 || i >= 40 {
			svc = "beta"
		}
		rs.Resource().Attributes().PutStr("service.name", svc)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("scope-" + svc)
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID(uint64(i)))
		sp.SetSpanID(spanID(uint64(i)))
		sp.SetName("op")
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i+1) * time.Millisecond)))
		status := "Unset"
		if i%7 == 0 {
			sp.Status().SetCode(ptrace.StatusCodeError)
			status = "Error"
		}
		want = append(want, sent{svc, "scope-" + svc, status})
	}
	if acc, _, err := s.IngestTraces(ctx, td); err != nil || acc != 70 {
		t.Fatalf("IngestTraces = %d, %v", acc, err)
	}
	rows, err := s.DB().QueryContext(ctx, `SELECT ServiceName, `+resourceScopeColumn(TracesTable, "ScopeName")+`, StatusCode,
		json_extract(`+resourceColumn(TracesTable)+`, '$."service.name"'), SpanKind FROM otel_traces ORDER BY Seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for ; rows.Next(); i++ {
		var svc, scope, status, resSvc, kind string
		if err := rows.Scan(&svc, &scope, &status, &resSvc, &kind); err != nil {
			t.Fatal(err)
		}
		if w := want[i]; svc != w.service || resSvc != w.service || scope != w.scope || status != w.status || kind != "Server" {
			t.Errorf("span %d stored as service %q (resource %q), scope %q, status %q, kind %q; want %+v, Server",
				i, svc, resSvc, scope, status, kind, w)
		}
	}
	if i != 70 {
		t.Fatalf("stored %d spans, want 70", i)
	}
}
