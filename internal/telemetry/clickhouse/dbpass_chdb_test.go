//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// The database operations are computed in one query when ClickHouse's statement
// normalization groups the window's raw statements as the conventions do, and in two when it
// does not (ClickHouse keeps IN lists of one element apart from longer ones, and drops
// comments, which the conventions keep); the answers are the engine's own from the spans
// either way.
func TestDatabaseOperationsTakeOneQueryWhenClickHouseGroupsStatementsAsTheConventionsDo(t *testing.T) {
	e := chdbEngine(t)
	addr, sent := countingFront(t, e)
	now := time.Now().Truncate(time.Second)
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	// Conventions whose key prefix leaves the statement keys outside it: a span is a database
	// operation only with a non-empty attribute under db.system. (not the legacy db.system).
	narrow, err := conventions.Preset("otel")
	if err != nil {
		t.Fatal(err)
	}
	narrow.DBKeys.KeyPrefixes = []string{"db.system"}
	literal := []statement{
		{"postgresql", func(i int) string { return fmt.Sprintf("SELECT * FROM orders WHERE id = %d", i%37) }, false},
		{"mysql", func(i int) string {
			return fmt.Sprintf("UPDATE accounts SET balance = balance - %d WHERE id = %d", i%11, i%5)
		}, false},
		{"postgresql", func(i int) string { return fmt.Sprintf("SELECT name FROM users WHERE email = 'u%d@example.com'", i%13) }, false},
	}
	for _, c := range []struct {
		name  string
		stmts []statement
		// passes is how many queries IndexDB sends for each of the queries below: the
		// IN-list statements are PostgreSQL's, and billing's spans hold one of the two.
		passes [3]int
		conv   *conventions.Conventions
	}{
		{"literals", literal, [3]int{1, 1, 1}, nil},
		{"IN lists of one and of several elements", append(literal, statement{"postgresql", func(i int) string {
			if i%2 == 0 {
				return "SELECT * FROM items WHERE id IN (7)"
			}
			return "SELECT * FROM items WHERE id IN (7, 8, 9)"
		}, false}), [3]int{2, 1, 1}, nil},
		{"comments", append(literal, statement{"mysql", func(i int) string {
			return fmt.Sprintf("SELECT %d /* from %s */", i, []string{"cart", "search", "admin"}[i%3])
		}, false}), [3]int{2, 2, 2}, nil},
		{"statement keys outside the key prefixes", append(literal, statement{"mysql", func(i int) string {
			return fmt.Sprintf("DELETE FROM sessions WHERE id = %d", i)
		}, true}), [3]int{1, 1, 1}, narrow},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := freshTables(t, e)
			if err := e.LoadSpans(tb, dbSpans(now, c.stmts, 600)); err != nil {
				t.Fatal(err)
			}
			eng := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), c.conv)
			ctx := context.Background()
			if _, err := eng.DBOperations(ctx, telemetry.DBQuery{Window: w}); err != nil { // the schema check, once
				t.Fatal(err)
			}
			for i, q := range []telemetry.DBQuery{{Window: w}, {Window: w, System: "mysql"}, {Window: w, Service: "billing", TopN: 2}} {
				sent.Store(0)
				got, err := eng.DBOperations(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				n := int(sent.Load())
				if n != c.passes[i] {
					t.Errorf("%+v: %d queries, want %d", q, n, c.passes[i])
				}
				want, err := eng.ScansOnly().DBOperations(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got.SampleCount == 0 || len(got.Operations) == 0 {
					t.Fatalf("%+v: no operations", q)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
					t.Errorf("%+v differs from the engine's answer from the spans (-want +got):\n%s", q, diff)
				}
			}
		})
	}
}

// statement is a database system and the statement of its i-th span; legacy names the
// system by the attribute db.system instead of db.system.name.
type statement struct {
	system string
	text   func(i int) string
	legacy bool
}

// dbSpans are n spans of each statement over the hour before now, from two services, with
// durations spread so each operation's p95 is one of its spans, and some failing.
func dbSpans(now time.Time, stmts []statement, n int) []telemetry.SpanRow {
	var rows []telemetry.SpanRow
	for k, st := range stmts {
		for i := range n {
			id := k*n + i
			s := telemetry.SpanRow{TraceID: fmt.Sprintf("%032x", id+1), SpanID: fmt.Sprintf("%016x", id+1), Name: "query",
				Service: []string{"checkout", "billing"}[i%2], Kind: telemetry.KindClient,
				StartNs:    now.Add(-time.Duration(id+1) * 3 * time.Second % time.Hour).UnixNano(),
				DurationNs: int64((id*7919)%100_000+1) * 1000, StatusCode: telemetry.CodeUnset,
				Attributes: conventions.Attributes{"db.system.name": st.system, "db.query.text": st.text(i)}}
			if st.legacy {
				s.Attributes = conventions.Attributes{"db.system": st.system, "db.query.text": st.text(i)}
			}
			if i%17 == 0 {
				s.StatusCode = telemetry.CodeError
			}
			rows = append(rows, s)
		}
	}
	return rows
}
