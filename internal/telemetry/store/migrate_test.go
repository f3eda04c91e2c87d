package store

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// mirrorOf loads an in-memory backend with the rows of s, in ingest order: the reference the
// engine over a migrated or pruned store is compared with.
func mirrorOf(t *testing.T, s *Store) *memory.Backend {
	t.Helper()
	ctx := context.Background()
	mb := &memory.Backend{}
	fields := telemetry.FieldAttributes | telemetry.FieldEvents
	rows, err := s.DB().QueryContext(ctx, `SELECT `+spanColumns+`, SpanAttributes, EventsJSON, ResourceAttributes FROM `+TracesTable+` ORDER BY Seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		r, _, err := scanSpanRow(rows, fields)
		if err != nil {
			t.Fatal(err)
		}
		mb.AddSpans(r)
	}
	rows.Close()
	rows, err = s.DB().QueryContext(ctx, `SELECT `+logColumns+`, LogAttributes, ResourceAttributes FROM `+LogsTable+` ORDER BY Seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		r, _, err := scanLogRow(rows, telemetry.FieldAttributes)
		if err != nil {
			t.Fatal(err)
		}
		mb.AddLogRows(r)
	}
	rows.Close()
	return mb
}

// copyFile copies testdata file name into a fresh directory and returns the copy's path.
func copyFile(t *testing.T, name string) string {
	t.Helper()
	src, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), name)
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAFileWrittenWithSchemaVersion2IsMigratedAndRecomputed(t *testing.T) {
	// testdata/schema2.db was written by the build before schema version 3 (commit ccd81e1)
	// from its random telemetry, with the otel preset.
	recomputeChunk = 40 // many small transactions
	t.Cleanup(func() { recomputeChunk = 2000 })
	ctx := context.Background()
	path := copyFile(t, "schema2.db")
	if _, err := Open(ctx, Options{Path: path, ReadOnly: true}); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("a reader opened a file of schema version 2: %v", err)
	}
	conv := mustPreset(t, "otel")
	s := openTestStore(t, Options{Path: path, Retention: 10000 * time.Hour, Conventions: conv})
	var version int
	if err := s.DB().QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion || SchemaVersion != 7 {
		t.Fatalf("schema version %d (%v), want 7", version, err)
	}
	waitDerived(t, s, conv)
	if st, err := s.Stats(ctx); err != nil || st.Recomputing || st.Spans == 0 {
		t.Fatalf("Stats after the recomputation: %+v (%v)", st, err)
	}
	checkDerived(t, s)
	src := sourcesOver(s, mirrorOf(t, s), conv)
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	windows := windowsAround(now, 3*time.Hour)
	src.capabilitiesHandle(t, conv, windows[0])
	src.compareAll(t, conv, windows, runIDsOf(t, src.mem, windows[0]))
}

// downgrade turns a store file back into schema version 1, as runlens builds before the
// derived columns wrote it: every index, derived column, rollup and derived meta key dropped.
func downgrade(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	toSchema5(t, db)
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
		"ErrorMessage", "ExceptionType", "Fingerprint", "RunVerdict", "RunErrored", "DbKey", "IsEntry", "EntryRevisable",
		"IsOrigin", "OccRunId", "OccDomain"} {
		stmts = append(stmts, `ALTER TABLE otel_traces DROP COLUMN `+c)
	}
	for _, c := range []string{"ErrorMessage", "ExceptionType", "Fingerprint", "TraceFailing"} {
		stmts = append(stmts, `ALTER TABLE otel_logs DROP COLUMN `+c)
	}
	stmts = append(stmts, `DROP TABLE `+ActivityTable, `DROP TABLE `+RunActivityTable, `DROP TABLE `+DBActivityTable,
		`DROP TABLE `+EntryActivityTable, `DROP TABLE `+GroupActivityTable, `DROP TABLE `+DeferredTable, `DELETE FROM meta WHERE key LIKE 'derived_%'`, migrations[0], `PRAGMA user_version = 1`)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestAStoreFromBeforeDerivedColumnsIsMigratedAndFilledIn(t *testing.T) {
	recomputeChunk = 25
	t.Cleanup(func() { recomputeChunk = 2000 })
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "netscript")
	first := openTestStore(t, Options{Retention: 30 * 24 * time.Hour, Conventions: conv})
	deliver(t, first, nil, newRandomTelemetry(6, scaled(120), now, 3*time.Hour))
	path := first.Path()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	downgrade(t, path)
	if _, err := Open(ctx, Options{Path: path, ReadOnly: true}); err == nil {
		t.Fatal("a reader opened a file of an older schema version")
	}
	s := openTestStore(t, Options{Path: path, Retention: 30 * 24 * time.Hour, Conventions: conv})
	waitDerived(t, s, conv)
	checkDerived(t, s)
	src := sourcesOver(s, mirrorOf(t, s), conv)
	windows := windowsAround(now, 3*time.Hour)[:3]
	src.compareAll(t, conv, windows, runIDsOf(t, src.mem, windows[0]))
}

func TestOtherConventionsAreDeclinedThenRecomputedInTheBackground(t *testing.T) {
	recomputeChunk = 30
	t.Cleanup(func() { recomputeChunk = 2000 })
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	otel, netscript := mustPreset(t, "otel"), mustPreset(t, "netscript")
	first := openTestStore(t, Options{Retention: 30 * 24 * time.Hour, Conventions: otel})
	deliver(t, first, nil, newRandomTelemetry(7, scaled(150), now, 3*time.Hour))
	path := first.Path()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// A reader with other conventions than the columns': every capability declines, and the
	// engine still answers (from scans) what it answers over the same rows in memory.
	reader, err := Open(ctx, Options{Path: path, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	src := sourcesOver(reader, mirrorOf(t, reader), netscript)
	w := telemetry.Window{StartMs: now.Add(-4 * time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	if _, handled, err := src.backend.CountActivity(ctx, telemetry.StatusQuery{Window: w}, telemetry.Ask{Conv: netscript, Limits: telemetry.DefaultLimits()}); handled || err != nil {
		t.Fatalf("the status capability answered with conventions the columns were not computed with (%v)", err)
	}
	if _, handled, err := src.backend.ListRuns(ctx, telemetry.RunsQuery{Window: w}, telemetry.Ask{Conv: netscript, Limits: telemetry.DefaultLimits()}); handled || err != nil {
		t.Fatalf("the run capability answered with conventions the columns were not computed with (%v)", err)
	}
	src.sameAnswers(t, "Runs before the recomputation", func(s telemetry.Source) (any, error) {
		return s.Runs(ctx, telemetry.RunsQuery{Window: w, Limit: 100})
	})
	// A writer with the new conventions recomputes the columns, then the capabilities answer.
	s := openTestStore(t, Options{Path: path, Retention: 30 * 24 * time.Hour, Conventions: netscript})
	waitDerived(t, s, netscript)
	checkDerived(t, s)
	src = sourcesOver(s, mirrorOf(t, s), netscript)
	src.capabilitiesHandle(t, netscript, w)
	windows := windowsAround(now, 3*time.Hour)[:3]
	src.compareAll(t, netscript, windows, runIDsOf(t, src.mem, windows[0]))
}

// toSchema5 turns the store behind db back into schema version 5, as the build before
// resources were stored once wrote it: every row holds its own resource and scope texts, and
// no index finds a trace's root (schema version 7).
func toSchema5(t *testing.T, db *sql.DB) {
	t.Helper()
	var stmts []string
	for _, table := range []string{TracesTable, LogsTable} {
		stmts = append(stmts, `UPDATE `+table+` SET (ResourceAttributes, ScopeName, ScopeVersion) =
			(SELECT r.ResourceAttributes, r.ScopeName, r.ScopeVersion FROM `+ResourceScopesTable+` r WHERE r.Id = `+table+`.ResourceScopeId)
			WHERE ResourceScopeId IS NOT NULL`,
			`ALTER TABLE `+table+` DROP COLUMN ResourceScopeId`)
	}
	stmts = append(stmts, `DROP INDEX otel_traces_trace_roots`, `DROP TABLE `+ResourceScopesTable, `PRAGMA user_version = 5`)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// toSchema3 turns a store file back into schema version 3, as the build before the duration
// sketches wrote it: no entry span rollup, a database rollup with hour buckets and no sketch
// column, and no index of the domains' roots (schema version 5).
func toSchema3(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	toSchema5(t, db)
	for _, q := range []string{
		`DROP INDEX otel_traces_domain_runs`,
		`DROP TABLE ` + EntryActivityTable,
		`DROP INDEX otel_traces_origin_groups`,
		`DROP TABLE ` + GroupActivityTable,
		`DROP TABLE ` + DBActivityTable,
		`CREATE TABLE otel_db_activity (Bucket INTEGER NOT NULL, DbKey TEXT NOT NULL, ServiceName TEXT NOT NULL,
			DbSystem TEXT NOT NULL, Spans INTEGER NOT NULL DEFAULT 0, Duration INTEGER NOT NULL DEFAULT 0,
			Errors INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (Bucket, DbKey, ServiceName, DbSystem)) WITHOUT ROWID`,
		`INSERT INTO otel_db_activity SELECT Timestamp / 3600000000000, DbKey, ServiceName, COALESCE(DbSystem, ''), COUNT(*),
			SUM(Duration), SUM(IsError) FROM otel_traces WHERE DbKey != '' GROUP BY 1, 2, 3, 4`,
		`PRAGMA user_version = 3`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestAStoreOfSchemaVersion3GetsItsDurationSketchesOnOpen(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	first := openTestStore(t, Options{Retention: 30 * 24 * time.Hour, Conventions: conv})
	deliver(t, first, nil, newRandomTelemetry(7, scaled(120), now, 3*time.Hour))
	path := first.Path()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	toSchema3(t, path)
	if _, err := Open(ctx, Options{Path: path, ReadOnly: true}); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("a reader opened a file of schema version 3: %v", err)
	}
	s := openTestStore(t, Options{Path: path, Retention: 30 * 24 * time.Hour, Conventions: conv})
	var entries, sketched int
	if err := s.DB().QueryRow(`SELECT (SELECT COUNT(*) FROM `+EntryActivityTable+` WHERE Sketch IS NOT NULL),
		(SELECT COUNT(*) FROM `+DBActivityTable+` WHERE Sketch IS NOT NULL)`).Scan(&entries, &sketched); err != nil {
		t.Fatal(err)
	}
	if entries == 0 || sketched == 0 {
		t.Fatalf("after the migration %d entry and %d database rollup rows have sketches", entries, sketched)
	}
	// The derived columns were current: no recomputation, the capabilities answer at once.
	if ok, err := s.derivedCurrent(ctx, conventionsFingerprint(conv)); err != nil || !ok {
		t.Fatalf("derived columns not current after the migration (%v)", err)
	}
	checkDerived(t, s)
	sketchExactMax = 0 // every percentile from the sketches
	t.Cleanup(func() { sketchExactMax = 5_000 })
	src := sourcesOver(s, mirrorOf(t, s), conv)
	src.capabilitiesHandle(t, conv, windowsAround(now, 3*time.Hour)[0])
}
