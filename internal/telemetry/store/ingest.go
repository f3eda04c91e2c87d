package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// ErrReadOnly is returned by writes on a store opened with Options.ReadOnly.
var ErrReadOnly = errors.New("telemetry store opened read-only")

// serviceNameKey is the resource attribute that names a service (OpenTelemetry semantic
// conventions).
const serviceNameKey = "service.name"

// IngestTraces stores every span of td with valid trace and span ids in one transaction and
// returns only after it committed, so an acknowledgement sent after a nil error survives a
// crash. Spans with an empty (all-zero) trace or span id are rejected and counted; they do not
// fail the batch. On error nothing of td was written; ErrBusy means the writer is too far
// behind (Options.MaxPendingBytes) and the batch should be sent again later.
func (s *Store) IngestTraces(ctx context.Context, td ptrace.Traces) (accepted, rejected int, err error) {
	if s.writer == nil {
		return 0, 0, ErrReadOnly
	}
	b := spanArgs(td, s.derive)
	if b.rows == 0 {
		return 0, b.rejected, nil
	}
	err = s.submitAdmitted(ctx, spanBatchBytes(&b), b.rows, func(ctx context.Context, tx *sql.Tx, st *statements, next *int64) error {
		return writeSpans(ctx, tx, st, b, next)
	})
	if err != nil {
		return 0, b.rejected, fmt.Errorf("ingest traces: %w", err)
	}
	return b.rows, b.rejected, nil
}

// IngestLogs stores every log record of ld in one transaction and returns only after it
// committed, or fails with ErrBusy as IngestTraces does. No log record is rejected: trace
// correlation is optional for logs.
func (s *Store) IngestLogs(ctx context.Context, ld plog.Logs) (accepted, rejected int, err error) {
	if s.writer == nil {
		return 0, 0, ErrReadOnly
	}
	args, accepted := logArgs(ld, time.Now())
	if accepted == 0 {
		return 0, 0, nil
	}
	err = s.submitAdmitted(ctx, argBytes(args), accepted, func(ctx context.Context, tx *sql.Tx, st *statements, next *int64) error {
		return writeLogs(ctx, tx, st, args, next)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("ingest logs: %w", err)
	}
	return accepted, 0, nil
}

// assignSeq numbers the rows of args (Seq is each row's first column) from *next on. A
// retried transaction calls it again and simply renumbers.
func assignSeq(args []any, ncols int, next *int64) {
	for i := 0; i < len(args); i += ncols {
		args[i] = *next
		*next++
	}
}

// spanBatch is a batch of spans flattened into insert arguments, one slice per insert shape,
// with what the writer needs to finish their TraceErrored flags and the rollups inside its
// transaction.
type spanBatch struct {
	args     [spanShapes][]any
	rows     int
	rejected int
	meta     []spanMeta
	// roots index meta: the root spans.
	roots []int
	// errorTraces are the distinct traces with an error span in the batch.
	errorTraces []string
}

// spanMeta is what the writer reads of one span of a batch.
type spanMeta struct {
	ns, duration                          int64
	trace, service, domain, label, system string
	isRoot, isError, traceErrored         bool
	shape                                 spanShape
	at                                    int // offset of the row in args[shape]
}

// spanArgs flattens td into insert arguments in spanColumnNames order, each row cut to its
// shape (Seq is left for the writer), computing the derived columns with dv. A root's
// TraceErrored covers the error spans of its own batch; the writer adds those stored before.
func spanArgs(td ptrace.Traces, dv *deriver) spanBatch {
	n := td.SpanCount()
	b := spanBatch{meta: make([]spanMeta, 0, n)}
	// Size each shape's arguments exactly before filling them: growing them row by row cost
	// more than the conventions themselves.
	shapes := spanShapesOf(td, dv.conv)
	var count [spanShapes]int
	for _, sh := range shapes {
		count[sh]++
	}
	for sh := range b.args {
		if count[sh] > 0 {
			b.args[sh] = make([]any, 0, count[sh]*len(spanShapeColumns[sh]))
		}
	}
	var buf []byte
	attrs := conventions.Attributes{}
	erroredTraces := map[string]bool{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		service := serviceName(res)
		buf = appendAttrs(buf[:0], res, nil)
		resJSON := string(buf)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			scopeName, scopeVersion := ss.Scope().Name(), ss.Scope().Version()
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					b.rejected++
					continue
				}
				start, end := nanos(sp.StartTimestamp()), nanos(sp.EndTimestamp())
				duration := max(end-start, 0)
				parent := ""
				if !sp.ParentSpanID().IsEmpty() {
					parent = hexID(sp.ParentSpanID())
				}
				clear(attrs)
				buf = appendAttrs(buf[:0], sp.Attributes(), attrs)
				spanAttrs := string(buf)
				buf = appendEvents(buf[:0], sp.Events())
				events := string(buf)
				buf = appendLinks(buf[:0], sp.Links())
				links := string(buf)
				facts := spanFacts{name: sp.Name(), isRoot: parent == "", isError: sp.Status().Code() == ptrace.StatusCodeError, statusMessage: sp.Status().Message()}
				if facts.isError {
					facts.exceptionMessage, facts.exceptionType = exceptionEvent(sp.Events())
				}
				d := dv.deriveSpan(facts, attrs)
				m := spanMeta{
					ns: start, duration: duration, trace: hexID(sp.TraceID()), service: service, domain: d.Domain,
					label: d.DBLabel, system: d.DBSystem, isRoot: facts.isRoot, isError: facts.isError,
					traceErrored: facts.isError,
				}
				if facts.isRoot {
					b.roots = append(b.roots, len(b.meta))
				}
				if facts.isError && !erroredTraces[m.trace] {
					erroredTraces[m.trace] = true
					b.errorTraces = append(b.errorTraces, m.trace)
				}
				m.shape = shapes[len(b.meta)]
				if (d.DBLabel != "" || d.DBSystem != "") && m.shape == shapePlain {
					m.shape = shapeDB // never with conventions as documented; kept exact anyway
				}
				if d.RunID != "" || d.Domain != "" || d.JobID != "" || d.ErrorMessage != "" || d.ExceptionType != "" {
					m.shape = shapeFull
				}
				row := b.args[m.shape]
				m.at = len(row)
				row = append(row,
					int64(0), // Seq
					start,
					start+duration,
					m.trace,
					hexID(sp.SpanID()),
					parent,
					sp.TraceState().AsRaw(),
					facts.name,
					kindCode(sp.Kind()),
					service,
					resJSON,
					scopeName,
					scopeVersion,
					spanAttrs,
					duration,
					statusCode(sp.Status().Code()),
					facts.statusMessage,
					events,
					links,
					boolInt(facts.isRoot),
					boolInt(facts.isError),
				)
				switch m.shape {
				case shapeFull:
					row = append(row,
						nullIfEmpty(d.RunID),
						nullIfEmpty(d.Domain),
						boolInt(facts.isError), // TraceErrored, completed below and by the writer
						nullIfEmpty(d.JobID),
						nullIfEmpty(d.JobName),
						nullIfEmpty(d.JobStatus),
						nullIfEmpty(d.DBLabel),
						nullIfEmpty(d.DBSystem),
						nullIfEmpty(d.ErrorMessage),
						nullIfEmpty(d.ExceptionType),
						nullIfEmpty(d.Fingerprint),
					)
				case shapeDB:
					row = append(row, nullIfEmpty(d.DBLabel), nullIfEmpty(d.DBSystem))
				}
				b.args[m.shape] = row
				b.meta = append(b.meta, m)
				b.rows++
			}
		}
	}
	for _, r := range b.roots {
		if m := &b.meta[r]; erroredTraces[m.trace] {
			b.markErrored(r)
		}
	}
	return b
}

// spanShapesOf classifies the accepted spans of td, in order, by the insert shape their derived
// columns need: full for roots, errors and job spans, db for database spans, else plain. It
// reads the attributes the way the conventions do (a job id is the first non-empty id key, a
// database span has a key under a database prefix) without building them.
func spanShapesOf(td ptrace.Traces, conv *conventions.Conventions) []spanShape {
	out := make([]spanShape, 0, td.SpanCount())
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					continue
				}
				out = append(out, spanShapeOf(sp, conv))
			}
		}
	}
	return out
}

func spanShapeOf(sp ptrace.Span, conv *conventions.Conventions) spanShape {
	if sp.ParentSpanID().IsEmpty() || sp.Status().Code() == ptrace.StatusCodeError {
		return shapeFull
	}
	attrs := sp.Attributes()
	for _, k := range conv.JobKeys.IDKeys {
		if v, ok := attrs.Get(k); ok && validUTF8(v.AsString()) != "" {
			return shapeFull
		}
	}
	for k := range attrs.All() {
		for _, p := range conv.DBKeys.KeyPrefixes {
			if strings.HasPrefix(validUTF8(k), p) {
				return shapeDB
			}
		}
	}
	return shapePlain
}

// markErrored records that root r's trace has an error span.
func (b *spanBatch) markErrored(r int) {
	m := &b.meta[r]
	m.traceErrored = true
	b.args[shapeFull][m.at+colTraceErrored] = int64(1)
}

// exceptionEvent is the first non-empty exception.message and exception.type among a span's
// "exception" events (the OpenTelemetry way of recording an exception).
func exceptionEvent(events ptrace.SpanEventSlice) (msg, typ string) {
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if e.Name() != "exception" {
			continue
		}
		if v, ok := e.Attributes().Get("exception.message"); ok && msg == "" {
			msg = v.AsString()
		}
		if v, ok := e.Attributes().Get("exception.type"); ok && typ == "" {
			typ = v.AsString()
		}
	}
	return msg, typ
}

// logArgs flattens ld into insert arguments in logColumns order (Seq left for assignSeq).
// A record with neither timestamp gets the receive time, so it still falls in a window.
func logArgs(ld plog.Logs, received time.Time) (args []any, n int) {
	args = make([]any, 0, ld.LogRecordCount()*logColumnCount)
	var buf []byte
	attrs := conventions.Attributes{}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		service := serviceName(res)
		buf = appendAttrs(buf[:0], res, nil)
		resJSON := string(buf)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			scopeName, scopeVersion := sl.Scope().Name(), sl.Scope().Version()
			records := sl.LogRecords()
			for k := 0; k < records.Len(); k++ {
				r := records.At(k)
				n++
				observed := nanos(r.ObservedTimestamp())
				ts := nanos(r.Timestamp())
				if ts == 0 {
					ts = observed
				}
				if ts == 0 {
					ts = received.UnixNano()
				}
				traceID, spanID := "", ""
				if !r.TraceID().IsEmpty() {
					traceID = hexID(r.TraceID())
				}
				if !r.SpanID().IsEmpty() {
					spanID = hexID(r.SpanID())
				}
				clear(attrs)
				buf = appendAttrs(buf[:0], r.Attributes(), attrs)
				logAttrs := string(buf)
				sevNum := int64(r.SeverityNumber())
				sevText := r.SeverityText()
				body := r.Body().AsString()
				isError := isErrorSeverity(sevNum, sevText)
				var d logDerived
				if isError {
					d = deriveLog(body, attrs)
				}
				args = append(args,
					int64(0), // Seq
					ts,
					observed,
					traceID,
					spanID,
					int64(r.Flags()),
					sevText,
					sevNum,
					service,
					body,
					resJSON,
					scopeName,
					scopeVersion,
					logAttrs,
					boolInt(isError),
					nullIfEmpty(d.ErrorMessage),
					nullIfEmpty(d.ExceptionType),
					nullIfEmpty(d.Fingerprint),
				)
			}
		}
	}
	return args, n
}

// isErrorSeverity is TELEMETRY.md's error event for logs: severity number ERROR (17) or
// above, or a severity text of error or fatal in any case.
func isErrorSeverity(number int64, text string) bool {
	return number >= int64(plog.SeverityNumberError) || strings.EqualFold(text, "error") || strings.EqualFold(text, "fatal")
}

func serviceName(res pcommon.Map) string {
	if v, ok := res.Get(serviceNameKey); ok {
		return v.AsString()
	}
	return ""
}

// appendEvents renders span events as [{"Timestamp":ns,"Name":…,"Attributes":{…}}].
func appendEvents(dst []byte, events ptrace.SpanEventSlice) []byte {
	dst = append(dst, '[')
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"Timestamp":`...)
		dst = appendInt(dst, nanos(e.Timestamp()))
		dst = append(dst, `,"Name":`...)
		dst = appendJSONString(dst, e.Name())
		dst = append(dst, `,"Attributes":`...)
		dst = appendAttrs(dst, e.Attributes(), nil)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendLinks renders span links as [{"TraceId":…,"SpanId":…,"TraceState":…,"Attributes":{…}}].
func appendLinks(dst []byte, links ptrace.SpanLinkSlice) []byte {
	dst = append(dst, '[')
	for i := 0; i < links.Len(); i++ {
		l := links.At(i)
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"TraceId":"`...)
		dst = hex.AppendEncode(dst, idBytes(l.TraceID()))
		dst = append(dst, `","SpanId":"`...)
		dst = hex.AppendEncode(dst, idBytes(l.SpanID()))
		dst = append(dst, `","TraceState":`...)
		dst = appendJSONString(dst, l.TraceState().AsRaw())
		dst = append(dst, `,"Attributes":`...)
		dst = appendAttrs(dst, l.Attributes(), nil)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// hexID renders a trace or span id as lowercase hex, the form OTLP/JSON and the exporter use.
func hexID[T pcommon.TraceID | pcommon.SpanID](id T) string {
	return hex.EncodeToString(idBytes(id))
}

func idBytes[T pcommon.TraceID | pcommon.SpanID](id T) []byte {
	switch v := any(id).(type) {
	case pcommon.TraceID:
		return v[:]
	case pcommon.SpanID:
		return v[:]
	}
	return nil
}

// nanos converts an OTLP timestamp to int64 nanoseconds, clamping the far future (past 2262)
// instead of wrapping negative.
func nanos(t pcommon.Timestamp) int64 {
	if uint64(t) > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(t)
}

// kindCode is the index in kindCodes of the exporter's SpanKind word.
func kindCode(k ptrace.SpanKind) int64 {
	switch k {
	case ptrace.SpanKindInternal:
		return 1
	case ptrace.SpanKindServer:
		return 2
	case ptrace.SpanKindClient:
		return 3
	case ptrace.SpanKindProducer:
		return 4
	case ptrace.SpanKindConsumer:
		return 5
	default:
		return 0 // Unspecified
	}
}

// statusCode is the index in statusCodes of the exporter's StatusCode word.
func statusCode(c ptrace.StatusCode) int64 {
	switch c {
	case ptrace.StatusCodeOk:
		return 1
	case ptrace.StatusCodeError:
		return 2
	default:
		return 0 // Unset
	}
}

// nullIfEmpty is how a derived text column stores s (schema.go): NULL for "".
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
