package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/runlens/runlens/internal/telemetry"
)

// The trace-level derived columns are what telemetry.ShapeTrace and telemetry.TraceOccurrences
// answer over every stored span of the trace, kept exact as spans arrive in any order. What
// each write costs is bounded whatever the size of the trace:
//
//   - Entry: whether a span is an entry depends only on the spans carrying its parent's id
//     (ShapeTrace's rule does not depend on the rest of the trace), so a new span reads those
//     (a seek in otel_traces_trace_span) when the batch does not already settle it, and settles
//     the stored spans below it that are still revisable (EntryRevisable, a small partial
//     index): a span that is not an entry stays so while its trace only grows. Per span, a
//     bounded number of seeks.
//   - TraceErrored, RunErrored, TraceFailing change once per trace, when its first error span
//     arrives: a seek in the small index of error spans per trace of a batch.
//   - Occurrences depend on the whole trace (an error span arriving below another moves the
//     origin, a log or an ancestor fills in a message), so a batch touching a failing trace
//     recomputes that trace's occurrences from all its stored spans and error records — at most
//     maxShapedSpans spans and maxShapedLogs records. A failing trace larger than that is
//     deferred (otel_deferred_traces): its origins are cleared and never recomputed at ingest
//     again, and the capabilities compute its occurrences from scans when a window needs them.
//     So a huge trace arriving in many batches costs each batch one lookup in the deferred
//     table, not a reread of the trace: ingest stays linear.

const (
	// maxShapedSpans bounds the spans of a failing trace whose occurrences ingest recomputes.
	maxShapedSpans = 1000
	// maxShapedLogs bounds its error records likewise.
	maxShapedLogs = 1000
)

// traceRowsRead counts the stored spans the trace-level maintenance read, so a test can hold
// ingest to its bound.
var traceRowsRead atomic.Int64

// spanKey identifies the spans carrying one span id in one trace.
type spanKey struct{ trace, span string }

// settleEntries decides the entry flag of the batch's spans whose parent may be stored
// (entry is each span's flag given the batch; it is updated in place), and returns the stored
// revisable spans the batch's spans make non-entries. It only reads.
func settleEntries(ctx context.Context, tx *sql.Tx, st *statements, b *spanBatch, entry []bool) (settled []int64, err error) {
	inBatch := make(map[spanKey][]int, len(b.recs))
	for i := range b.recs {
		k := spanKey{b.recs[i].row.TraceID, b.recs[i].row.SpanID}
		inBatch[k] = append(inBatch[k], i)
	}
	// The stored revisable spans below the batch's spans: first which traces have any (a seek
	// each), then, in those, the ones whose parent id a batch span carries (a seek each).
	var withRevisable []string
	err = inChunks(ctx, b.traces, tx.StmtContext(ctx, st.revisable), tx.StmtContext(ctx, st.revisableFew),
		func(rows *sql.Rows) error {
			var t string
			err := rows.Scan(&t)
			withRevisable = append(withRevisable, t)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("find revisable spans: %w", err)
	}
	var below []spanKey
	for _, t := range withRevisable {
		for _, i := range b.byTrace[t] {
			below = append(below, spanKey{t, b.recs[i].row.SpanID})
		}
	}
	children, err := revisableBelow(ctx, tx, below)
	if err != nil {
		return nil, err
	}
	need := map[spanKey]bool{}
	var pending []int
	for i := range b.recs {
		// A span that is an entry whatever arrives needs no stored parent.
		if r := &b.recs[i]; entry[i] && !entryAlways(r.row) {
			pending = append(pending, i)
			need[spanKey{r.row.TraceID, r.row.ParentSpanID}] = true
		}
	}
	for _, c := range children {
		need[spanKey{c.row.TraceID, c.row.ParentSpanID}] = true
	}
	if len(need) == 0 {
		return nil, nil
	}
	stored, err := spansByID(ctx, tx, need)
	if err != nil {
		return nil, err
	}
	// entryWith is entryGiven over the stored and the batch's spans carrying s's parent id.
	entryWith := func(s telemetry.SpanRow) bool {
		k := spanKey{s.TraceID, s.ParentSpanID}
		if !entryGiven(s, stored[k]) {
			return false
		}
		for _, j := range inBatch[k] {
			if parentOfService(s, &b.recs[j].row) {
				return false
			}
		}
		return true
	}
	for _, i := range pending {
		entry[i] = entryWith(b.recs[i].row)
	}
	for _, c := range children {
		if !entryWith(c.row) {
			settled = append(settled, c.seq)
		}
	}
	return settled, nil
}

// unsettleEntries clears the entry flag of the stored spans seqs (a parent of their own
// service arrived) and moves them out of the entry span rollup.
func unsettleEntries(ctx context.Context, tx *sql.Tx, st *statements, seqs []int64) error {
	const chunk = 500
	for lo := 0; lo < len(seqs); lo += chunk {
		part := seqs[lo:min(lo+chunk, len(seqs))]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = v
		}
		rows, err := tx.QueryContext(ctx, `UPDATE `+TracesTable+` SET IsEntry = 0, EntryRevisable = 0 WHERE IsEntry = 1 AND Seq IN (`+
			placeholders(len(part))+`) RETURNING Timestamp, ServiceName, SpanName, Duration, IsError`, args...)
		if err != nil {
			return fmt.Errorf("settle entry spans: %w", err)
		}
		for rows.Next() {
			var ns, duration, isError int64
			var service, name string
			if err := rows.Scan(&ns, &service, &name, &duration, &isError); err != nil {
				rows.Close()
				return fmt.Errorf("settle entry spans: %w", err)
			}
			st.roll.addEntry(ns, service, name, duration, isError, -1)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("settle entry spans: %w", err)
		}
	}
	return nil
}

// revisableBelow reads the stored revisable spans whose (trace, parent id) is one of keys.
func revisableBelow(ctx context.Context, q queryer, keys []spanKey) ([]storedSpan, error) {
	var out []storedSpan
	const chunk = 200
	for lo := 0; lo < len(keys); lo += chunk {
		part := keys[lo:min(lo+chunk, len(keys))]
		args := make([]any, 0, 2*len(part))
		for _, k := range part {
			args = append(args, k.trace, k.span)
		}
		rows, err := q.QueryContext(ctx, `SELECT Seq, TraceId, SpanId, ParentSpanId, SpanKind, ServiceName, StatusCode FROM `+
			TracesTable+` INDEXED BY otel_traces_revisable WHERE EntryRevisable = 1 AND (TraceId, ParentSpanId) IN (VALUES `+
			pairs(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("find revisable spans: %w", err)
		}
		for rows.Next() {
			var c storedSpan
			if err := rows.Scan(&c.seq, &c.row.TraceID, &c.row.SpanID, &c.row.ParentSpanID, &c.row.Kind, &c.row.Service,
				&c.row.StatusCode); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find revisable spans: %w", err)
			}
			out = append(out, c)
			traceRowsRead.Add(1)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find revisable spans: %w", err)
		}
	}
	return out, nil
}

// revisable reports whether a span whose entry flag is entry may stop being an entry when more
// of its trace arrives: it is one, it has a parent id, and a parent of its own service would
// make it none (a server span, or a self-parented one, stays an entry whatever arrives).
func revisable(s telemetry.SpanRow, entry bool) bool {
	return entry && !entryAlways(s)
}

// entryAlways reports whether s is an entry span whatever else its trace holds: a server or
// consumer span, one without a parent id, or one that names itself as its parent.
func entryAlways(s telemetry.SpanRow) bool {
	return telemetry.IsEntryKind(s.Kind) || s.ParentSpanID == "" || s.ParentSpanID == s.SpanID
}

// entryGiven is ShapeTrace's entry flag of s given the spans carrying its parent's id: an
// entry unless one of them is of its own service. It is called for many spans of every batch,
// so it reads the candidates in place instead of shaping a copy of them.
func entryGiven(s telemetry.SpanRow, parents []telemetry.SpanRow) bool {
	if entryAlways(s) {
		return true
	}
	for i := range parents {
		if parentOfService(s, &parents[i]) {
			return false
		}
	}
	return true
}

// parentOfService reports whether p is a parent of s in s's own service.
func parentOfService(s telemetry.SpanRow, p *telemetry.SpanRow) bool {
	return p.SpanID == s.ParentSpanID && p.Service == s.Service
}

// storedSpan is a stored span as the trace-level code reads it: enough of the row for
// ShapeTrace, and its ingest sequence.
type storedSpan struct {
	seq int64
	row telemetry.SpanRow
}

// spansByID reads the stored spans carrying each (trace, span id) of keys, a seek each.
func spansByID(ctx context.Context, q queryer, keys map[spanKey]bool) (map[spanKey][]telemetry.SpanRow, error) {
	out := make(map[spanKey][]telemetry.SpanRow, len(keys))
	list := make([]spanKey, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	const chunk = 200
	for lo := 0; lo < len(list); lo += chunk {
		part := list[lo:min(lo+chunk, len(list))]
		args := make([]any, 0, 2*len(part))
		for _, k := range part {
			args = append(args, k.trace, k.span)
		}
		rows, err := q.QueryContext(ctx, `SELECT TraceId, SpanId, ParentSpanId, SpanKind, ServiceName, StatusCode FROM `+TracesTable+
			` WHERE (TraceId, SpanId) IN (VALUES `+pairs(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read spans by id: %w", err)
		}
		for rows.Next() {
			var r telemetry.SpanRow
			if err := rows.Scan(&r.TraceID, &r.SpanID, &r.ParentSpanID, &r.Kind, &r.Service, &r.StatusCode); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read spans by id: %w", err)
			}
			k := spanKey{r.TraceID, r.SpanID}
			out[k] = append(out[k], r)
			traceRowsRead.Add(1)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read spans by id: %w", err)
		}
	}
	return out, nil
}

// pairs returns "(?, ?), (?, ?), …" for n pairs.
func pairs(n int) string {
	out := make([]byte, 0, 8*n)
	for i := range n {
		if i > 0 {
			out = append(out, ", "...)
		}
		out = append(out, "(?, ?)"...)
	}
	return string(out)
}

// settleReshapes recomputes the occurrences of every trace the transaction queued, once each,
// skipping deferred traces.
func settleReshapes(ctx context.Context, tx *sql.Tx, st *statements) error {
	if len(st.reshape) == 0 {
		return nil
	}
	traces := make([]string, 0, len(st.reshape))
	for t := range st.reshape {
		traces = append(traces, t)
	}
	slices.Sort(traces)
	deferred, err := deferredAmong(ctx, tx, traces)
	if err != nil {
		return err
	}
	for _, t := range traces {
		if deferred[t] {
			continue
		}
		if err := reshapeTrace(ctx, tx, st, t); err != nil {
			return err
		}
	}
	return nil
}

// deferredAmong returns which of traces are deferred.
func deferredAmong(ctx context.Context, q queryer, traces []string) (map[string]bool, error) {
	out := map[string]bool{}
	const chunk = 500
	for lo := 0; lo < len(traces); lo += chunk {
		part := traces[lo:min(lo+chunk, len(traces))]
		args := make([]any, len(part))
		for i, t := range part {
			args[i] = t
		}
		rows, err := q.QueryContext(ctx, `SELECT TraceId FROM `+DeferredTable+` WHERE TraceId IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read deferred traces: %w", err)
		}
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read deferred traces: %w", err)
			}
			out[t] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read deferred traces: %w", err)
		}
	}
	return out, nil
}

// occurrenceColumns are an origin span's stored occurrence (all empty on other spans).
type occurrenceColumns struct {
	origin                  bool
	msg, typ, fp, run, domn string
}

func columnsOf(o *telemetry.Occurrence) occurrenceColumns {
	if o == nil {
		return occurrenceColumns{}
	}
	return occurrenceColumns{origin: true, msg: o.Message, typ: o.ExceptionType, fp: o.Fingerprint, run: o.RunID, domn: o.Domain}
}

// reshapeTrace recomputes the occurrences of trace t with TraceOccurrences over every stored
// span and error record of it, and updates the origin spans that changed (and the rollup). A
// trace too large to recompute is deferred instead.
func reshapeTrace(ctx context.Context, tx *sql.Tx, st *statements, t string) error {
	spans, seqs, cur, err := loadTrace(ctx, tx.StmtContext(ctx, st.loadTrace), t)
	if err != nil {
		return err
	}
	if len(spans) > maxShapedSpans {
		return deferTrace(ctx, tx, st, t)
	}
	logs, err := traceErrorLogs(ctx, tx.StmtContext(ctx, st.traceErrorLogs), t)
	if err != nil {
		return err
	}
	if len(logs) > maxShapedLogs {
		return deferTrace(ctx, tx, st, t)
	}
	want, ok := originsOf(spans, telemetry.TraceOccurrences(st.dv.conv, spans, logs))
	if !ok {
		// The occurrences do not map onto origin spans one to one: leave the trace to the
		// queries, which compute them with the engine itself.
		return deferTrace(ctx, tx, st, t)
	}
	set := tx.StmtContext(ctx, st.setOccurrence)
	for i := range spans {
		w := columnsOf(want[i])
		if w == cur[i] {
			continue
		}
		if _, err := set.ExecContext(ctx, boolInt(w.origin), nullIfEmpty(w.msg), nullIfEmpty(w.typ), nullIfEmpty(w.fp),
			nullIfEmpty(w.run), nullIfEmpty(w.domn), seqs[i]); err != nil {
			return fmt.Errorf("record occurrence: %w", err)
		}
		if cur[i].origin {
			st.roll.addOccurrence(spans[i].StartNs, spans[i].Service, cur[i].domn, cur[i].fp, -1)
		}
		if w.origin {
			st.roll.addOccurrence(spans[i].StartNs, spans[i].Service, w.domn, w.fp, 1)
		}
		if w.origin != cur[i].origin {
			st.roll.addOrigin(spans[i].StartNs, spans[i].Service, boolInt(w.origin)-boolInt(cur[i].origin))
		}
	}
	return nil
}

// traceErrorLogs reads up to maxShapedLogs+1 error records of trace t, in scan order.
func traceErrorLogs(ctx context.Context, stmt *sql.Stmt, t string) ([]telemetry.LogRow, error) {
	rows, err := stmt.QueryContext(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("read trace records: %w", err)
	}
	defer rows.Close()
	var out []telemetry.LogRow
	for rows.Next() {
		r, _, err := scanLogRow(rows, telemetry.FieldAttributes)
		if err != nil {
			return nil, fmt.Errorf("read trace records: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// originsOf maps the occurrences of a trace onto the spans that carry them (index for index of
// spans): each occurrence sits on its representative origin span, the earliest origin of its cause
// in its run; an origin whose cause another origin of the run already carries holds none. It
// restates docs/semantics.md R7 for the stored origins.
// ok is false when an occurrence names no origin span of the trace.
func originsOf(spans []telemetry.SpanRow, occ []telemetry.Occurrence) ([]*telemetry.Occurrence, bool) {
	type originKey struct {
		span string
		ns   int64
	}
	byOrigin := map[originKey][]int{}
	for k := range occ {
		key := originKey{occ[k].OriginSpanID, occ[k].TimeNs}
		byOrigin[key] = append(byOrigin[key], k)
	}
	out := make([]*telemetry.Occurrence, len(spans))
	n := 0
	for i, sh := range telemetry.ShapeTrace(spans) {
		if !sh.Origin {
			continue
		}
		key := originKey{spans[i].SpanID, spans[i].StartNs}
		q := byOrigin[key]
		if len(q) == 0 {
			continue
		}
		out[i] = &occ[q[0]]
		byOrigin[key] = q[1:]
		n++
	}
	return out, n == len(occ)
}

// loadTrace reads up to maxShapedSpans+1 stored spans of trace t in scan order, with their
// attributes, events, sequence numbers and stored occurrence columns (statement loadTrace).
func loadTrace(ctx context.Context, stmt *sql.Stmt, t string) ([]telemetry.SpanRow, []int64, []occurrenceColumns, error) {
	rows, err := stmt.QueryContext(ctx, t)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read trace: %w", err)
	}
	defer rows.Close()
	var spans []telemetry.SpanRow
	var seqs []int64
	var cur []occurrenceColumns
	for rows.Next() {
		var r telemetry.SpanRow
		var seq int64
		var attrs, events string
		var c occurrenceColumns
		if err := rows.Scan(&seq, &r.TraceID, &r.SpanID, &r.ParentSpanID, &r.Name, &r.Kind, &r.Service, &r.StartNs, &r.DurationNs,
			&r.StatusCode, &r.StatusMessage, &attrs, &events, &c.origin, &c.msg, &c.typ, &c.fp, &c.run, &c.domn); err != nil {
			return nil, nil, nil, fmt.Errorf("read trace: %w", err)
		}
		r.Attributes, r.Events = decodeAttrs(attrs), decodeEvents(events)
		spans = append(spans, r)
		seqs = append(seqs, seq)
		traceRowsRead.Add(1)
		cur = append(cur, c)
	}
	return spans, seqs, cur, rows.Err()
}

// deferTrace records trace t as deferred and clears its occurrence columns (moving the rollup).
func deferTrace(ctx context.Context, tx *sql.Tx, st *statements, t string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+DeferredTable+` (TraceId) VALUES (?) ON CONFLICT DO NOTHING`, t); err != nil {
		return fmt.Errorf("defer trace: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT Timestamp, ServiceName, COALESCE(OccDomain, ''), COALESCE(Fingerprint, '') FROM `+
		TracesTable+` WHERE TraceId = ? AND IsOrigin = 1`, t)
	if err != nil {
		return fmt.Errorf("defer trace: %w", err)
	}
	for rows.Next() {
		var ns int64
		var service, domain, fp string
		if err := rows.Scan(&ns, &service, &domain, &fp); err != nil {
			rows.Close()
			return fmt.Errorf("defer trace: %w", err)
		}
		st.roll.addOrigin(ns, service, -1)
		st.roll.addOccurrence(ns, service, domain, fp, -1)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("defer trace: %w", err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE `+TracesTable+` SET IsOrigin = 0, ErrorMessage = NULL, ExceptionType = NULL,
		Fingerprint = NULL, OccRunId = NULL, OccDomain = NULL WHERE TraceId = ? AND (IsOrigin = 1 OR ErrorMessage IS NOT NULL
		OR ExceptionType IS NOT NULL OR Fingerprint IS NOT NULL OR OccRunId IS NOT NULL OR OccDomain IS NOT NULL)`, t)
	if err != nil {
		return fmt.Errorf("defer trace: %w", err)
	}
	return nil
}

// coalesced lists derived text columns for a SELECT, NULL read as the empty string.
func coalesced(columns ...string) string {
	out := ""
	for i, c := range columns {
		if i > 0 {
			out += ", "
		}
		out += "COALESCE(" + c + ", '')"
	}
	return out
}

// deletedRows are what a prune batch removed, by trace.
type deletedRows struct {
	traces []string
	// ids are the deleted span ids of each trace; errors tells which traces lost an error span,
	// logs which lost a record folded into them.
	ids    map[string][]string
	errors map[string]bool
	logs   map[string]bool
}

func (d *deletedRows) touch(trace string) {
	if d.ids == nil {
		d.ids, d.errors, d.logs = map[string][]string{}, map[string]bool{}, map[string]bool{}
	}
	if _, ok := d.ids[trace]; !ok {
		d.ids[trace] = nil
		d.traces = append(d.traces, trace)
	}
}

func (d *deletedRows) span(trace, span string, isError bool) {
	d.touch(trace)
	d.ids[trace] = append(d.ids[trace], span)
	d.errors[trace] = d.errors[trace] || isError
}

func (d *deletedRows) foldedLog(trace string) {
	d.touch(trace)
	d.logs[trace] = true
}

// settleDeleted keeps the trace-level columns exact after rows were deleted: spans whose
// parent is gone may become entries, a trace whose last error span is gone has no errored run
// and no folded records any more, and the occurrences of every trace that lost a span or a
// folded record are recomputed (a deferred trace that lost its last span is forgotten).
func settleDeleted(ctx context.Context, tx *sql.Tx, st *statements, d *deletedRows) error {
	if len(d.traces) == 0 {
		return nil
	}
	// A prune deletes the oldest rows, so most of the traces it touches go whole: those have
	// no span left whose entry flag or occurrence could change, and cost one seek here
	// instead of three queries each.
	left := map[string]bool{}
	err := inChunks(ctx, d.traces, tx.StmtContext(ctx, st.tracesWithSpans), tx.StmtContext(ctx, st.tracesWithSpansFew),
		func(rows *sql.Rows) error {
			var t string
			err := rows.Scan(&t)
			left[t] = true
			return err
		})
	if err != nil {
		return fmt.Errorf("find the pruned traces' remaining spans: %w", err)
	}
	var lostErrors []string
	for _, t := range d.traces {
		if d.errors[t] {
			lostErrors = append(lostErrors, t)
		}
		if !left[t] {
			continue
		}
		if len(d.ids[t]) > 0 {
			if err := settleOrphans(ctx, tx, st, t, d.ids[t]); err != nil {
				return err
			}
		}
		st.reshape[t] = true
	}
	if len(lostErrors) > 0 {
		still, err := storedErrorTraces(ctx, tx, st, lostErrors)
		if err != nil {
			return err
		}
		for _, t := range lostErrors {
			if !still[t] {
				if err := unmarkFailing(ctx, tx, st, t); err != nil {
					return err
				}
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+DeferredTable+` WHERE TraceId IN (`+placeholders(len(d.traces))+`)
		AND NOT EXISTS (SELECT 1 FROM `+TracesTable+` t WHERE t.TraceId = `+DeferredTable+`.TraceId)`, anys(d.traces)...); err != nil {
		return fmt.Errorf("forget deferred traces: %w", err)
	}
	return nil
}

// settleOrphans re-decides the entry flag of the remaining spans of trace t whose parent id is
// among the deleted ids and that are not entries: without that parent they may be.
func settleOrphans(ctx context.Context, tx *sql.Tx, st *statements, t string, deleted []string) error {
	var below []storedSpan
	const chunk = 400
	for lo := 0; lo < len(deleted); lo += chunk {
		part := deleted[lo:min(lo+chunk, len(deleted))]
		rows, err := tx.QueryContext(ctx, `SELECT Seq, TraceId, SpanId, ParentSpanId, SpanKind, ServiceName, StatusCode, Timestamp,
			SpanName, Duration FROM `+TracesTable+` WHERE TraceId = ? AND IsEntry = 0 AND ParentSpanId IN (`+placeholders(len(part))+`)`,
			append([]any{t}, anys(part)...)...)
		if err != nil {
			return fmt.Errorf("find orphaned spans: %w", err)
		}
		for rows.Next() {
			var c storedSpan
			if err := rows.Scan(&c.seq, &c.row.TraceID, &c.row.SpanID, &c.row.ParentSpanID, &c.row.Kind, &c.row.Service,
				&c.row.StatusCode, &c.row.StartNs, &c.row.Name, &c.row.DurationNs); err != nil {
				rows.Close()
				return fmt.Errorf("find orphaned spans: %w", err)
			}
			below = append(below, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("find orphaned spans: %w", err)
		}
	}
	if len(below) == 0 {
		return nil
	}
	need := map[spanKey]bool{}
	for _, c := range below {
		need[spanKey{t, c.row.ParentSpanID}] = true
	}
	stored, err := spansByID(ctx, tx, need)
	if err != nil {
		return err
	}
	for _, c := range below {
		if !entryGiven(c.row, stored[spanKey{t, c.row.ParentSpanID}]) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+TracesTable+` SET IsEntry = 1, EntryRevisable = ? WHERE Seq = ?`,
			boolInt(revisable(c.row, true)), c.seq); err != nil {
			return fmt.Errorf("settle orphaned span: %w", err)
		}
		st.roll.addEntry(c.row.StartNs, c.row.Service, c.row.Name, c.row.DurationNs, boolInt(c.row.IsError()), 1)
	}
	return nil
}

// unmarkFailing records that trace t has no stored error span any more: its roots are not
// errored and its error records are occurrences of their own again.
func unmarkFailing(ctx context.Context, tx *sql.Tx, st *statements, t string) error {
	rows, err := tx.QueryContext(ctx, `UPDATE `+TracesTable+` SET TraceErrored = 0, RunErrored = COALESCE(RunVerdict, 0) & 1
		WHERE TraceId = ? AND IsRoot = 1 AND TraceErrored = 1 RETURNING Timestamp, ServiceName, COALESCE(Domain, ''), COALESCE(RunVerdict, 0)`, t)
	if err != nil {
		return fmt.Errorf("unmark errored runs: %w", err)
	}
	for rows.Next() {
		var ns, verdict int64
		var service, domain string
		if err := rows.Scan(&ns, &service, &domain, &verdict); err != nil {
			rows.Close()
			return fmt.Errorf("unmark errored runs: %w", err)
		}
		st.roll.addRun(ns, service, domain, 0, runErrored(verdict, false)-runErrored(verdict, true))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("unmark errored runs: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `UPDATE `+LogsTable+` SET TraceFailing = 0 WHERE TraceId = ? AND IsError = 1 AND TraceFailing = 1
		RETURNING Timestamp, ServiceName`, t)
	if err != nil {
		return fmt.Errorf("unfold error records: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ns int64
		var service string
		if err := rows.Scan(&ns, &service); err != nil {
			return fmt.Errorf("unfold error records: %w", err)
		}
		st.roll.addLoneLog(ns, service, 1)
	}
	return rows.Err()
}

// anys converts strings to query arguments.
func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
