package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// The capabilities answer the engine's questions from the derived columns, their indexes and
// the rollups, computing with the engine's exported functions (DurationsOf,
// IndexOccurrences, SortRuns' order, JobFactsOf, DBOperationsOf, RunFromRoot, JobFromSpan,
// TraceOccurrences) what SQL does not. Each must answer exactly what the engine computes from
// the store's scans; they differ only where the engine's scans would hit its row limit: a
// capability reads the whole window and says Scan.Limited false. A capability declines
// (handled false) when the derived columns were computed with other conventions than the
// engine's, or while a recomputation is pending, and the engine scans instead.
var (
	_ telemetry.ActivityCounter   = (*Backend)(nil)
	_ telemetry.RunLister         = (*Backend)(nil)
	_ telemetry.OccurrenceIndexer = (*Backend)(nil)
	_ telemetry.JobIndexer        = (*Backend)(nil)
	_ telemetry.DurationIndexer   = (*Backend)(nil)
	_ telemetry.DBIndexer         = (*Backend)(nil)
	_ telemetry.RunResolver       = (*Backend)(nil)
)

// Bounds of the capabilities.
const (
	// maxDirtyRows bounds the rows committed after a query's snapshot that a pinned query
	// (AsOf) sets aside; past it the capability declines.
	maxDirtyRows = 20_000
	// maxSeekServices bounds the services whose spans are read one index seek each; past it
	// the time index is read instead.
	maxSeekServices = 1000
)

// fingerprint is conventionsFingerprint of conv, remembered per document.
func (b *Backend) fingerprint(conv *conventions.Conventions) string {
	if fp, ok := b.fps.Load(conv); ok {
		return fp.(string)
	}
	fp := conventionsFingerprint(conv)
	b.fps.Store(conv, fp)
	return fp
}

// snapshot runs fn on one read transaction, so every query of an answer sees the same data,
// when the derived columns were computed with conv; handled is false otherwise.
func (b *Backend) snapshot(ctx context.Context, conv *conventions.Conventions, fn func(tx *sql.Tx) error) (handled bool, err error) {
	tx, err := b.s.readers.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return false, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	v, ok, err := metaValue(ctx, tx, metaDerivedConventions)
	if err != nil {
		return false, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	if !ok || v != b.fingerprint(conv) {
		return false, nil
	}
	if err := fn(tx); err != nil {
		if errors.Is(err, errDecline) {
			return false, nil
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return false, err
		}
		return false, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	return true, nil
}

// errDecline makes a capability decline from inside its snapshot.
var errDecline = errors.New("capability declines")

// dirty is what a query pinned to a snapshot (AsOf) must set aside: the traces with spans or
// error records committed after it, whose derived columns already count those rows.
type dirty struct {
	asOf   int64
	traces map[string]bool
}

// has reports whether trace t is dirty.
func (d dirty) has(t string) bool { return d.traces[t] }

// list returns the dirty traces.
func (d dirty) list() []string { return telemetry.Keys(d.traces) }

// dirtyTraces reads the traces touched after asOf (none when asOf is 0 or current); it
// declines past maxDirtyRows such rows.
func dirtyTraces(ctx context.Context, q queryer, asOf int64) (dirty, error) {
	d := dirty{asOf: asOf, traces: map[string]bool{}}
	if asOf <= 0 {
		return d, nil
	}
	hwText, _, err := metaValue(ctx, q, metaHighWater)
	if err != nil {
		return d, err
	}
	if hw, _ := strconv.ParseInt(hwText, 10, 64); hw <= asOf {
		return d, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT TraceId FROM (SELECT TraceId FROM `+TracesTable+` WHERE Seq > ?
		UNION ALL SELECT TraceId FROM `+LogsTable+` WHERE Seq > ? AND IsError = 1 AND TraceId != '') LIMIT ?`,
		asOf, asOf, maxDirtyRows+1)
	if err != nil {
		return d, fmt.Errorf("read rows after the snapshot: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return d, err
		}
		if n++; n > maxDirtyRows {
			return d, errDecline
		}
		d.traces[t] = true
	}
	return d, rows.Err()
}

// computedOccurrences are the occurrences of traces computed as the engine does, from scans
// of every span and error record of each (as of asOf): for the deferred traces and the dirty
// ones. limited is true when a trace passed the engine's row limit.
func computedOccurrences(ctx context.Context, q queryer, ask telemetry.Ask, traces []string, asOf int64) (
	out []telemetry.Occurrence, limited bool, err error) {
	conv, budget := ask.Conv, ask.Limits.MaxScanRows
	for _, t := range traces {
		spans, err := scanSpans(ctx, q, &telemetry.SpanScan{TraceIDs: []string{t}, AsOf: asOf, Limit: budget,
			Fields: telemetry.FieldAttributes | telemetry.FieldEvents})
		if err != nil {
			return nil, false, err
		}
		logs, err := scanLogs(ctx, q, &telemetry.LogScan{TraceIDs: []string{t}, ErrorsOnly: true, AsOf: asOf, Limit: budget,
			Fields: telemetry.FieldAttributes})
		if err != nil {
			return nil, false, err
		}
		limited = limited || spans.Limited || logs.Limited
		out = append(out, telemetry.TraceOccurrences(conv, spans.Spans, logs.Logs)...)
	}
	return out, limited, nil
}

// deferredInWindow lists the deferred traces with an error span starting in w.
func deferredInWindow(ctx context.Context, q queryer, w telemetry.Window) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT d.TraceId FROM `+DeferredTable+` d WHERE EXISTS (SELECT 1 FROM `+TracesTable+
		` t INDEXED BY otel_traces_error_traces WHERE t.TraceId = d.TraceId AND t.IsError = 1 AND t.Timestamp >= ? AND t.Timestamp < ?)
		ORDER BY d.TraceId`, w.StartMs*1e6, w.EndMs*1e6)
	if err != nil {
		return nil, fmt.Errorf("read deferred traces: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// eachRow runs query on q and calls fn for every row with a Scan function.
func eachRow(ctx context.Context, q queryer, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// windowScan is the Scan of a window read whole.
func windowScan(w telemetry.Window, scanned int64) telemetry.Scan {
	return telemetry.Scan{WindowStartMs: w.StartMs, WindowEndMs: w.EndMs, Scanned: scanned}
}
