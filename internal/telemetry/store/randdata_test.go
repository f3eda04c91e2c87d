package store

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// randomTelemetry is a seeded mix of what the derived columns and rollups must get right:
// several services (one without service.name), roots of every domain, job spans (as roots and
// as children), database spans with stable and legacy names and literal-laden statements,
// errors anywhere in a trace, and error records with and without a trace — delivered in
// batches that split traces and send children before their roots.
type randomTelemetry struct {
	traces []ptrace.Traces
	logs   []plog.Logs
}

func newRandomTelemetry(seed uint64, traces int, now time.Time, span time.Duration) randomTelemetry {
	rng := rand.New(rand.NewPCG(seed, seed*7+1))
	type pending struct {
		service string
		build   func(ptrace.Span)
		trace   pcommon.TraceID
		id      pcommon.SpanID
		parent  pcommon.SpanID
		start   int64
		dur     int64
		failed  bool
	}
	var spans []pending
	var out randomTelemetry
	services := []string{"checkout", "billing", "worker", ""}
	id := func() (s pcommon.SpanID) {
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		s[0] |= 1
		return s
	}
	logs := plog.NewLogs()
	for i := range traces {
		var tid pcommon.TraceID
		for j := range tid {
			tid[j] = byte(rng.Uint32())
		}
		tid[0] |= 1
		svc := services[rng.IntN(len(services))]
		start := now.Add(-time.Duration(rng.Int64N(int64(span)))).UnixNano()
		root := pending{service: svc, trace: tid, id: id(), start: start, dur: int64(rng.IntN(500)+1) * 1e6, failed: rng.IntN(8) == 0}
		kind := rng.IntN(5)
		root.build = func(sp ptrace.Span) {
			a := sp.Attributes()
			switch kind {
			case 0:
				sp.SetName("GET /orders/{id}")
				a.PutStr("http.request.method", "GET")
			case 1:
				sp.SetName("process payments")
				a.PutStr("messaging.system", "kafka")
			case 2:
				sp.SetName("job.execute")
				a.PutStr("job.id", fmt.Sprintf("job-%d", i))
				a.PutStr("job.name", []string{"nightly", "sync", "export"}[i%3])
				if rng.IntN(2) == 0 {
					a.PutStr("job.status", []string{"succeeded", "failed"}[rng.IntN(2)])
				}
				a.PutInt("job.exit_code", int64(rng.IntN(3)))
			case 3:
				sp.SetName("pipeline")
				a.PutStr("cicd.pipeline.run.id", fmt.Sprintf("run-%d", i%7))
			default:
				sp.SetName("tick")
			}
		}
		spans = append(spans, root)
		for k := range rng.IntN(5) {
			child := pending{service: svc, trace: tid, id: id(), parent: root.id,
				start: start + int64(rng.IntN(100))*1e6, dur: int64(rng.IntN(300)) * 1e6, failed: rng.IntN(10) == 0}
			if rng.IntN(5) == 0 {
				child.service = services[rng.IntN(len(services))] // a downstream service
			}
			variant := rng.IntN(6)
			n := rng.IntN(1000)
			child.build = func(sp ptrace.Span) {
				a := sp.Attributes()
				switch variant {
				case 0:
					sp.SetName("SELECT orders")
					a.PutStr("db.system.name", "postgresql")
					a.PutStr("db.operation.name", "SELECT")
					a.PutStr("db.collection.name", "orders")
				case 1:
					sp.SetName("UPDATE")
					a.PutStr("db.system", "mysql")
					a.PutStr("db.statement", fmt.Sprintf("UPDATE accounts SET n = %d WHERE id IN (%d, %d)", n, n+1, n+2))
				case 2:
					sp.SetName("GET")
					a.PutStr("db.system", "redis")
					a.PutStr("db.operation", "GET")
				case 3:
					sp.SetName("sub-job")
					a.PutStr("job.id", fmt.Sprintf("sub-%d-%d", i, k))
				default:
					sp.SetName([]string{"render", "validate"}[variant%2])
				}
			}
			spans = append(spans, child)
		}
		if rng.IntN(6) == 0 {
			lr := logs.ResourceLogs().AppendEmpty()
			lr.Resource().Attributes().PutStr("service.name", svc)
			r := lr.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			r.SetTimestamp(pcommon.Timestamp(start + 1e6))
			r.SetSeverityNumber(plog.SeverityNumberError)
			r.Body().SetStr(fmt.Sprintf("request %d failed", i))
			r.Attributes().PutStr("exception.type", "RequestFailed")
			if rng.IntN(3) > 0 {
				r.SetTraceID(tid)
			}
		}
	}
	rng.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
	for lo := 0; lo < len(spans); {
		hi := min(len(spans), lo+1+rng.IntN(40))
		td := ptrace.NewTraces()
		for _, p := range spans[lo:hi] {
			rs := td.ResourceSpans().AppendEmpty()
			if p.service != "" {
				rs.Resource().Attributes().PutStr("service.name", p.service)
			}
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(p.trace)
			sp.SetSpanID(p.id)
			if !p.parent.IsEmpty() {
				sp.SetParentSpanID(p.parent)
			}
			sp.SetStartTimestamp(pcommon.Timestamp(p.start))
			sp.SetEndTimestamp(pcommon.Timestamp(p.start + p.dur))
			p.build(sp)
			if p.failed {
				sp.Status().SetCode(ptrace.StatusCodeError)
				ev := sp.Events().AppendEmpty()
				ev.SetName("exception")
				ev.Attributes().PutStr("exception.type", "Boom")
				ev.Attributes().PutStr("exception.message", fmt.Sprintf("boom %d at 0x%x", p.dur, p.start))
			}
		}
		out.traces = append(out.traces, td)
		lo = hi
	}
	out.logs = append(out.logs, logs)
	return out
}
