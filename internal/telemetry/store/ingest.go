package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/flatten"
)

// ErrReadOnly is returned by writes on a store opened with Options.ReadOnly.
var ErrReadOnly = errors.New("telemetry store opened read-only")

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
	if len(b.recs) == 0 {
		return 0, b.rejected, nil
	}
	err = s.submitAdmitted(ctx, spanBatchBytes(&b), len(b.recs), b.inserts(), func(ctx context.Context, tx *sql.Tx, st *statements, next *int64) error {
		return writeSpans(ctx, tx, st, b, next)
	})
	if err != nil {
		return 0, b.rejected, fmt.Errorf("ingest traces: %w", err)
	}
	return b.accepted, b.rejected, nil
}

// IngestLogs stores every log record of ld in one transaction and returns only after it
// committed, or fails with ErrBusy as IngestTraces does. No log record is rejected: trace
// correlation is optional for logs.
func (s *Store) IngestLogs(ctx context.Context, ld plog.Logs) (accepted, rejected int, err error) {
	if s.writer == nil {
		return 0, 0, ErrReadOnly
	}
	b := logArgs(ld, time.Now(), s.derive)
	if len(b.recs) == 0 {
		return 0, 0, nil
	}
	err = s.submitAdmitted(ctx, argBytes(b.args), len(b.recs), keysOf(logTable, b.plans, nil), func(ctx context.Context, tx *sql.Tx, st *statements, next *int64) error {
		return writeLogs(ctx, tx, st, b, next)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("ingest logs: %w", err)
	}
	return len(b.recs), 0, nil
}

// spanRec is one accepted span of a batch: the engine's row (its attributes dropped once
// derived) and what the insert needs besides.
type spanRec struct {
	row                         telemetry.SpanRow
	traceState, attrs, evs, lks string
	// res is the index of the span's resource and scope in the batch's resources.
	res int
	d   spanDerived
	// entry is the span's entry flag given the batch's spans of its trace; a span with a parent
	// id that is an entry here may still have a stored parent (settled by the writer).
	entry bool
	shape spanShape
	at    int // offset of the row in args[shape]
}

// spanBatch is a batch of spans flattened into insert arguments, one slice per insert shape,
// with what the writer needs to settle the trace-level columns inside its transaction. The
// writer may run a batch twice (a group that failed is retried job by job): it overwrites the
// columns it sets and never changes the rest.
type spanBatch struct {
	recs []spanRec
	// accepted counts the spans with valid ids, copies of a span included: a copy of a span
	// the batch or the store holds already is acknowledged and not stored again.
	accepted, rejected int
	args               [spanShapes][]any
	// plans are the INSERT chunks of each shape's args (insertplan.go).
	plans [spanShapes][]chunkPlan
	// traces lists the batch's traces in first-seen order; byTrace their spans.
	traces  []string
	byTrace map[string][]int
	// failing are the traces with an error span in the batch.
	failing map[string]bool
	// resources are the batch's distinct resources and scopes (resources.go).
	resources resourceIndex
}

// spanArgs flattens td into insert arguments in spanColumnNames order, each row cut to its
// shape (Seq and the trace-level columns are left for the writer), computing the span's own
// derived columns with dv and its entry flag within the batch. A span whose trace and span id
// an earlier span of the batch carries is a copy and is left out.
func spanArgs(td ptrace.Traces, dv *deriver) spanBatch {
	b := spanBatch{recs: make([]spanRec, 0, td.SpanCount())}
	var buf []byte
	attrs := conventions.Attributes{}
	seen := make(map[spanKey]bool, td.SpanCount())
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		service := flatten.ServiceName(res)
		buf = appendAttrs(buf[:0], res, nil)
		resJSON := string(buf)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			res := b.resources.add(resJSON, ss.Scope().Name(), ss.Scope().Version())
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					b.rejected++
					continue
				}
				b.accepted++
				key := spanKey{hexID(sp.TraceID()), hexID(sp.SpanID())}
				if seen[key] {
					continue
				}
				seen[key] = true
				start, end := nanos(sp.StartTimestamp()), nanos(sp.EndTimestamp())
				r := spanRec{
					row: telemetry.SpanRow{
						TraceID: key.trace, SpanID: key.span, Name: sp.Name(), Kind: flatten.Kind(sp.Kind()),
						Service: service, StartNs: start, DurationNs: max(end-start, 0),
						StatusCode: flatten.StatusCode(sp.Status().Code()), StatusMessage: sp.Status().Message(),
					},
					traceState: sp.TraceState().AsRaw(), res: res,
				}
				b.resources.seen(res, start)
				if !sp.ParentSpanID().IsEmpty() {
					r.row.ParentSpanID = hexID(sp.ParentSpanID())
				}
				clear(attrs)
				buf = appendAttrs(buf[:0], sp.Attributes(), attrs)
				r.attrs = string(buf)
				buf = appendEvents(buf[:0], sp.Events())
				r.evs = string(buf)
				buf = appendLinks(buf[:0], sp.Links())
				r.lks = string(buf)
				r.row.Attributes = attrs
				r.d = dv.deriveSpan(&r.row)
				r.row.Attributes = nil
				b.recs = append(b.recs, r)
			}
		}
	}
	b.build()
	return b
}

// without returns the batch less the spans at the given indexes of recs (copies of stored
// spans), its arguments rebuilt.
func (b spanBatch) without(drop map[int]bool) spanBatch {
	out := spanBatch{accepted: b.accepted, rejected: b.rejected, recs: make([]spanRec, 0, len(b.recs)-len(drop)),
		resources: b.resources}
	for i, r := range b.recs {
		if !drop[i] {
			out.recs = append(out.recs, r)
		}
	}
	out.build()
	return out
}

// build groups the batch's spans by trace, computes their entry flags within the batch and
// fills the insert arguments.
func (b *spanBatch) build() {
	b.traces, b.byTrace, b.failing = nil, map[string][]int{}, map[string]bool{}
	for i := range b.recs {
		t := b.recs[i].row.TraceID
		if _, seen := b.byTrace[t]; !seen {
			b.traces = append(b.traces, t)
		}
		b.byTrace[t] = append(b.byTrace[t], i)
		if b.recs[i].row.IsError() {
			b.failing[t] = true
		}
	}
	// Entry flags within the batch, a trace at a time.
	var rows []telemetry.SpanRow
	for _, t := range b.traces {
		idx := b.byTrace[t]
		rows = rows[:0]
		for _, i := range idx {
			rows = append(rows, b.recs[i].row)
		}
		for n, sh := range telemetry.ShapeTrace(rows) {
			b.recs[idx[n]].entry = sh.Entry
		}
	}
	// Size each shape's arguments exactly before filling them: growing them row by row cost
	// more than the conventions themselves.
	var count [spanShapes]int
	for i := range b.recs {
		r := &b.recs[i]
		switch {
		case r.row.IsRoot() || r.d.JobID != "":
			r.shape = shapeFull
		case r.entry:
			r.shape = shapeEntry
		case r.d.DBKey != "" || r.d.DBSystem != "":
			r.shape = shapeDB
		default:
			r.shape = shapePlain
		}
		count[r.shape]++
	}
	for sh := range b.args {
		b.args[sh] = nil
		if count[sh] > 0 {
			b.args[sh] = make([]any, 0, count[sh]*len(spanShapeColumns[sh]))
		}
	}
	for i := range b.recs {
		r := &b.recs[i]
		row := b.args[r.shape]
		r.at = len(row)
		row = append(row,
			int64(0), // Seq, set by the writer
			r.row.StartNs,
			r.row.StartNs+r.row.DurationNs,
			r.row.TraceID,
			r.row.SpanID,
			r.row.ParentSpanID,
			r.traceState,
			r.row.Name,
			kindCode(r.row.Kind),
			r.row.Service,
			int64(r.res), // ResourceScopeId, resolved by the writer
			"",           // ScopeName and ScopeVersion: in the resource's row
			"",
			r.attrs,
			r.row.DurationNs,
			statusCode(r.row.StatusCode),
			r.row.StatusMessage,
			r.evs,
			r.lks,
			boolInt(r.row.IsRoot()),
			boolInt(r.row.IsError()),
		)
		if r.shape != shapePlain {
			row = append(row, nullIfEmpty(r.d.DBKey), nullIfEmpty(r.d.DBSystem))
		}
		if r.shape == shapeEntry || r.shape == shapeFull {
			row = append(row,
				boolInt(r.entry), // IsEntry, settled by the writer
				int64(0),         // EntryRevisable, set by the writer
			)
		}
		if r.shape == shapeFull {
			row = append(row,
				nullIfEmpty(r.d.RunID),
				nullIfEmpty(r.d.Domain),
				rootVerdict(r),
				int64(0), // TraceErrored, set by the writer
				int64(0), // RunErrored, set by the writer
				nullIfEmpty(r.d.JobID),
				nullIfEmpty(r.d.JobName),
			)
		}
		b.args[r.shape] = row
	}
	for sh := range b.args {
		b.plans[sh] = planChunks(b.args[sh], len(spanShapeColumns[sh]), spanRowsPerInsert[sh], spanSharable)
	}
}

// inserts lists the statements the batch's chunks need.
func (b *spanBatch) inserts() []insertKey {
	var keys []insertKey
	for sh := range b.plans {
		keys = keysOf(insertTable(sh), b.plans[sh], keys)
	}
	return keys
}

// rootVerdict is the RunVerdict column of a span: its verdict on roots, NULL elsewhere.
func rootVerdict(r *spanRec) any {
	if r.row.IsRoot() {
		return r.d.Verdict
	}
	return nil
}

// logRec is one log record of a batch: the engine's row, and its occurrence fields when it is
// an error.
type logRec struct {
	row     telemetry.LogRow
	isError bool
	res     int // index of the record's resource and scope in the batch's resources
	at      int // offset of the row in args
}

// logBatch is a batch of log records flattened into insert arguments.
type logBatch struct {
	recs      []logRec
	args      []any
	plans     []chunkPlan
	resources resourceIndex
}

// logArgs flattens ld into insert arguments in logColumnNames order (Seq and TraceFailing left
// for the writer). A record with neither timestamp gets the receive time, so it still falls in
// a window.
func logArgs(ld plog.Logs, received time.Time, dv *deriver) logBatch {
	b := logBatch{recs: make([]logRec, 0, ld.LogRecordCount()), args: make([]any, 0, ld.LogRecordCount()*logColumnCount)}
	var buf []byte
	attrs := conventions.Attributes{}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		service := flatten.ServiceName(res)
		buf = appendAttrs(buf[:0], res, nil)
		resJSON := string(buf)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			res := b.resources.add(resJSON, sl.Scope().Name(), sl.Scope().Version())
			records := sl.LogRecords()
			for k := 0; k < records.Len(); k++ {
				r := records.At(k)
				observed := nanos(r.ObservedTimestamp())
				ts := nanos(r.Timestamp())
				if ts == 0 {
					ts = observed
				}
				if ts == 0 {
					ts = received.UnixNano()
				}
				rec := logRec{row: telemetry.LogRow{
					TimeNs: ts, Service: service, SeverityNumber: int32(r.SeverityNumber()), SeverityText: r.SeverityText(),
					Body: r.Body().AsString(),
				}}
				if !r.TraceID().IsEmpty() {
					rec.row.TraceID = hexID(r.TraceID())
				}
				if !r.SpanID().IsEmpty() {
					rec.row.SpanID = hexID(r.SpanID())
				}
				clear(attrs)
				buf = appendAttrs(buf[:0], r.Attributes(), attrs)
				logAttrs := string(buf)
				rec.isError = rec.row.IsError()
				var d logDerived
				if rec.isError {
					rec.row.Attributes = attrs
					d = dv.deriveLog(&rec.row)
					rec.row.Attributes = nil
				}
				rec.res = res
				b.resources.seen(res, ts)
				rec.at = len(b.args)
				b.args = append(b.args,
					int64(0), // Seq
					ts,
					observed,
					rec.row.TraceID,
					rec.row.SpanID,
					int64(r.Flags()),
					rec.row.SeverityText,
					int64(rec.row.SeverityNumber),
					service,
					rec.row.Body,
					int64(rec.res), // ResourceScopeId, resolved by the writer
					"",             // ScopeName and ScopeVersion: in the resource's row
					"",
					logAttrs,
					boolInt(rec.isError),
					nullIfEmpty(d.ErrorMessage),
					nullIfEmpty(d.ExceptionType),
					nullIfEmpty(d.Fingerprint),
					int64(0), // TraceFailing, set by the writer
				)
				b.recs = append(b.recs, rec)
			}
		}
	}
	b.plans = planChunks(b.args, logColumnCount, rowsPerInsert, logSharable)
	return b
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

// kindCode is the index in kindCodes of a span kind word.
func kindCode(k string) int64 {
	if i := slices.Index(kindCodes, k); i > 0 {
		return int64(i)
	}
	return 0 // Unspecified
}

// statusCode is the index in statusCodes of a status code word.
func statusCode(c string) int64 {
	if i := slices.Index(statusCodes, c); i > 0 {
		return int64(i)
	}
	return 0 // Unset
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
