package store

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// randomTelemetry is a seeded mix of what the derived columns, rollups and capabilities must
// get right, delivered as span and log batches in one order:
//
//   - several services (one without service.name, one literally named "unknown"), calls across
//     services, server and consumer spans below others, self-parented spans;
//   - roots of every domain of both presets, job spans (as roots and as children) with statuses,
//     outcomes and exit codes of every type, pipeline and execution ids;
//   - database spans with stable and legacy names, literal-laden statements, summaries, pool
//     spans without a query, and Redis calls;
//   - errors anywhere: exceptions propagating through nested error spans, sibling failures,
//     error spans without events or messages, error logs inside and outside failing traces, with
//     span ids, without a trace, and of traces that never arrive;
//   - parents that never arrive, duplicate span ids (a span sent twice, and another span reusing
//     an id), children starting before their parents (clock skew);
//   - attributes of the wrong type (a job id or exit code as a number, a boolean or an array;
//     an HTTP method as an integer);
//
// in batches that split traces and send children before their roots, logs between them.
type randomTelemetry struct {
	batches []randomBatch
}

// randomBatch is one delivery: spans or log records.
type randomBatch struct {
	traces *ptrace.Traces
	logs   *plog.Logs
}

var randomServices = []string{"checkout", "billing", "worker", "", "unknown", "gateway"}

type randomSpan struct {
	service string
	trace   pcommon.TraceID
	id      pcommon.SpanID
	parent  pcommon.SpanID
	start   int64
	dur     int64
	build   func(ptrace.Span)
	kind    ptrace.SpanKind
	fail    int // 0 no, 1 with an exception event, 2 status message only, 3 bare error
}

type randomLog struct {
	service string
	build   func(plog.LogRecord)
}

func newRandomTelemetry(seed uint64, traces int, now time.Time, span time.Duration) randomTelemetry {
	rng := rand.New(rand.NewPCG(seed, seed*7+1))
	id := func() (s pcommon.SpanID) {
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		s[0] |= 1
		return s
	}
	traceID := func() (t pcommon.TraceID) {
		for j := range t {
			t[j] = byte(rng.Uint32())
		}
		t[0] |= 1
		return t
	}
	var spans []randomSpan
	var logs []randomLog
	// Some ids are reused by another span of the same trace (corrupt instrumentation).
	for i := range traces {
		tid := traceID()
		svc := randomServices[rng.IntN(len(randomServices))]
		start := now.Add(-time.Duration(rng.Int64N(int64(span)))).UnixNano()
		root := randomSpan{service: svc, trace: tid, id: id(), start: start, dur: int64(rng.IntN(500)+1) * 1e6,
			kind: []ptrace.SpanKind{ptrace.SpanKindServer, ptrace.SpanKindConsumer, ptrace.SpanKindInternal}[rng.IntN(3)]}
		if rng.IntN(7) == 0 {
			root.fail = 1 + rng.IntN(3)
		}
		kind := rng.IntN(9)
		n := i
		rootSeed := rng.Uint64()
		root.build = func(sp ptrace.Span) {
			// Its own generator: a span sent twice is sent alike.
			rng := rand.New(rand.NewPCG(rootSeed, 1))
			pick := func(list ...string) string { return list[rng.IntN(len(list))] }
			a := sp.Attributes()
			switch kind {
			case 0:
				sp.SetName("GET /orders/{id}")
				if rng.IntN(4) == 0 {
					a.PutInt("http.request.method", 1) // wrong type
				} else {
					a.PutStr("http.request.method", "GET")
				}
			case 1:
				sp.SetName("process payments")
				a.PutStr("messaging.system", "kafka")
			case 2:
				sp.SetName("job.execute")
				switch rng.IntN(4) {
				case 0:
					a.PutInt("job.id", int64(n))
				default:
					a.PutStr("job.id", fmt.Sprintf("job-%d", n))
				}
				a.PutStr("job.name", pick("nightly", "sync", "export"))
				switch rng.IntN(4) {
				case 0:
					a.PutStr("job.status", pick("succeeded", "failed", "cancelled", " Failed ", "done"))
				case 1:
					a.PutInt("job.status", 3)
				}
				switch rng.IntN(5) {
				case 0:
					a.PutInt("job.exit_code", int64(rng.IntN(3)))
				case 1:
					a.PutStr("job.exit_code", pick("0", "1", " 2 ", "2.0", "x"))
				case 2:
					a.PutBool("job.exit_code", true)
				case 3:
					a.PutEmptySlice("job.exit_code").AppendEmpty().SetInt(1)
				}
				if rng.IntN(2) == 0 {
					a.PutStr("job.outcome", pick("sent", "partial", "aborted"))
				}
			case 3:
				sp.SetName("pipeline")
				a.PutStr("cicd.pipeline.run.id", fmt.Sprintf("run-%d", n%7))
				a.PutStr("cicd.pipeline.result", pick("success", "failure", "cancellation"))
			case 4:
				sp.SetName("saga")
				a.PutStr("netscript.saga.id", "payments")
				a.PutStr("netscript.saga.instance.id", fmt.Sprintf("saga-%d", n%5))
			case 5:
				sp.SetName("worker tick")
				a.PutStr("netscript.worker.id", "w1")
				a.PutStr("netscript.execution.id", fmt.Sprintf("exec-%d", n%11))
				a.PutStr("netscript.job.id", fmt.Sprintf("exec-%d", (n+3)%11))
			case 6:
				sp.SetName("timer")
				a.PutStr("faas.trigger", pick("timer", "http"))
			default:
				sp.SetName("tick")
			}
		}
		all := []randomSpan{root}
		// A tree below the root: each span's parent one of the spans before it.
		for k := range rng.IntN(7) {
			parent := all[rng.IntN(len(all))]
			child := randomSpan{service: parent.service, trace: tid, id: id(), parent: parent.id,
				start: parent.start + int64(rng.IntN(100))*1e6, dur: int64(rng.IntN(300)) * 1e6, kind: ptrace.SpanKindInternal}
			switch rng.IntN(12) {
			case 0:
				child.start = parent.start - int64(rng.IntN(50)+1)*1e6 // clock skew
			case 1:
				child.service = randomServices[rng.IntN(len(randomServices))] // a call into another service
				child.kind = ptrace.SpanKindServer
			case 2:
				child.service = randomServices[rng.IntN(len(randomServices))]
			case 3:
				child.id = parent.id // an id reused by another span
			case 4:
				child.parent = child.id // self-parented
			case 5:
				child.parent = id() // the parent never arrives
			}
			if rng.IntN(8) == 0 || (parent.fail > 0 && rng.IntN(2) == 0) {
				child.fail = 1 + rng.IntN(3) // nested failures: the exception propagates up
			}
			variant := rng.IntN(9)
			v := rng.IntN(1000)
			childSeed := rng.Uint64()
			child.build = func(sp ptrace.Span) {
				rng := rand.New(rand.NewPCG(childSeed, 2))
				pick := func(list ...string) string { return list[rng.IntN(len(list))] }
				a := sp.Attributes()
				switch variant {
				case 0:
					sp.SetName("SELECT orders")
					sp.SetKind(ptrace.SpanKindClient)
					a.PutStr("db.system.name", "postgresql")
					a.PutStr("db.operation.name", "SELECT")
					a.PutStr("db.collection.name", "orders")
					a.PutStr("db.query.text", fmt.Sprintf("SELECT * FROM orders WHERE id = %d", v%3))
				case 1:
					sp.SetName("UPDATE")
					sp.SetKind(ptrace.SpanKindClient)
					a.PutStr("db.system", "mysql")
					a.PutStr("db.statement", fmt.Sprintf("UPDATE accounts SET n = %d WHERE id IN (%d, %d)", v, v+1, v+2))
				case 2:
					sp.SetName("GET")
					a.PutStr("db.system", "redis")
					a.PutStr("db.operation", "GET")
				case 3:
					sp.SetName("connect")
					a.PutStr("db.system", "postgresql") // a pool span: no query
				case 4:
					sp.SetName("sub-job")
					a.PutStr("job.id", fmt.Sprintf("sub-%d-%d", n, k))
					a.PutStr("job.name", "sub")
				case 5:
					sp.SetName("summary")
					a.PutStr("db.system.name", "postgresql")
					a.PutStr("db.query.summary", "SELECT users")
					a.PutInt("db.query.text", int64(v)) // wrong type: still a statement
				case 6:
					sp.SetName("kv")
					a.PutStr("netscript.kv.operation", "get")
				default:
					sp.SetName(pick("render", "validate", "middleware"))
				}
			}
			all = append(all, child)
		}
		spans = append(spans, all...)
		// The same span sent twice (a retried export).
		if rng.IntN(10) == 0 {
			spans = append(spans, all[rng.IntN(len(all))])
		}
		// Logs of the trace: an error one now and then, with or without the span id.
		for range rng.IntN(3) {
			s := all[rng.IntN(len(all))]
			errLog := rng.IntN(3) == 0 || s.fail > 0
			withTrace := rng.IntN(5) > 0
			sev := rng.IntN(4)
			logSeed := rng.Uint64()
			logs = append(logs, randomLog{service: s.service, build: func(r plog.LogRecord) {
				rng := rand.New(rand.NewPCG(logSeed, 3))
				pick := func(list ...string) string { return list[rng.IntN(len(list))] }
				r.SetTimestamp(pcommon.Timestamp(s.start + 1e6))
				r.SetSeverityNumber(plog.SeverityNumberInfo)
				r.Body().SetStr(fmt.Sprintf("handled %d", n))
				if errLog {
					switch sev {
					case 0:
						r.SetSeverityNumber(plog.SeverityNumberError)
					case 1:
						r.SetSeverityNumber(0)
						r.SetSeverityText(" error ")
					case 2:
						r.SetSeverityNumber(plog.SeverityNumberFatal)
						r.SetSeverityText("FATAL")
					default:
						r.SetSeverityNumber(plog.SeverityNumberError2)
					}
					r.Body().SetStr(pick(fmt.Sprintf("request %d failed", n), "", "  ", "timeout talking to 10.0.0.7"))
					if rng.IntN(2) == 0 {
						r.Attributes().PutStr("exception.type", "RequestFailed")
					}
					if rng.IntN(3) == 0 {
						r.Attributes().PutStr("exception.message", fmt.Sprintf("boom %d", n%4))
					}
				}
				if withTrace {
					r.SetTraceID(s.trace)
					if rng.IntN(2) == 0 {
						r.SetSpanID(s.id)
					}
				}
			}})
		}
	}
	// Error logs of traces that never arrive, and without any trace.
	for i := range traces / 20 {
		tid := traceID()
		at := now.Add(-time.Duration(rng.Int64N(int64(span)))).UnixNano()
		logs = append(logs, randomLog{service: randomServices[i%len(randomServices)], build: func(r plog.LogRecord) {
			r.SetTimestamp(pcommon.Timestamp(at))
			r.SetSeverityNumber(plog.SeverityNumberError)
			r.Body().SetStr(fmt.Sprintf("orphan failure %d", i%3))
			if i%2 == 0 {
				r.SetTraceID(tid)
			}
		}})
	}
	rng.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
	rng.Shuffle(len(logs), func(i, j int) { logs[i], logs[j] = logs[j], logs[i] })
	var out randomTelemetry
	for len(spans) > 0 || len(logs) > 0 {
		if len(logs) > 0 && (len(spans) == 0 || rng.IntN(4) == 0) {
			hi := min(len(logs), 1+rng.IntN(20))
			ld := plog.NewLogs()
			for _, l := range logs[:hi] {
				rl := ld.ResourceLogs().AppendEmpty()
				if l.service != "" {
					rl.Resource().Attributes().PutStr("service.name", l.service)
				}
				l.build(rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
			}
			logs = logs[hi:]
			out.batches = append(out.batches, randomBatch{logs: &ld})
			continue
		}
		hi := min(len(spans), 1+rng.IntN(40))
		td := ptrace.NewTraces()
		for _, p := range spans[:hi] {
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
			sp.SetKind(p.kind)
			sp.SetStartTimestamp(pcommon.Timestamp(p.start))
			sp.SetEndTimestamp(pcommon.Timestamp(p.start + p.dur))
			p.build(sp)
			switch p.fail {
			case 1:
				sp.Status().SetCode(ptrace.StatusCodeError)
				ev := sp.Events().AppendEmpty()
				ev.SetName("exception")
				ev.Attributes().PutStr("exception.type", "Boom")
				ev.Attributes().PutStr("exception.message", fmt.Sprintf("boom %d at 0x%x", p.dur%5, p.start%7))
			case 2:
				sp.Status().SetCode(ptrace.StatusCodeError)
				sp.Status().SetMessage(fmt.Sprintf("status %d", p.dur%3))
				sp.Attributes().PutStr("error.type", "Status")
			case 3:
				sp.Status().SetCode(ptrace.StatusCodeError)
			}
		}
		spans = spans[hi:]
		out.batches = append(out.batches, randomBatch{traces: &td})
	}
	return out
}
