package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
)

// resourceTraces is one batch of n spans of one trace from a process whose resource names
// service and invocation, under scope, starting at start.
func resourceTraces(service, invocation, scope string, batch uint64, n int, start time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", service)
	res.PutStr("telemetry.sdk.language", "go")
	res.PutStr("process.command_args", `["/usr/local/bin/`+service+`","--listen",":8080"]`)
	if invocation != "" {
		res.PutStr(telemetry.InvocationKey, invocation)
	}
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scope)
	ss.Scope().SetVersion("1.2.3")
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID(batch))
		sp.SetSpanID(spanID(batch<<20 | uint64(i)))
		if i > 0 {
			sp.SetParentSpanID(spanID(batch << 20))
		}
		sp.SetName("work")
		ts := start.Add(time.Duration(i) * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(ts))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(ts.Add(time.Millisecond)))
	}
	return td
}

// resourceLogs is one record of service under invocation at ts.
func resourceLogs(service, invocation string, ts time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", service)
	if invocation != "" {
		rl.Resource().Attributes().PutStr(telemetry.InvocationKey, invocation)
	}
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("slog")
	r := sl.LogRecords().AppendEmpty()
	r.SetTimestamp(pcommon.NewTimestampFromTime(ts))
	r.Body().SetStr("hello from " + service)
	return ld
}

// stringColumn returns the one text column of every row query returns.
func stringColumn(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func countRows(t *testing.T, s *Store, query string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// scanResources returns the service.name and scope of each span the backend returns,
// resource included, oldest first.
func scanResources(t *testing.T, s *Store, scan telemetry.SpanScan) []string {
	t.Helper()
	scan.Fields |= telemetry.FieldResource
	scan.Oldest = true
	batch, err := NewBackend(s).ScanSpans(context.Background(), scan)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(batch.Spans))
	for _, sp := range batch.Spans {
		out = append(out, fmt.Sprintf("%s/%s/%s", sp.Resource["service.name"], sp.Resource["process.command_args"],
			sp.Resource[telemetry.InvocationKey]))
	}
	return out
}

func TestEachResourceAndScopeIsStoredOnceAndReadBackWithEveryRow(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{})
	start := time.Now().Add(-time.Minute)
	// Three batches from one process under one scope, one under a second scope, one from a
	// second process: three resource rows, whatever the number of spans.
	for b := range uint64(3) {
		if _, _, err := s.IngestTraces(ctx, resourceTraces("checkout", "", "otelhttp", b, 40, start.Add(time.Duration(b)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.IngestTraces(ctx, resourceTraces("checkout", "", "otelsql", 3, 5, start.Add(3*time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestTraces(ctx, resourceTraces("billing", "", "otelhttp", 4, 5, start.Add(4*time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestLogs(ctx, resourceLogs("billing", "", start)); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM `+ResourceScopesTable); n != 4 {
		t.Errorf("%d resource rows, want 4 (checkout under two scopes, billing's spans and its records)", n)
	}
	// The rows hold none of the texts: that is where the bytes went.
	for _, table := range []string{TracesTable, LogsTable} {
		q := `SELECT COUNT(*) FROM ` + table + ` WHERE ResourceScopeId IS NULL OR ResourceAttributes != '{}' OR ScopeName != '' OR ScopeVersion != ''`
		if n := countRows(t, s, q); n != 0 {
			t.Errorf("%d rows of %s carry their own resource or scope text", n, table)
		}
	}
	got := scanResources(t, s, telemetry.SpanScan{})
	if len(got) != 130 {
		t.Fatalf("%d spans read back, want 130", len(got))
	}
	want := `checkout/["/usr/local/bin/checkout","--listen",":8080"]/`
	for i, g := range got[:125] {
		if g != want {
			t.Fatalf("span %d: resource %q, want %q", i, g, want)
		}
	}
	if g := got[129]; g != `billing/["/usr/local/bin/billing","--listen",":8080"]/` {
		t.Errorf("billing's span: resource %q", g)
	}
	spans := readSpans(t, s)
	if sc := spans[120]; sc.ScopeName != "otelsql" || sc.ScopeVersion != "1.2.3" {
		t.Errorf("span 120: scope %q %q, want otelsql 1.2.3", sc.ScopeName, sc.ScopeVersion)
	}
	logs, err := NewBackend(s).ScanLogs(ctx, telemetry.LogScan{Fields: telemetry.FieldResource})
	if err != nil || len(logs.Logs) != 1 || logs.Logs[0].Resource["service.name"] != "billing" {
		t.Fatalf("the record read back with resource %+v (%v)", logs.Logs, err)
	}
}

func TestRowsOfAnOlderFileKeepTheirResourceBesideRowsWrittenSince(t *testing.T) {
	ctx := context.Background()
	first := openTestStore(t, Options{})
	start := time.Now().Add(-time.Minute)
	if _, _, err := first.IngestTraces(ctx, resourceTraces("checkout", "run-1", "otelhttp", 1, 3, start)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.IngestLogs(ctx, resourceLogs("checkout", "run-1", start)); err != nil {
		t.Fatal(err)
	}
	path := first.Path()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	toSchema5(t, db)
	db.Close()

	s := openTestStore(t, Options{Path: path})
	if n := countRows(t, s, `SELECT COUNT(*) FROM `+TracesTable+` WHERE ResourceScopeId IS NULL AND ResourceAttributes LIKE '%checkout%'`); n != 3 {
		t.Fatalf("%d migrated spans keep their own resource text, want 3", n)
	}
	// Since the migration: one run from the same process, one from another.
	if _, _, err := s.IngestTraces(ctx, resourceTraces("checkout", "run-1", "otelhttp", 2, 2, start.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestTraces(ctx, resourceTraces("checkout", "run-2", "otelhttp", 3, 4, start.Add(2*time.Second))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestLogs(ctx, resourceLogs("checkout", "run-1", start.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	got := scanResources(t, s, telemetry.SpanScan{})
	if len(got) != 9 {
		t.Fatalf("%d spans, want 9", len(got))
	}
	for i, invocation := range []string{"run-1", "run-1", "run-1", "run-1", "run-1", "run-2", "run-2", "run-2", "run-2"} {
		if want := `checkout/["/usr/local/bin/checkout","--listen",":8080"]/` + invocation; got[i] != want {
			t.Errorf("span %d: resource %q, want %q", i, got[i], want)
		}
	}
	// A command's telemetry is found by its invocation id in old and new rows alike.
	if n := len(scanResources(t, s, telemetry.SpanScan{Invocation: "run-1"})); n != 5 {
		t.Errorf("%d spans of invocation run-1, want 5 (3 written before the migration)", n)
	}
	if n := len(scanResources(t, s, telemetry.SpanScan{Invocation: "run-2"})); n != 4 {
		t.Errorf("%d spans of invocation run-2, want 4", n)
	}
	logs, err := NewBackend(s).ScanLogs(ctx, telemetry.LogScan{Invocation: "run-1"})
	if err != nil || len(logs.Logs) != 2 {
		t.Errorf("%d records of invocation run-1 (%v), want 2", len(logs.Logs), err)
	}
}

func TestPruningDeletesTheResourcesNoRowRefersToAndIngestRecreatesThem(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: time.Hour})
	now := time.Now()
	if _, _, err := s.IngestTraces(ctx, resourceTraces("old", "", "otelhttp", 1, 4, now.Add(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestLogs(ctx, resourceLogs("old-logs", "", now.Add(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	// One resource with an old and a recent span: it stays.
	if _, _, err := s.IngestTraces(ctx, resourceTraces("both", "", "otelhttp", 2, 2, now.Add(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestTraces(ctx, resourceTraces("both", "", "otelhttp", 3, 2, now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestTraces(ctx, resourceTraces("new", "", "otelhttp", 4, 2, now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM `+ResourceScopesTable); n != 4 {
		t.Fatalf("%d resource rows before pruning, want 4", n)
	}
	if _, err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	names := stringColumn(t, s.DB(), `SELECT json_extract(ResourceAttributes, '$."service.name"') FROM `+ResourceScopesTable+` ORDER BY 1`)
	if fmt.Sprint(names) != "[both new]" {
		t.Fatalf("resources left after pruning: %v, want [both new]", names)
	}
	// The writer forgot the ids it pruned: the old process sending again gets a row again, and
	// its spans read back its own resource, not whatever took its id.
	if _, _, err := s.IngestTraces(ctx, resourceTraces("old", "", "otelhttp", 5, 3, now)); err != nil {
		t.Fatal(err)
	}
	got := scanResources(t, s, telemetry.SpanScan{Service: "old"})
	if len(got) != 3 || got[0] != `old/["/usr/local/bin/old","--listen",":8080"]/` {
		t.Fatalf("the old process's new spans read back %v", got)
	}
	// A store pruned empty keeps no resource at all.
	empty := openTestStore(t, Options{Retention: time.Hour})
	if _, _, err := empty.IngestTraces(ctx, resourceTraces("old", "", "otelhttp", 1, 4, now.Add(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, empty, `SELECT COUNT(*) FROM `+ResourceScopesTable); n != 0 {
		t.Errorf("%d resource rows in a store pruned empty, want 0", n)
	}
}

func TestAResourceResolvedInATransactionThatDidNotCommitIsNotRemembered(t *testing.T) {
	st := &statements{}
	st.pendingResourceIDs = map[string]int64{"a": 1}
	st.settleResourceCache(false)
	if len(st.resourceIDs) != 0 || len(st.pendingResourceIDs) != 0 {
		t.Fatalf("after a rollback: cache %v, pending %v", st.resourceIDs, st.pendingResourceIDs)
	}
	st.pendingResourceIDs["b"] = 2
	st.settleResourceCache(true)
	if st.resourceIDs["b"] != 2 || len(st.pendingResourceIDs) != 0 {
		t.Fatalf("after a commit: cache %v, pending %v", st.resourceIDs, st.pendingResourceIDs)
	}
}

// checkResources fails when a row refers to a resource row that is not there, or a resource
// row's LastTimestamp is older than a row that refers to it (pruning would then delete a
// resource still in use).
func checkResources(t *testing.T, s *Store) {
	t.Helper()
	for _, table := range []string{TracesTable, LogsTable} {
		q := `SELECT COUNT(*) FROM ` + table + ` t LEFT JOIN ` + ResourceScopesTable + ` r ON r.Id = t.ResourceScopeId
			WHERE t.ResourceScopeId IS NOT NULL AND (r.Id IS NULL OR r.LastTimestamp < t.Timestamp)`
		if n := countRows(t, s, q); n != 0 {
			t.Errorf("%d rows of %s refer to a missing resource or one that looks older than they are", n, table)
		}
	}
}

func TestAScopeWhoseSpansWereAllRejectedStoresNoResource(t *testing.T) {
	s := openTestStore(t, Options{})
	td := resourceTraces("checkout", "", "otelhttp", 1, 2, time.Now())
	rejected := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
	rejected.Scope().SetName("no-ids")
	rejected.Spans().AppendEmpty().SetName("without ids")
	if acc, rej, err := s.IngestTraces(context.Background(), td); err != nil || acc != 2 || rej != 1 {
		t.Fatalf("IngestTraces = %d accepted, %d rejected, %v", acc, rej, err)
	}
	if got := stringColumn(t, s.DB(), `SELECT ScopeName FROM `+ResourceScopesTable); fmt.Sprint(got) != "[otelhttp]" {
		t.Fatalf("resource rows of scopes %v, want only otelhttp's", got)
	}
}

func TestTheWritersCacheOfResourceIDsStartsAgainPastItsBound(t *testing.T) {
	st := &statements{resourceIDs: map[string]int64{}, pendingResourceIDs: map[string]int64{}}
	for i := range maxCachedResources {
		st.resourceIDs[fmt.Sprint(i)] = int64(i)
	}
	st.pendingResourceIDs["new"] = 1
	st.settleResourceCache(true)
	if len(st.resourceIDs) != 1 || st.resourceIDs["new"] != 1 {
		t.Fatalf("a full cache given one more id holds %d ids, want only the new one", len(st.resourceIDs))
	}
	st.pendingResourceIDs["next"] = 2
	st.settleResourceCache(true)
	if len(st.resourceIDs) != 2 {
		t.Fatalf("below the bound the cache holds %d ids, want 2", len(st.resourceIDs))
	}
}
