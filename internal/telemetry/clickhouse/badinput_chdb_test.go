//go:build chdb

package clickhouse_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// A query over the read limit answers from what it read and says so: Scan.Limited, never an
// error the agent cannot act on.
func TestAQueryOverItsRowLimitAnswersLimited(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	d, err := fixture.New(fixture.Options{Preset: "otel", Now: telemetrytest.Now, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tb := freshTables(t, e)
	load(t, e, tb, d)
	ctx := context.Background()
	w := telemetrytest.Last(24 * time.Hour)
	full := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), d.Conventions)
	tiny := engine.New(open(t, addr, tb.Database, clickhouse.Options{MaxRowsToRead: 5}), d.Conventions)

	all, err := full.Backend().ScanSpans(ctx, telemetry.SpanScan{Window: w})
	if err != nil || all.Limited || len(all.Spans) < 10 {
		t.Fatalf("the unbounded scan: %d spans, limited %v, %v", len(all.Spans), all.Limited, err)
	}
	cut, err := tiny.Backend().ScanSpans(ctx, telemetry.SpanScan{Window: w})
	if err != nil {
		t.Fatalf("a scan over max_rows_to_read failed instead of answering limited: %v", err)
	}
	// ClickHouse stops at a block boundary: on data this small the block holds every span.
	if !cut.Limited || len(cut.Spans) > len(all.Spans) {
		t.Errorf("a scan over max_rows_to_read: %d of %d spans, limited %v; want limited", len(cut.Spans), len(all.Spans), cut.Limited)
	}
	perf, err := tiny.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: "checkout"})
	if err != nil || !perf.Scan.Limited {
		t.Errorf("service performance over max_rows_to_read: limited %v, %v; want limited, no error", perf.Scan.Limited, err)
	}
	st, err := tiny.Status(ctx, telemetry.StatusQuery{Window: w})
	if err != nil || !st.Scan.Limited {
		t.Errorf("status over max_rows_to_read: limited %v, %v; want limited, no error", st.Scan.Limited, err)
	}
	db, err := tiny.DBOperations(ctx, telemetry.DBQuery{Window: w})
	if err != nil || !db.Scan.Limited {
		t.Errorf("database operations over max_rows_to_read: limited %v, %v; want limited, no error", db.Scan.Limited, err)
	}
}

// Every failure of the source says what is wrong and how to fix it (the tools' error and the
// doctor's fix), without the server's own text or a secret, and the right password answers.
func TestBadSourcesAreToolErrorsWithAFix(t *testing.T) {
	e := chdbEngine(t)
	tb := freshTables(t, e)
	wrong := freshTables(t, e)
	if err := e.Exec("DROP TABLE `"+wrong.Database+"`.otel_traces_trace_id_ts_mv", "DROP TABLE `"+wrong.Database+"`.otel_traces",
		"CREATE TABLE `"+wrong.Database+"`.otel_traces (Timestamp DateTime64(9), TraceId String, SpanId String, ParentSpanId String, "+
			"SpanName String, SpanKind String, ServiceName String, Duration String, StatusCode String, StatusMessage String, "+
			"SpanAttributes String, ResourceAttributes String) ENGINE = MergeTree ORDER BY Timestamp"); err != nil {
		t.Fatal(err)
	}
	open := addrOf(t, e, nil)
	secured := addrOf(t, e, &chfront.Front{User: "runlens", Password: "s3cret"})
	denied := addrOf(t, e, &chfront.Front{Refuse: func(sql string) (int, string) {
		if strings.Contains(sql, "otel_") {
			return 497, "runlens: Not enough privileges. To execute this query, it's necessary to have the grant SELECT ON " + tb.Database + ".otel_traces"
		}
		return 0, ""
	}})
	unused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := unused.Addr().String()
	unused.Close()
	cases := []struct {
		name     string
		source   string
		password string
		want     string // in the message
		hint     string // in the hint
		kind     error
	}{
		{"tables that do not exist are named as the exporter's", "clickhouse+http://" + open + "/" + tb.Database + "?traces_table=spans&logs_table=logs",
			"", "has no table", "traces_table=", telemetry.ErrRefused},
		{"a database that does not exist is the same failure", "clickhouse+http://" + open + "/nodb", "", "no such table or database", "create_schema", telemetry.ErrRefused},
		{"tables with other column types are not the exporter's", "clickhouse+http://" + open + "/" + wrong.Database, "", "does not have the exporter's columns (ResourceAttributes is String", "Map-typed", telemetry.ErrRefused},
		{"a wrong password says which variable holds it", "clickhouse+http://runlens@" + secured + "/" + tb.Database, "wrong", "refused the user or password", "passwordEnv", telemetry.ErrRefused},
		{"a user without SELECT rights is told which grant", "clickhouse+http://runlens@" + denied + "/" + tb.Database, "", "may not read", "GRANT SELECT", telemetry.ErrRefused},
		{"an unreachable host is named as not answering", "clickhouse+http://" + gone + "/default", "", "did not answer", "host and port", telemetry.ErrUnreachable},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := clickhouse.Open(clickhouse.Options{Source: c.source, Password: c.password, DialTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			eng := engine.New(b, nil)
			_, err = eng.Runs(ctx, telemetry.RunsQuery{Window: telemetrytest.Last(time.Hour)})
			var se *telemetry.SourceError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a source error with a fix", err)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("%v is not %v", err, c.kind)
			}
			if !strings.Contains(se.Message, c.want) || !strings.Contains(se.Hint, c.hint) {
				t.Errorf("message %q hint %q; want %q and %q", se.Message, se.Hint, c.want, c.hint)
			}
			if strings.Contains(se.Message+se.Hint, "s3cret") || strings.Contains(se.Message+se.Hint, "DB::Exception") {
				t.Errorf("the error passes on server text or a secret: %q %q", se.Message, se.Hint)
			}
			if info := eng.Describe(ctx); info.Reachable || info.Problem == nil {
				t.Errorf("Describe says reachable %v, problem %v, for a failing source", info.Reachable, info.Problem)
			}
		})
	}
	t.Run("the right password is accepted", func(t *testing.T) {
		b, err := clickhouse.Open(clickhouse.Options{Source: "clickhouse+http://runlens@" + secured + "/" + tb.Database, Password: "s3cret"})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, err := engine.New(b, nil).Runs(ctx, telemetry.RunsQuery{Window: telemetrytest.Last(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	})
}

func addrOf(t *testing.T, e *chfront.Engine, f *chfront.Front) string { return front(t, e, f) }
