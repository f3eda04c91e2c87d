//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/flatten"
)

// chdbEngine is the process's chDB; a missing library fails the test (under the chdb tag the
// library is required: chdb-go has loaded it already).
func chdbEngine(t testing.TB) *chfront.Engine {
	t.Helper()
	if err := chfront.Available(); err != nil {
		t.Fatal(err)
	}
	e, err := chfront.Shared()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var databases atomic.Int64

// freshTables creates the exporter's tables in a new database.
func freshTables(t testing.TB, e *chfront.Engine) chfront.Tables {
	t.Helper()
	tb := chfront.DefaultTables
	tb.Database = fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1e6, databases.Add(1))
	if err := e.Create(tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Exec("DROP DATABASE IF EXISTS `" + tb.Database + "`") })
	return tb
}

// countingFront serves the HTTP interface over e for the test's lifetime and counts the
// statements it runs.
func countingFront(t testing.TB, e *chfront.Engine) (string, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	return front(t, e, &chfront.Front{Timed: func(string, time.Duration, time.Duration) { sent.Add(1) }}), &sent
}

// front serves the HTTP interface over e for the test's lifetime.
func front(t testing.TB, e *chfront.Engine, f *chfront.Front) string {
	t.Helper()
	if f == nil {
		f = &chfront.Front{}
	}
	f.E = e
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// load loads a fixture dataset into the tables.
func load(t testing.TB, e *chfront.Engine, tb chfront.Tables, d *fixture.Dataset) {
	t.Helper()
	spans, rejected := flatten.Spans(d.Traces)
	if rejected != 0 {
		t.Fatalf("%d spans rejected", rejected)
	}
	if err := e.LoadSpans(tb, spans); err != nil {
		t.Fatal(err)
	}
	if err := e.LoadLogs(tb, flatten.Logs(d.Logs, time.Now())); err != nil {
		t.Fatal(err)
	}
}

// serverSpan is a server span of service svc named "GET /cart", started at before now, of 1 ms;
// failed gives it the Error status.
func serverSpan(now time.Time, trace, id, parent, svc string, before time.Duration, failed bool) telemetry.SpanRow {
	s := telemetry.SpanRow{TraceID: trace, SpanID: id, ParentSpanID: parent, Name: "GET /cart", Service: svc,
		Kind: telemetry.KindServer, StartNs: now.Add(-before).UnixNano(), DurationNs: int64(time.Millisecond), StatusCode: telemetry.CodeUnset,
		Attributes: conventions.Attributes{}}
	if failed {
		s.StatusCode = telemetry.CodeError
	}
	return s
}

// open opens the source over the front at addr on database db.
func open(t testing.TB, addr, db string, o clickhouse.Options) *clickhouse.Backend {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	}
	if o.Source == "" {
		o.Source = "clickhouse+http://" + addr + "/" + db
	}
	b, err := clickhouse.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

var _ = context.Background
var _ telemetry.Backend = (*clickhouse.Backend)(nil)

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
