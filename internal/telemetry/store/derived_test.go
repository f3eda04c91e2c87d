package store

import (
	"bytes"
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// checkDerived asserts what every write must keep true, recomputing from the stored rows with
// the engine's functions: each span's own derived columns (deriveSpan), its entry flag
// (ShapeTrace over its whole trace), TraceErrored and RunErrored of roots, the occurrences of
// every failing trace that is not deferred (TraceOccurrences) and of none that is, each
// record's error flag, TraceFailing and own occurrence, and the rollups as aggregates of the
// rows.
func checkDerived(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	db := s.DB()
	conv := s.derive.conv
	checkResources(t, s)
	type stored struct {
		seq                            int64
		row                            telemetry.SpanRow
		verdict                        sql.NullInt64
		entry, revisable, traceErrored bool
		runErr                         int64
		d                              spanDerived
		occ                            occurrenceColumns
	}
	rows, err := db.QueryContext(ctx, `SELECT `+spanColumns+`, SpanAttributes, EventsJSON, RunVerdict, IsEntry, EntryRevisable,
		TraceErrored, RunErrored, IsOrigin, `+coalesced("RunId", "Domain", "JobId", "JobName", "DbKey", "DbSystem", "ErrorMessage",
		"ExceptionType", "Fingerprint", "OccRunId", "OccDomain")+` FROM `+TracesTable+spansNewest)
	if err != nil {
		t.Fatal(err)
	}
	byTrace := map[string][]stored{}
	var order []string
	for rows.Next() {
		var r stored
		var attrs, events string
		if err := rows.Scan(&r.seq, &r.row.TraceID, &r.row.SpanID, &r.row.ParentSpanID, &r.row.Name, &r.row.Kind, &r.row.Service,
			&r.row.StartNs, &r.row.DurationNs, &r.row.StatusCode, &r.row.StatusMessage, &attrs, &events, &r.verdict, &r.entry,
			&r.revisable, &r.traceErrored, &r.runErr, &r.occ.origin, &r.d.RunID, &r.d.Domain, &r.d.JobID, &r.d.JobName, &r.d.DBKey,
			&r.d.DBSystem, &r.occ.msg, &r.occ.typ, &r.occ.fp, &r.occ.run, &r.occ.domn); err != nil {
			t.Fatal(err)
		}
		r.row.Attributes, r.row.Events = decodeAttrs(attrs), decodeEvents(events)
		if r.verdict.Valid {
			r.d.Verdict = r.verdict.Int64
		}
		if _, ok := byTrace[r.row.TraceID]; !ok {
			order = append(order, r.row.TraceID)
		}
		byTrace[r.row.TraceID] = append(byTrace[r.row.TraceID], r)
	}
	rows.Close()
	if len(order) == 0 {
		t.Fatal("no spans to check")
	}
	deferred := map[string]bool{}
	drows, err := db.QueryContext(ctx, `SELECT TraceId FROM `+DeferredTable)
	if err != nil {
		t.Fatal(err)
	}
	for drows.Next() {
		var tr string
		if err := drows.Scan(&tr); err != nil {
			t.Fatal(err)
		}
		deferred[tr] = true
	}
	drows.Close()
	errLogs := func(trace string) []telemetry.LogRow {
		b, err := scanLogs(ctx, db, &telemetry.LogScan{TraceIDs: []string{trace}, ErrorsOnly: true, Fields: telemetry.FieldAttributes})
		if err != nil {
			t.Fatal(err)
		}
		return b.Logs
	}
	failing := map[string]bool{}
	wrong := 0
	report := func(format string, args ...any) {
		if wrong++; wrong <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, tr := range order {
		list := byTrace[tr]
		spans := make([]telemetry.SpanRow, len(list))
		for i := range list {
			spans[i] = list[i].row
			failing[tr] = failing[tr] || list[i].row.IsError()
		}
		shapes := telemetry.ShapeTrace(spans)
		var want []*telemetry.Occurrence
		if !deferred[tr] {
			var ok bool
			want, ok = originsOf(spans, telemetry.TraceOccurrences(conv, spans, errLogs(tr)))
			if !ok {
				report("trace %s: its occurrences do not map onto origin spans, and it is not deferred", tr)
				continue
			}
		} else if len(spans) <= maxShapedSpans && len(errLogs(tr)) <= maxShapedLogs {
			report("trace %s is deferred with %d spans", tr, len(spans))
		}
		for i, r := range list {
			wd := s.derive.deriveSpan(&r.row)
			if !r.row.IsRoot() {
				if r.verdict.Valid {
					report("span %d: a RunVerdict on a span that is not a root", r.seq)
				}
				wd.Verdict = r.d.Verdict
			}
			if wd != r.d {
				report("span %d: derived %+v, want %+v", r.seq, r.d, wd)
			}
			if r.entry != shapes[i].Entry || r.revisable != revisable(r.row, shapes[i].Entry) {
				report("span %d (%s/%s parent %q, %s): entry %v revisable %v, ShapeTrace says %v", r.seq, r.row.Service, r.row.SpanID,
					r.row.ParentSpanID, r.row.Kind, r.entry, r.revisable, shapes[i].Entry)
			}
			wantErrored := r.row.IsRoot() && anyError(spans)
			if r.traceErrored != wantErrored || r.runErr != boolInt(r.row.IsRoot())*runErrored(wd.Verdict, wantErrored) {
				report("span %d: TraceErrored %v RunErrored %d, want %v and %d", r.seq, r.traceErrored, r.runErr, wantErrored,
					runErrored(wd.Verdict, wantErrored))
			}
			var w occurrenceColumns
			if want != nil {
				w = columnsOf(want[i])
			}
			if r.occ != w {
				report("span %d (trace %s): occurrence %+v, want %+v", r.seq, tr, r.occ, w)
			}
		}
	}
	// Log records.
	lrows, err := db.QueryContext(ctx, `SELECT `+logColumns+`, LogAttributes, IsError, TraceFailing, `+
		coalesced("ErrorMessage", "ExceptionType", "Fingerprint")+` FROM `+LogsTable)
	if err != nil {
		t.Fatal(err)
	}
	for lrows.Next() {
		var seq int64
		var l telemetry.LogRow
		var attrs string
		var isErr, folds bool
		var d logDerived
		if err := lrows.Scan(&seq, &l.TimeNs, &l.TraceID, &l.SpanID, &l.Service, &l.SeverityNumber, &l.SeverityText, &l.Body, &attrs,
			&isErr, &folds, &d.ErrorMessage, &d.ExceptionType, &d.Fingerprint); err != nil {
			t.Fatal(err)
		}
		l.Attributes = decodeAttrs(attrs)
		var wd logDerived
		if l.IsError() {
			wd = s.derive.deriveLog(&l)
		}
		if isErr != l.IsError() || folds != (l.IsError() && l.TraceID != "" && failing[l.TraceID]) || d != wd {
			report("log record %d: error %v folds %v %+v, want %v %v %+v", seq, isErr, folds, d, l.IsError(),
				l.IsError() && failing[l.TraceID], wd)
		}
	}
	lrows.Close()
	for name, pair := range map[string][2]string{
		ActivityTable: {
			`SELECT Bucket, ServiceName, Spans, SpanOccurrences, Logs, LogOccurrences FROM ` + ActivityTable,
			`SELECT Bucket, ServiceName, SUM(Spans), SUM(SpanOcc), SUM(Logs), SUM(LogOcc) FROM (
				SELECT Timestamp / ` + bucketExpr + ` AS Bucket, ServiceName, 1 AS Spans, IsOrigin AS SpanOcc, 0 AS Logs,
					0 AS LogOcc FROM ` + TracesTable + `
				UNION ALL SELECT Timestamp / ` + bucketExpr + `, ServiceName, 0, 0, 1, IsError AND NOT TraceFailing FROM ` + LogsTable + `)
			GROUP BY 1, 2`,
		},
		RunActivityTable: {
			`SELECT Bucket, ServiceName, Domain, Runs, ErroredRuns FROM ` + RunActivityTable,
			`SELECT Timestamp / ` + bucketExpr + `, ServiceName, COALESCE(Domain, ''), COUNT(*), SUM(RunErrored)
			FROM ` + TracesTable + ` WHERE IsRoot = 1 GROUP BY 1, 2, 3`,
		},
		DBActivityTable: {
			`SELECT Bucket, DbKey, ServiceName, DbSystem, Spans, Duration, Errors FROM ` + DBActivityTable,
			`SELECT Timestamp / ` + bucketExpr + `, DbKey, ServiceName, COALESCE(DbSystem, ''), COUNT(*), SUM(Duration),
				SUM(IsError) FROM ` + TracesTable + ` WHERE DbKey != '' GROUP BY 1, 2, 3, 4`,
		},
		GroupActivityTable: {
			`SELECT GroupKey, Bucket, Occurrences FROM ` + GroupActivityTable,
			`SELECT COALESCE(Fingerprint, '') || char(31) || COALESCE(OccDomain, '') || char(31) || ServiceName, Timestamp / ` + bucketExpr + `,
				COUNT(*) FROM ` + TracesTable + ` WHERE IsOrigin = 1 GROUP BY 1, 2`,
		},
		EntryActivityTable: {
			`SELECT Bucket, ServiceName, SpanName, Spans, Duration, Errors FROM ` + EntryActivityTable,
			`SELECT Timestamp / ` + bucketExpr + `, ServiceName, SpanName, COUNT(*), SUM(Duration), SUM(IsError)
				FROM ` + TracesTable + ` WHERE IsEntry = 1 GROUP BY 1, 2, 3`,
		},
	} {
		for _, q := range []string{pair[0] + ` EXCEPT ` + pair[1], pair[1] + ` EXCEPT ` + pair[0]} {
			var diff int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+q+`)`).Scan(&diff); err != nil || diff != 0 {
				t.Errorf("%s differs from the rows in %d rows (%v)", name, diff, err)
			}
		}
	}
	checkSketches(t, db)
}

// checkSketches asserts that every rollup row's sketch is the sketch of its rows' durations,
// byte for byte: kept exact through ingest, recomputation and pruning.
func checkSketches(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, c := range []struct{ table, rollup, rows string }{
		{DBActivityTable, `SELECT Bucket || '/' || DbKey || '/' || ServiceName || '/' || DbSystem, Sketch FROM ` + DBActivityTable,
			`SELECT (Timestamp / ` + bucketExpr + `) || '/' || DbKey || '/' || ServiceName || '/' || COALESCE(DbSystem, ''), Duration
			FROM ` + TracesTable + ` WHERE DbKey != ''`},
		{EntryActivityTable, `SELECT Bucket || '/' || ServiceName || '/' || SpanName, Sketch FROM ` + EntryActivityTable,
			`SELECT (Timestamp / ` + bucketExpr + `) || '/' || ServiceName || '/' || SpanName, Duration FROM ` + TracesTable +
				` WHERE IsEntry = 1`},
	} {
		want := map[string]sketch{}
		rows, err := db.Query(c.rows)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k string
			var d int64
			if err := rows.Scan(&k, &d); err != nil {
				t.Fatal(err)
			}
			if want[k] == nil {
				want[k] = sketch{}
			}
			want[k].add(d, 1)
		}
		rows.Close()
		got := map[string][]byte{}
		rows, err = db.Query(c.rollup)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k string
			var b []byte
			if err := rows.Scan(&k, &b); err != nil {
				t.Fatal(err)
			}
			got[k] = b
		}
		rows.Close()
		bad := 0
		for k, w := range want {
			if !bytes.Equal(got[k], w.encode()) {
				bad++
			}
		}
		for k := range got {
			if want[k] == nil {
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d sketches differ from their rows' durations (of %d)", c.table, bad, len(want))
		}
	}
}

func anyError(spans []telemetry.SpanRow) bool {
	for i := range spans {
		if spans[i].IsError() {
			return true
		}
	}
	return false
}

func TestDerivedColumnsAndRollupsStayExactThroughIngestAndPruning(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := openTestStore(t, Options{Retention: time.Hour})
	deliver(t, s, nil, newRandomTelemetry(1, scaled(600), now, 3*time.Hour))
	checkDerived(t, s)
	deleted, err := s.Prune(ctx)
	if err != nil || deleted == 0 {
		t.Fatalf("Prune deleted %d rows (%v); the data spans three hours and the retention one", deleted, err)
	}
	checkDerived(t, s)
	// What is left answers as it does in memory: traces cut by the retention lost parents
	// (their spans may now be entries), error spans and records.
	conv := conventions.Default()
	src := sourcesOver(s, mirrorOf(t, s), conv)
	windows := windowsAround(now, time.Hour)[:3]
	src.compareAll(t, conv, windows, runIDsOf(t, src.mem, windows[0]))

	// More than MaxBytes holds.
	traces, maxBytes := 1500, int64(768<<10)
	if raceEnabled {
		traces, maxBytes = 600, 400<<10
	}
	small := openTestStore(t, Options{MaxBytes: maxBytes})
	deliver(t, small, nil, newRandomTelemetry(2, traces, now, 3*time.Hour))
	if deleted, err := small.Prune(ctx); err != nil || deleted == 0 {
		t.Fatalf("size pruning deleted %d rows (%v)", deleted, err)
	}
	checkDerived(t, small)
}

// waitDerived polls until s's derived columns were computed with conv, or fails after a
// deadline.
func waitDerived(t *testing.T, s *Store, conv *conventions.Conventions) {
	t.Helper()
	fp := conventionsFingerprint(conv)
	deadline := time.Now().Add(30 * time.Second)
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
