package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
)

// lookupReach is how far before and after a window the lookup table is read for the time its
// traces span. The lookup holds a row per trace and insert for the table's whole retention,
// and a set of many traces (an hour's runs: tens of thousands) finds some in every granule, so
// an unbounded read grows with the retention, not the window: on a day of 10 M spans, the
// default hour's status took 0.9 s with one day of lookup rows and 3.6–4.0 s with nineteen.
// Bounded, a trace's spans exported more than a day before (or after) the window are not read
// with it: its root, when it started that long before, is not found for its run. Its error
// records outside the window are read within the same reach. When a trace of the set has no
// lookup row within the reach (a span of the window exported in one batch with spans of its
// trace from days before), the set's spans are read across the table, as when the lookup does
// not know every trace.
const lookupReach = 24 * time.Hour

// reach is w widened by lookupReach on both sides.
func reach(w telemetry.Window) telemetry.Window {
	r := lookupReach.Milliseconds()
	return telemetry.Window{StartMs: w.StartMs - r, EndMs: w.EndMs + r}
}

// narrowMinSpans is the table size from which tracesSpan narrows: below it, the query that
// finds the traces' time costs more than it saves. Measured at 1 h on B10's day of spans
// (ms, the narrowed read plus the lookup query against the read across the table): the
// failing traces' origins 1M 1,030 against 860, 3M 1,050 against 880, 5M 1,100 against
// 1,180, 10M 1,150 against 1,920; the runs' error spans lose at every size measured (1M 410
// against 250, 5M 560 against 440, 10M 830 against 750) but keep the read to the window's
// time, so one bound serves both. Tests lower it to narrow small tables.
var narrowMinSpans uint64 = 5_000_000

// extent is what the parts' metadata say of a table: the times of its oldest and newest rows
// (ms) and how many rows it holds.
type extent struct {
	oldest, newest int64
	rows           uint64
}

// within says every row of the table lies in w.
func (x extent) within(w telemetry.Window) bool {
	return x.rows == 0 || (x.oldest >= w.StartMs && x.newest < w.EndMs)
}

// tableExtents is what the metadata say of both tables; known is false when the server did not
// answer within the read limit (then nothing is narrowed or left out).
type tableExtents struct {
	spans, logs extent
	known       bool
}

// extents reads the traces and logs tables' extents in one query that ClickHouse answers from
// the parts' metadata (min-max indexes, row counts), reading no rows.
func (b *Backend) extents(ctx context.Context) (tableExtents, error) {
	const of = "toInt64(intDiv(toUnixTimestamp64Nano(min(Timestamp)), 1000000)), toInt64(intDiv(toUnixTimestamp64Nano(max(Timestamp)), 1000000)), toUInt64(count())"
	q := &sqlText{}
	q.w("SELECT ", of, ", (SELECT tuple(", of, ") FROM ", b.logs, ") FROM ", b.traces)
	var x tableExtents
	limited, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error {
		var l []any
		if err := rows.Scan(&x.spans.oldest, &x.spans.newest, &x.spans.rows, &l); err != nil {
			return err
		}
		var ok bool
		if len(l) == 3 {
			x.logs.oldest, ok = l[0].(int64)
			if ok {
				x.logs.newest, ok = l[1].(int64)
			}
			if ok {
				x.logs.rows, ok = l[2].(uint64)
			}
		}
		if !ok {
			return fmt.Errorf("the logs table's extent came back as %v", l)
		}
		x.known = true
		return nil
	})
	if err != nil || limited {
		return tableExtents{}, err
	}
	return x, nil
}

// tracesSpan is the time the spans of the traces in the subquery ids (written by ids) lie
// in, read from the exporter's trace-id lookup table (its Start and End per trace and insert,
// within lookupReach of w), so a read of those traces' spans prunes partitions and granules
// outside it instead of reading every TraceId of the table: a window of an hour in a table
// kept for days reads about that hour. It is the zero window (no narrowing) when there is no
// lookup table, when the traces table (its extent spans, known when the metadata answered)
// holds fewer than narrowMinSpans spans or lies in the window w already (the narrowing could
// only cost), or when the lookup table does not know every trace within the reach (its rows
// could have been dropped by a shorter TTL).
func (b *Backend) tracesSpan(ctx context.Context, w telemetry.Window, ids func(*sqlText), spans extent, known bool) (telemetry.Window, error) {
	within, err := b.tracesSpans(ctx, w, []func(*sqlText){ids}, spans, known)
	if err != nil {
		return telemetry.Window{}, err
	}
	return within[0], nil
}

// tracesSpans is tracesSpan for several subqueries of trace ids at once, in one read of the
// lookup table (its TraceId column, a ZSTD-compressed string per trace and insert, is most of
// what each asking costs: the status asks for the window's runs' traces and its failing ones).
// Each window is narrowed or not on its own, as tracesSpan says.
func (b *Backend) tracesSpans(ctx context.Context, w telemetry.Window, sets []func(*sqlText), spans extent, known bool) ([]telemetry.Window, error) {
	out := make([]telemetry.Window, len(sets))
	if len(sets) == 0 || !b.hasLookup.Load() || w == (telemetry.Window{}) || !known || spans.rows < narrowMinSpans || spans.within(w) {
		return out, nil
	}
	q := &sqlText{}
	q.w("SELECT ")
	for i, ids := range sets {
		in := "s" + strconv.Itoa(i)
		if i > 0 {
			q.w(", ")
		}
		q.w("toUInt64((SELECT uniqExact(TraceId) FROM ")
		ids(q)
		q.w(")), toUInt64(uniqExactIf(TraceId, ", in, ")), toInt64(toUnixTimestamp(minIf(Start, ", in, "))), toInt64(toUnixTimestamp(maxIf(End, ", in, ")))")
	}
	q.w(" FROM (SELECT TraceId, Start, End")
	for i, ids := range sets {
		q.w(", TraceId GLOBAL IN ")
		ids(q)
		q.w(" AS s", strconv.Itoa(i))
	}
	// Only the lookup rows within lookupReach of the window: the table is partitioned by the
	// day of Start, so the read is the window's days and the reach's, not the table's.
	r := reach(w)
	lo, hi := q.i64(r.StartMs/1000), q.i64((r.EndMs+999)/1000)
	q.w(" FROM ", b.lookup, " WHERE Start >= toDateTime(", lo, ") AND Start <= toDateTime(", hi,
		") AND toDate(Start) >= toDate(toDateTime(", lo, ")) AND toDate(Start) <= toDate(toDateTime(", hi, ")) AND (")
	for i := range sets {
		if i > 0 {
			q.w(" OR ")
		}
		q.w("s", strconv.Itoa(i))
	}
	q.w("))")
	traces, found := make([]uint64, len(sets)), make([]uint64, len(sets))
	start, end := make([]int64, len(sets)), make([]int64, len(sets))
	limited, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error {
		dest := make([]any, 0, 4*len(sets))
		for i := range sets {
			dest = append(dest, &traces[i], &found[i], &start[i], &end[i])
		}
		return rows.Scan(dest...)
	})
	if err != nil || limited {
		return out, err
	}
	for i := range sets {
		if traces[i] == 0 || found[i] < traces[i] {
			continue
		}
		// End is the newest span's second: the span of time ends after it.
		out[i] = telemetry.Window{StartMs: start[i] * 1000, EndMs: (end[i] + 1) * 1000}
	}
	return out, nil
}
