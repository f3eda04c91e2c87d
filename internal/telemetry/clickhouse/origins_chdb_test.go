//go:build chdb

package clickhouse

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// originBench is the shared setup of the origin tests: the exporter's tables in chDB behind
// the HTTP interface, and a source over them.
type originBench struct {
	e  *chfront.Engine
	tb chfront.Tables
	b  *Backend
	// next is the start of the next generated case's window: each case has its own 10 s.
	next time.Time
}

func newOriginBench(t *testing.T) *originBench {
	t.Helper()
	if err := chfront.Available(); err != nil {
		t.Fatal(err)
	}
	e, err := chfront.Shared()
	if err != nil {
		t.Fatal(err)
	}
	tb := chfront.DefaultTables
	tb.Database = fmt.Sprintf("origins_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if err := e.Create(tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Exec("DROP DATABASE IF EXISTS `" + tb.Database + "`") })
	srv := httptest.NewServer(&chfront.Front{E: e})
	t.Cleanup(srv.Close)
	b, err := Open(Options{Source: "clickhouse+http://" + srv.Listener.Addr().String() + "/" + tb.Database})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &originBench{e: e, tb: tb, b: b, next: time.Now().Add(-2 * time.Hour).Truncate(time.Second)}
}

// drawTraces draws one to four traces into the next case's own 10 s, returning its start.
func (ob *originBench) drawTraces(rt *rapid.T, conv *conventions.Conventions) (time.Time, [][]telemetry.SpanRow) {
	start := ob.next
	ob.next = ob.next.Add(10 * time.Second)
	var traces [][]telemetry.SpanRow
	for k := rapid.IntRange(1, 4).Draw(rt, "traces"); k > 0; k-- {
		traces = append(traces, genTrace(rt, fmt.Sprintf("%d-t%d", start.Unix(), k), start.UnixNano(), conv))
	}
	return start, traces
}

// genTrace draws one trace of 1 to 50 spans (after its duplicates are dropped): parents that
// are mostly the span before (chains up to 50 deep), else any span of the trace (cycles,
// spans that are their own parent), none (several roots), or a span that never arrived;
// duplicate span ids with other parents and statuses; equal start times; exception events,
// status messages and error.type attributes that are there or blank.
func genTrace(t *rapid.T, trace string, base int64, conv *conventions.Conventions) []telemetry.SpanRow {
	n := rapid.IntRange(1, 50).Draw(t, "spans")
	pick := func(label string, v ...string) string { return rapid.SampledFrom(v).Draw(t, label) }
	var rows []telemetry.SpanRow
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("s%02d", i)
		copies := 1
		if rapid.IntRange(0, 9).Draw(t, "dup") == 0 {
			copies = 2
		}
		for c := 0; c < copies; c++ {
			var parent string
			switch rapid.IntRange(0, 9).Draw(t, "parentKind") {
			case 0:
				parent = ""
			case 1:
				parent = "gone"
			case 2, 3:
				parent = fmt.Sprintf("s%02d", rapid.IntRange(0, n-1).Draw(t, "anyParent"))
			default:
				if i > 0 {
					parent = fmt.Sprintf("s%02d", i-1)
				}
			}
			s := telemetry.SpanRow{TraceID: trace, SpanID: id, ParentSpanID: parent, Kind: telemetry.KindInternal,
				Name:    pick("name", "work", "GET /orders", ""),
				Service: pick("service", "checkout", "billing", ""),
				// Copies of one span have different times (which copy a scan keeps is the newest).
				StartNs:    base + int64(rapid.IntRange(0, 4).Draw(t, "start"))*int64(time.Millisecond) + int64(c)*int64(10*time.Millisecond),
				DurationNs: int64(time.Millisecond), StatusCode: telemetry.CodeUnset, Attributes: conventions.Attributes{}}
			if rapid.IntRange(0, 9).Draw(t, "error") < 4 {
				s.StatusCode = telemetry.CodeError
				s.StatusMessage = pick("statusMessage", "", "timed out", "upstream failed")
				if v := pick("errorType", "", "", "TimeoutError"); v != "" {
					s.Attributes["error.type"] = v
				}
				for k := rapid.IntRange(0, 2).Draw(t, "events"); k > 0; k-- {
					ev := telemetry.SpanEvent{Name: pick("eventName", "exception", "exception", "retry"), TimeNs: s.StartNs, Attributes: conventions.Attributes{}}
					if v := pick("excMessage", "", "connection reset", "deadline exceeded"); v != "" {
						ev.Attributes["exception.message"] = v
					}
					if v := pick("excType", "", "IOError", "Timeout"); v != "" {
						ev.Attributes["exception.type"] = v
					}
					s.Events = append(s.Events, ev)
				}
			}
			if parent == "" && len(conv.ExecutionIDKeys) > 0 && rapid.Bool().Draw(t, "exec") {
				s.Attributes[conv.ExecutionIDKeys[0]] = pick("execID", "run-1", "run-2", "")
			}
			if parent == "" && rapid.Bool().Draw(t, "http") {
				s.Attributes["http.request.method"] = "GET"
			}
			rows = append(rows, s)
		}
	}
	return rows
}

// genLogs draws error records of the traces: on one of their spans, on a span that is not
// there, or on none; with a body, a blank one, or exception attributes only.
func genLogs(t *rapid.T, traces [][]telemetry.SpanRow, base int64) []telemetry.LogRow {
	var logs []telemetry.LogRow
	for k := rapid.IntRange(0, 8).Draw(t, "logs"); k > 0; k-- {
		tr := traces[rapid.IntRange(0, len(traces)-1).Draw(t, "logTrace")]
		l := telemetry.LogRow{TraceID: tr[0].TraceID, Service: "checkout", SeverityNumber: 17, SeverityText: "ERROR",
			TimeNs:     base + int64(rapid.IntRange(0, 60).Draw(t, "logTime"))*int64(time.Millisecond),
			Body:       rapid.SampledFrom([]string{"", " ", "order 7 failed", "payment declined"}).Draw(t, "body"),
			Attributes: conventions.Attributes{}}
		switch rapid.IntRange(0, 3).Draw(t, "logSpan") {
		case 0:
			l.SpanID = ""
		case 1:
			l.SpanID = "gone"
		default:
			l.SpanID = tr[rapid.IntRange(0, len(tr)-1).Draw(t, "logSpanIndex")].SpanID
		}
		if rapid.Bool().Draw(t, "logException") {
			l.Attributes["exception.message"] = "logged exception"
			l.Attributes["exception.type"] = "LoggedError"
		}
		logs = append(logs, l)
	}
	return logs
}

// scanned keeps one copy per span id, the newest (then greatest id), in the order a scan
// returns them — what the adapter's queries see of a trace.
func scanned(rows []telemetry.SpanRow) []telemetry.SpanRow {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b telemetry.SpanRow) int {
		if a.StartNs != b.StartNs {
			return int(b.StartNs - a.StartNs)
		}
		return -compareStr(a.SpanID, b.SpanID)
	})
	seen := map[string]bool{}
	kept := out[:0]
	for _, s := range out {
		if !seen[s.SpanID] {
			seen[s.SpanID] = true
			kept = append(kept, s)
		}
	}
	return kept
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// load inserts a generated case and returns its window.
func (ob *originBench) load(t *rapid.T, traces [][]telemetry.SpanRow, logs []telemetry.LogRow, start time.Time) telemetry.Window {
	var all []telemetry.SpanRow
	for _, tr := range traces {
		all = append(all, tr...)
	}
	if err := ob.e.LoadSpans(ob.tb, all); err != nil {
		t.Fatal(err)
	}
	if err := ob.e.LoadLogs(ob.tb, logs); err != nil {
		t.Fatal(err)
	}
	return telemetry.Window{StartMs: start.UnixMilli(), EndMs: start.Add(10 * time.Second).UnixMilli()}
}

// sqlOrigins runs the origin query over the window's failing traces: each trace's origins
// and whether it was left to the Go rule.
func (ob *originBench) sqlOrigins(t *rapid.T, conv *conventions.Conventions, w telemetry.Window) (map[string][]string, map[string]bool) {
	q := &sqlText{}
	failing := func(q *sqlText) {
		q.w("(SELECT TraceId FROM ", ob.b.traces, " WHERE ")
		window(q, "Timestamp", w)
		q.w(" AND StatusCode = 'Error')")
	}
	// Each draw's traces lie in their own ten seconds of a table that holds every draw before
	// it: the failing traces' reads are narrowed to their time where the tools would narrow
	// them (every table, in the test that lowers narrowMinSpans).
	at, err := ob.b.extents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	within, err := ob.b.tracesSpan(context.Background(), w, failing, at.spans, at.known)
	if err != nil {
		t.Fatal(err)
	}
	ob.b.originsQuery(q, conv, failing, within, 1000, nil)
	byTrace := map[string]*originTrace{}
	var order []string
	if _, err := ob.b.r.query(context.Background(), q, originResultRows, func(rows driver.Rows) error {
		return originRow(rows, conv, byTrace, &order)
	}); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	origins, unresolved := map[string][]string{}, map[string]bool{}
	for _, id := range order {
		tr := byTrace[id]
		if len(tr.kept) != tr.want {
			t.Fatalf("trace %s: %d kept spans arrived of %d", id, len(tr.kept), tr.want)
		}
		slices.Sort(tr.origins)
		origins[id], unresolved[id] = tr.origins, tr.unresolved
	}
	return origins, unresolved
}

// The origin rule computed by ClickHouse names, in every trace, the spans telemetry.ShapeTrace
// names on the trace as a scan returns it — on generated trees up to 50 deep with cycles,
// spans that are their own parent, missing parents, several roots and duplicate span ids; a
// trace beyond the walk's bound is left to the Go rule, never answered wrong.
func TestTheOriginRuleInClickHouseNamesTheSpansShapeTraceNames(t *testing.T) {
	// The failing traces' reads are narrowed to their time however small the table, as the
	// tools narrow them on large ones.
	SetNarrowMinSpans(t, 0)
	ob := newOriginBench(t)
	conv, err := conventions.Preset("otel")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		steps int
	}{{"within the bounds", originMaxSteps}, {"with a walk of 3 parents at most", 3}} {
		t.Run(c.name, func(t *testing.T) {
			saved := originLimits
			originLimits.steps = c.steps
			t.Cleanup(func() { originLimits = saved })
			rapid.Check(t, func(rt *rapid.T) {
				start, traces := ob.drawTraces(rt, conv)
				w := ob.load(rt, traces, nil, start)
				got, unresolved := ob.sqlOrigins(rt, conv, w)
				for _, tr := range traces {
					spans := scanned(tr)
					var want []string
					for i, sh := range telemetry.ShapeTrace(spans) {
						if sh.Origin {
							want = append(want, spans[i].SpanID)
						}
					}
					slices.Sort(want)
					id := tr[0].TraceID
					if len(want) == 0 { // no error span, or only in a copy a scan does not keep
						if len(got[id]) > 0 {
							rt.Fatalf("trace %s has no error span but origins %v", id, got[id])
						}
						continue
					}
					if unresolved[id] {
						if len(spans) <= c.steps {
							rt.Fatalf("trace %s of %d spans was left to the Go rule within a bound of %d", id, len(spans), c.steps)
						}
						continue
					}
					if !slices.Equal(got[id], want) {
						rt.Fatalf("trace %s: ClickHouse names origins %v, ShapeTrace %v\n%s", id, got[id], want, describe(spans))
					}
				}
			})
		})
	}
}

// The error report through the origin query equals the one the Go rule gives on the traces'
// spans (every trace sent to it, as before the rule moved into ClickHouse): occurrences,
// messages and types with their fallbacks, records folded into the right origin, runs and
// domains read off the right root. So do the status's error counts through the counting
// origin query.
func TestErrorsThroughTheOriginQueryEqualTheGoRule(t *testing.T) {
	ob := newOriginBench(t)
	conv, err := conventions.Preset("otel")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		start, traces := ob.drawTraces(rt, conv)
		w := ob.load(rt, traces, genLogs(rt, traces, start.UnixNano()), start)
		got, _, err := ob.b.AggregateErrors(ctx, telemetry.ErrorsQuery{Window: w}, conv)
		if err != nil {
			rt.Fatal(err)
		}
		saved := originLimits
		originLimits.spans = 0 // every trace is over the bound: the Go rule decides
		want, _, err := ob.b.AggregateErrors(ctx, telemetry.ErrorsQuery{Window: w}, conv)
		originLimits = saved
		if err != nil {
			rt.Fatal(err)
		}
		if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			rt.Fatalf("through the origin query (-Go rule +ClickHouse):\n%s", diff)
		}
		// The status's error counts, through the counting origin query and through the Go
		// rule: per service, how many and the newest; as many as the report's occurrences.
		// Also over the first 2 ms of the window and the rest, which cut the drawn traces (their
		// spans start 0–4 ms after it, and later copies): an origin outside does not count,
		// although an error span above it is inside.
		for _, sw := range []telemetry.Window{w, {StartMs: w.StartMs, EndMs: w.StartMs + 2}, {StartMs: w.StartMs + 2, EndMs: w.EndMs}} {
			gotSt, _, err := ob.b.AggregateStatus(ctx, telemetry.StatusQuery{Window: sw}, conv)
			if err != nil {
				rt.Fatal(err)
			}
			originLimits.spans = 0
			wantSt, _, err := ob.b.AggregateStatus(ctx, telemetry.StatusQuery{Window: sw}, conv)
			originLimits = saved
			if err != nil {
				rt.Fatal(err)
			}
			if diff := gocmp.Diff(wantSt, gotSt, cmpopts.EquateEmpty()); diff != "" {
				rt.Fatalf("status over %+v through the counting origin query (-Go rule +ClickHouse):\n%s", sw, diff)
			}
			rep, _, err := ob.b.AggregateErrors(ctx, telemetry.ErrorsQuery{Window: sw}, conv)
			if err != nil {
				rt.Fatal(err)
			}
			if gotSt.Errors != rep.Events {
				rt.Fatalf("over %+v the status counts %d error occurrences, the error report %d", sw, gotSt.Errors, rep.Events)
			}
		}
	})
}

func describe(spans []telemetry.SpanRow) string {
	var s string
	for _, x := range spans {
		s += fmt.Sprintf("  %s <- %q %s %d\n", x.SpanID, x.ParentSpanID, x.StatusCode, x.StartNs)
	}
	return s
}
