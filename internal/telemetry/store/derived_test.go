package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// ingestAll stores every batch of data.
func ingestAll(t *testing.T, s *Store, data randomTelemetry) {
	t.Helper()
	ctx := context.Background()
	for _, td := range data.traces {
		if _, _, err := s.IngestTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}
	for _, ld := range data.logs {
		if _, _, err := s.IngestLogs(ctx, ld); err != nil {
			t.Fatal(err)
		}
	}
}

// checkDerived asserts what every write must keep true: each row's derived columns are what
// the store's conventions compute from its stored attributes, TraceErrored marks exactly the
// roots of traces with an error span, and the rollups equal aggregates of the rows.
func checkDerived(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	db := s.DB()
	rows, err := db.QueryContext(ctx, `SELECT Seq, SpanName, IsRoot, IsError, StatusMessage, EventsJSON, SpanAttributes,
		`+coalesced("RunId", "Domain", "JobId", "JobName", "JobStatus", "DbLabel", "DbSystem", "ErrorMessage",
		"ExceptionType", "Fingerprint")+` FROM `+TracesTable)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var seq int64
		var f spanFacts
		var events, attrs string
		var got spanDerived
		if err := rows.Scan(&seq, &f.name, &f.isRoot, &f.isError, &f.statusMessage, &events, &attrs, &got.RunID, &got.Domain,
			&got.JobID, &got.JobName, &got.JobStatus, &got.DBLabel, &got.DBSystem, &got.ErrorMessage, &got.ExceptionType,
			&got.Fingerprint); err != nil {
			t.Fatal(err)
		}
		if f.isError {
			f.exceptionMessage, f.exceptionType = exceptionOf(events)
		}
		if want := s.derive.deriveSpan(f, decodeAttrs(attrs)); got != want {
			t.Errorf("span %d: derived %+v, want %+v", seq, got, want)
		}
		n++
	}
	rows.Close()
	if n == 0 {
		t.Fatal("no spans to check")
	}
	var wrong int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+TracesTable+` r WHERE IsRoot = 1 AND TraceErrored !=
		EXISTS (SELECT 1 FROM `+TracesTable+` e WHERE e.TraceId = r.TraceId AND e.IsError = 1)`).Scan(&wrong); err != nil || wrong != 0 {
		t.Errorf("%d roots have a wrong TraceErrored (%v)", wrong, err)
	}
	for name, pair := range map[string][2]string{
		ActivityTable: {
			`SELECT Bucket, ServiceName, Spans, SpanErrors, Logs, LogErrors FROM ` + ActivityTable,
			`SELECT Bucket, ServiceName, SUM(Spans), SUM(SpanErrors), SUM(Logs), SUM(LogErrors) FROM (
				SELECT Timestamp / ` + bucketExpr + ` AS Bucket, ServiceName, 1 AS Spans, IsError AS SpanErrors, 0 AS Logs,
					0 AS LogErrors FROM ` + TracesTable + `
				UNION ALL SELECT Timestamp / ` + bucketExpr + `, ServiceName, 0, 0, 1, IsError FROM ` + LogsTable + `)
			GROUP BY 1, 2`,
		},
		RunActivityTable: {
			`SELECT Bucket, ServiceName, Domain, Runs, ErroredRuns FROM ` + RunActivityTable,
			`SELECT Timestamp / ` + bucketExpr + `, ServiceName, COALESCE(Domain, ''), COUNT(*), SUM(TraceErrored)
			FROM ` + TracesTable + ` WHERE IsRoot = 1 GROUP BY 1, 2, 3`,
		},
		DBActivityTable: {
			`SELECT Bucket, DbLabel, ServiceName, DbSystem, Spans, Duration, Errors FROM ` + DBActivityTable,
			`SELECT Timestamp / 3600000000000, DbLabel, ServiceName, COALESCE(DbSystem, ''), COUNT(*), SUM(Duration),
				SUM(IsError) FROM ` + TracesTable + ` WHERE DbLabel != '' GROUP BY 1, 2, 3, 4`,
		},
	} {
		for _, q := range []string{pair[0] + ` EXCEPT ` + pair[1], pair[1] + ` EXCEPT ` + pair[0]} {
			var diff int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+q+`)`).Scan(&diff); err != nil || diff != 0 {
				t.Errorf("%s differs from the rows in %d rows (%v)", name, diff, err)
			}
		}
	}
}

func TestDerivedColumnsAndRollupsStayExactThroughIngestAndPruning(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := openTestStore(t, Options{Retention: time.Hour})
	ingestAll(t, s, newRandomTelemetry(1, 600, now, 3*time.Hour))
	checkDerived(t, s)
	deleted, err := s.Prune(ctx)
	if err != nil || deleted == 0 {
		t.Fatalf("Prune deleted %d rows (%v); the data spans three hours and the retention one", deleted, err)
	}
	checkDerived(t, s)

	small := openTestStore(t, Options{MaxBytes: 256 << 10})
	ingestAll(t, small, newRandomTelemetry(2, 1500, now, 3*time.Hour))
	if deleted, err := small.Prune(ctx); err != nil || deleted == 0 {
		t.Fatalf("size pruning deleted %d rows (%v)", deleted, err)
	}
	checkDerived(t, small)
}

// loadTwice stores data in a store computing the derived columns with the querier's
// conventions and in one computing them with others, and returns a querier over each.
func loadTwice(t *testing.T, data randomTelemetry) (derived, decoded *Querier) {
	t.Helper()
	conv, other := conventions.Default(), mustPreset(t, "netscript")
	a := openTestStore(t, Options{Retention: 48 * time.Hour, Conventions: conv})
	b := openTestStore(t, Options{Retention: 48 * time.Hour, Conventions: other})
	ingestAll(t, a, data)
	ingestAll(t, b, data)
	return NewQuerier(a, conv), NewQuerier(b, conv)
}

func mustPreset(t *testing.T, name string) *conventions.Conventions {
	t.Helper()
	c, err := conventions.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBothQueryPathsGiveTheSameAnswers(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	fast, slow := loadTwice(t, newRandomTelemetry(3, 800, now, 3*time.Hour))
	if ok, _ := fast.derived(ctx); !ok {
		t.Fatal("the querier over matching columns does not read them")
	}
	if ok, _ := slow.derived(ctx); ok {
		t.Fatal("the querier over other conventions' columns reads them")
	}
	windows := []telemetry.Window{
		last(now, 15*time.Minute), last(now, time.Hour), last(now, 4*time.Hour),
		{StartMs: now.Add(-133 * time.Minute).UnixMilli(), EndMs: now.Add(-17 * time.Minute).UnixMilli()},
	}
	same := func(name string, q any, got, want any) {
		t.Helper()
		if diff := cmp.Diff(want, got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s(%+v): derived (+) and decoded (-) answers differ:\n%s", name, q, diff)
		}
	}
	for _, w := range windows {
		for _, sq := range []telemetry.StatusQuery{{Window: w}, {Window: w, Service: "billing"}, {Window: w, Service: "unknown"}} {
			got, err1 := fast.Status(ctx, sq)
			want, err2 := slow.Status(ctx, sq)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same("Status", sq, got, want)
		}
		for _, rq := range []telemetry.RunsQuery{
			{Window: w, Limit: 100}, {Window: w, Status: "error", Limit: 100}, {Window: w, Domain: "job", Limit: 100},
			{Window: w, Service: "worker", Status: "ok", Offset: 3, Limit: 5}, {Window: w, Status: "failed", Limit: 100},
		} {
			got, err1 := fast.Runs(ctx, rq)
			want, err2 := slow.Runs(ctx, rq)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same("Runs", rq, got, want)
		}
		for _, eq := range []telemetry.ErrorsQuery{{Window: w}, {Window: w, Service: "checkout"}, {Window: w, Domain: "http"}} {
			got, err1 := fast.Errors(ctx, eq)
			want, err2 := slow.Errors(ctx, eq)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same("Errors", eq, got, want)
		}
		for _, jq := range []telemetry.JobQuery{{Window: w}, {Window: w, JobName: "sync"}, {Window: w, Service: "billing"}} {
			got, err1 := fast.LastJob(ctx, jq)
			want, err2 := slow.LastJob(ctx, jq)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same("LastJob", jq, got, want)
		}
		for _, pq := range []telemetry.PerformanceQuery{{Window: w, Service: "checkout", TopN: 20}, {Window: w, Service: "unknown"},
			{Window: w, Service: "worker", Operation: "render"}} {
			got, err1 := fast.ServicePerformance(ctx, pq)
			want, err2 := slow.ServicePerformance(ctx, pq)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same("ServicePerformance", pq, got, want)
		}
		for _, dq := range []telemetry.DBQuery{{Window: w, TopN: 20}, {Window: w, Service: "billing"}, {Window: w, System: "mysql"}} {
			got, err1 := fast.DBOperations(ctx, dq)
			want, err2 := slow.DBOperations(ctx, dq)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same("DBOperations", dq, got, want)
		}
	}
}

// waitDerived polls until s's derived columns were computed with conv, or fails after a
// deadline.
func waitDerived(t *testing.T, s *Store, conv *conventions.Conventions) {
	t.Helper()
	fp := conventionsFingerprint(conv)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := s.derivedCurrent(context.Background(), fp)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the derived columns were not recomputed in time")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline, not synchronising
	}
}

func TestOtherConventionsAreRecomputedInTheBackground(t *testing.T) {
	recomputeChunk = 7 // many small transactions
	t.Cleanup(func() { recomputeChunk = 2000 })
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	q, d := loadFixtureVia(t, "netscript", now, decodedPath) // stored with the otel preset's columns
	path := q.store.Path()
	if got, err := q.Runs(ctx, telemetry.RunsQuery{Window: last(now, time.Hour), Limit: 100}); err != nil ||
		!cmp.Equal(d.ExpectRuns(telemetry.RunsQuery{Window: last(now, time.Hour), Limit: 100}), got, ignoreScanned, cmpopts.EquateEmpty()) {
		t.Fatalf("before the recomputation the decoding path answers wrong: %v", err)
	}
	if err := q.store.Close(); err != nil {
		t.Fatal(err)
	}
	s := openTestStore(t, Options{Path: path, Retention: 48 * time.Hour, Conventions: d.Conventions})
	waitDerived(t, s, d.Conventions)
	checkDerived(t, s)
	q = NewQuerier(s, d.Conventions)
	for _, rq := range []telemetry.RunsQuery{{Window: last(now, time.Hour), Limit: 100}, {Window: last(now, 24*time.Hour), Domain: "saga"}} {
		got, err := q.Runs(ctx, rq)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d.ExpectRuns(rq), got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Runs(%+v) after the recomputation (-want +got):\n%s", rq, diff)
		}
	}
	sq := telemetry.StatusQuery{Window: last(now, 24*time.Hour)}
	if got, err := q.Status(ctx, sq); err != nil || !cmp.Equal(d.ExpectStatus(sq), got, ignoreScanned) {
		t.Errorf("Status after the recomputation: %v\n%s", err, cmp.Diff(d.ExpectStatus(sq), got, ignoreScanned))
	}
}

// downgrade turns a store file back into schema version 1, as runlens builds before the
// derived columns wrote it: their indexes, columns, rollups and meta keys are dropped.
func downgrade(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, `DROP INDEX `+name)
	}
	rows.Close()
	for _, c := range []string{"RunId", "Domain", "TraceErrored", "JobId", "JobName", "JobStatus", "DbLabel", "DbSystem",
		"ErrorMessage", "ExceptionType", "Fingerprint"} {
		stmts = append(stmts, `ALTER TABLE otel_traces DROP COLUMN `+c)
	}
	for _, c := range []string{"ErrorMessage", "ExceptionType", "Fingerprint"} {
		stmts = append(stmts, `ALTER TABLE otel_logs DROP COLUMN `+c)
	}
	stmts = append(stmts, `DROP TABLE `+ActivityTable, `DROP TABLE `+RunActivityTable, `DROP TABLE `+DBActivityTable,
		`DELETE FROM meta WHERE key LIKE 'derived_%'`, migrations[0], `PRAGMA user_version = 1`)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestAStoreFromBeforeDerivedColumnsIsMigratedAndFilledIn(t *testing.T) {
	recomputeChunk = 5
	t.Cleanup(func() { recomputeChunk = 2000 })
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	q, d := loadFixture(t, "otel", now)
	path := q.store.Path()
	if err := q.store.Close(); err != nil {
		t.Fatal(err)
	}
	downgrade(t, path)
	if _, err := Open(ctx, Options{Path: path, ReadOnly: true}); err == nil {
		t.Fatal("a reader opened a file of an older schema version")
	}
	s := openTestStore(t, Options{Path: path, Retention: 48 * time.Hour})
	waitDerived(t, s, d.Conventions)
	if st, err := s.Stats(ctx); err != nil || st.Recomputing {
		t.Errorf("Stats says recomputing %v (%v) after the recomputation finished", st.Recomputing, err)
	}
	checkDerived(t, s)
	q = NewQuerier(s, d.Conventions)
	eq := telemetry.ErrorsQuery{Window: last(now, 24*time.Hour)}
	got, err := q.Errors(ctx, eq)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d.ExpectErrors(eq), got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Errors after the migration (-want +got):\n%s", diff)
	}
	dq := telemetry.DBQuery{Window: last(now, time.Hour), TopN: 20}
	if got, err := q.DBOperations(ctx, dq); err != nil || !cmp.Equal(d.ExpectDB(dq), got, ignoreScanned, cmpopts.EquateEmpty()) {
		t.Errorf("DBOperations after the migration: %v\n%s", err, cmp.Diff(d.ExpectDB(dq), got, ignoreScanned, cmpopts.EquateEmpty()))
	}
}
