// Package clickhouse is the telemetry source for a team's ClickHouse: the otel_traces and
// otel_logs tables the OpenTelemetry Collector's ClickHouse exporter writes (its default,
// Map-typed schema, as of exporter v0.165.1), read-only, through the official client over the
// native protocol or HTTP(S).
//
// The tables carry none of the embedded store's derived columns, so the conventions are
// compiled into ClickHouse expressions over SpanAttributes, ResourceAttributes and
// LogAttributes at query time (see compile.go), and the aggregates ClickHouse can compute —
// counts, groupings, nearest-rank percentiles — are computed there (the capabilities). Every
// query reads only its window (the partition key toDate(Timestamp) and the sort key's
// toDateTime(Timestamp)), binds every value as a query parameter, and runs read-only with a
// time limit, a read limit and a result limit; a limit that is hit becomes Scan.Limited.
package clickhouse

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Options configure the source.
type Options struct {
	// Source is the clickhouse://… or clickhouse+http(s)://… URL (no password).
	Source string
	// Password is the user's password (from the variable named by passwordEnv or apiKeyEnv).
	Password string
	// TracesTable and LogsTable name the tables (default: the source URL's traces_table and
	// logs_table, else the exporter's otel_traces and otel_logs).
	TracesTable, LogsTable string
	// DialTimeout bounds connecting (default 5 s).
	DialTimeout time.Duration
	// MaxExecutionTime bounds each query on the server (default 10 s).
	MaxExecutionTime time.Duration
	// MaxRowsToRead bounds the rows one query reads (default 100,000,000); past it the query
	// answers from what it read and says Scan.Limited.
	MaxRowsToRead int64
	// MaxMemoryBytes bounds the memory of one query (0: the server profile's limit).
	MaxMemoryBytes int64
	// Logger receives the server's own error text, which answers never carry (nil: none).
	Logger *slog.Logger
	// MaxGroups bounds the groups an aggregate returns (default 100,000).
	MaxGroups int
}

func (o Options) withDefaults() Options {
	o.DialTimeout = cmp.Or(o.DialTimeout, 5*time.Second)
	o.MaxExecutionTime = cmp.Or(o.MaxExecutionTime, 10*time.Second)
	o.MaxRowsToRead = cmp.Or(o.MaxRowsToRead, 100_000_000)
	o.MaxGroups = cmp.Or(o.MaxGroups, 100_000)
	return o
}

// Backend reads the exporter's tables. It is safe for concurrent use.
type Backend struct {
	ep     endpoint
	o      Options
	r      *runner
	traces string
	logs   string
	lookup string
	// checked is set once the tables were found to be the exporter's (see ready), and
	// hasLookup when the exporter's trace-id lookup table is there too.
	checked, hasLookup atomic.Bool
	// checking lets one of the questions asked at once check the tables; the others wait.
	checking sync.Mutex
}

var _ telemetry.Backend = (*Backend)(nil)

// Open parses the source and prepares the client; it does not connect (the first query does),
// so a server started later is picked up.
func Open(o Options) (*Backend, error) {
	o = o.withDefaults()
	ep, err := parseEndpoint(o.Source, o.TracesTable, o.LogsTable)
	if err != nil {
		return nil, err
	}
	conn, err := ch.Open(ep.options(o.Password, o))
	if err != nil {
		return nil, fmt.Errorf("open clickhouse client: %w", err)
	}
	return &Backend{
		ep: ep, o: o, r: &runner{conn: conn, o: o, slots: make(chan struct{}, maxOpenConns)},
		traces: ep.table(ep.traces), logs: ep.table(ep.logs), lookup: ep.table(ep.traces + "_trace_id_ts"),
	}, nil
}

// Close releases the client's connections.
func (b *Backend) Close() error { return b.r.conn.Close() }

// Endpoint is the source without credentials.
func (b *Backend) Endpoint() string { return b.ep.shown }

// spanColumns are read by every span scan, in scanSpan's order.
const spanColumns = `TraceId, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName,
	toUnixTimestamp64Nano(Timestamp), toUInt64(Duration), StatusCode, StatusMessage`

// window writes the window condition on column col (a DateTime64(9)): the exact bounds, and
// the same bounds in seconds on toDateTime(col) and in days on toDate(col), which are the sort
// key's and the partition key's own expressions, so ClickHouse prunes partitions and granules
// rather than reading the Timestamp column whole.
func window(q *sqlText, col string, w telemetry.Window) {
	if w == (telemetry.Window{}) {
		q.w("1")
		return
	}
	startNs, endNs := q.i64(w.StartMs*1e6), q.i64(w.EndMs*1e6)
	startS, endS := q.i64(w.StartMs/1000), q.i64((w.EndMs+999)/1000)
	q.w(col, " >= fromUnixTimestamp64Nano(", startNs, ") AND ", col, " < fromUnixTimestamp64Nano(", endNs, ")",
		" AND toDateTime(", col, ") >= toDateTime(", startS, ") AND toDateTime(", col, ") <= toDateTime(", endS, ")",
		" AND toDate(", col, ") >= toDate(toDateTime(", startS, ")) AND toDate(", col, ") <= toDate(toDateTime(", endS, "))")
}

// service writes the service condition (UnknownService: no service.name).
func service(q *sqlText, svc string) {
	q.w(" AND ServiceName = ", serviceName(q, svc))
}

// serviceName binds the ServiceName value of service svc (UnknownService: the empty name).
func serviceName(q *sqlText, svc string) string {
	if svc == telemetry.UnknownService {
		svc = ""
	}
	return q.str(svc)
}

// spanWhere writes the WHERE clause of a span scan; failing, when not nil, keeps the spans of
// the traces with an error span in that window.
func (b *Backend) spanWhere(q *sqlText, s *telemetry.SpanScan, failing *telemetry.Window) {
	q.w(" WHERE ")
	window(q, "Timestamp", s.Window)
	if failing != nil {
		b.failingTraces(q, *failing)
	}
	if s.Service != "" {
		service(q, s.Service)
	}
	if s.RootsOnly {
		q.w(" AND ParentSpanId = ''")
	}
	if s.ErrorsOnly {
		q.w(" AND StatusCode = 'Error'")
	}
	if len(s.TraceIDs) > 0 {
		ids := q.strs(s.TraceIDs)
		q.w(" AND TraceId IN ", ids)
		if b.hasLookup.Load() {
			b.lookupWindow(q, ids, s.TraceIDs)
		}
	}
	if len(s.Names) > 0 {
		q.w(" AND SpanName IN ", q.strs(s.Names))
	}
	if len(s.AttrKeys) > 0 {
		q.w(" AND (", attrCondition(q, "SpanAttributes", s.AttrKeys, s.AttrValue), ")")
	}
	if s.Invocation != "" {
		q.w(" AND ResourceAttributes[", q.str(telemetry.InvocationKey), "] = ", q.str(s.Invocation))
	}
}

// failingTraces writes the condition of the traces with a span of status Error in window w: a
// subquery ClickHouse runs once into a set, so the table's TraceId column is read once however
// many traces fail (a list of ids costs that read per list).
func (b *Backend) failingTraces(q *sqlText, w telemetry.Window) {
	q.w(" AND TraceId GLOBAL IN (SELECT TraceId FROM ", b.traces, " WHERE ")
	window(q, "Timestamp", w)
	q.w(" AND StatusCode = 'Error')")
}

// lookupWindow narrows a scan of traces to the seconds they span, read from the exporter's
// trace-id lookup table (TraceId, Start, End, filled by its materialized view), so ClickHouse
// prunes partitions and granules instead of reading every partition's TraceId bloom filter.
// The narrowing applies only when the lookup table knows every trace asked for (its rows could
// have been dropped by a shorter TTL); the scalar subqueries run once, on the initiator of a
// Distributed query.
func (b *Backend) lookupWindow(q *sqlText, ids string, traces []string) {
	n := map[string]bool{}
	for _, t := range traces {
		n[t] = true
	}
	from := " FROM " + b.lookup + " WHERE TraceId IN " + ids
	q.w(" AND ((SELECT uniqExact(TraceId)", from, ") < ", q.i64(int64(len(n))),
		" OR (toDateTime(Timestamp) >= (SELECT min(Start)", from, ") AND toDateTime(Timestamp) <= (SELECT max(End)", from, ")))")
}

// ScanSpans implements telemetry.Backend: one query, newest (or oldest) first, one copy per
// trace and span id, at most Limit rows (one more is asked for to know whether more matched).
func (b *Backend) ScanSpans(ctx context.Context, s telemetry.SpanScan) (telemetry.SpanBatch, error) {
	return b.scanSpans(ctx, s, nil, false)
}

// ScanFailingTraceSpans implements telemetry.FailingTraceScanner.
func (b *Backend) ScanFailingTraceSpans(ctx context.Context, f telemetry.FailingScan) (telemetry.SpanBatch, error) {
	return b.scanSpans(ctx, telemetry.SpanScan{Limit: f.Limit, Fields: f.Fields}, &f.Window, f.RootAndErrorAttributes)
}

// ScanFailingTraceLogs implements telemetry.FailingTraceScanner.
func (b *Backend) ScanFailingTraceLogs(ctx context.Context, f telemetry.FailingScan) (telemetry.LogBatch, error) {
	return b.scanLogs(ctx, telemetry.LogScan{ErrorsOnly: true, Limit: f.Limit, Fields: f.Fields}, &f.Window)
}

// maxBackendRows bounds a scan that asks for no limit (the engine always sets one): the
// backend's own limit of telemetry.SpanScan.Limit.
const maxBackendRows = 200_000

// scanSpans is ScanSpans with spanWhere's failing condition; sparse reads the attributes of
// root and error spans only (the other spans' are empty maps).
func (b *Backend) scanSpans(ctx context.Context, s telemetry.SpanScan, failing *telemetry.Window, sparse bool) (telemetry.SpanBatch, error) {
	if err := b.ready(ctx); err != nil {
		return telemetry.SpanBatch{}, err
	}
	limit := s.Limit
	if limit <= 0 {
		limit = maxBackendRows
	}
	q := &sqlText{}
	q.w("SELECT ", spanColumns)
	switch {
	case s.Fields&telemetry.FieldAttributes != 0 && sparse:
		q.w(", if(StatusCode = 'Error' OR ParentSpanId = '', SpanAttributes, map())")
	case s.Fields&telemetry.FieldAttributes != 0:
		q.w(", SpanAttributes")
	}
	if s.Fields&telemetry.FieldEvents != 0 {
		q.w(", arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`), `Events.Name`, `Events.Attributes`")
	}
	if s.Fields&telemetry.FieldResource != 0 {
		q.w(", ResourceAttributes")
	}
	q.w(" FROM ", b.traces)
	b.spanWhere(q, &s, failing)
	dir := " DESC"
	if s.Oldest {
		dir = " ASC"
	}
	if failing != nil {
		// The failing traces' spans are ordered and their copies dropped here, not by
		// ClickHouse: sorting a day's failing spans with their attributes costs it more than
		// reading them. More rows than the limit, copies included, is a cut answer.
		q.w(" LIMIT ", strconv.Itoa(limit+1))
	} else {
		q.w(" ORDER BY Timestamp", dir, ", SpanId", dir, " LIMIT 1 BY TraceId, SpanId LIMIT ", strconv.Itoa(limit+1))
	}
	var out []telemetry.SpanRow
	limited, err := b.r.query(ctx, q, limit+1, func(rows driver.Rows) error {
		r, err := scanSpan(rows, s.Fields)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return telemetry.SpanBatch{}, err
	}
	if failing != nil && len(out) <= limit {
		out = onceNewestFirst(out, s.Oldest)
	}
	batch := telemetry.SpanBatch{Matched: int64(len(out))}
	if len(out) > limit {
		out, limited = out[:limit], true
	}
	if limited {
		c := &sqlText{}
		c.w("SELECT uniqExact(TraceId, SpanId) FROM ", b.traces)
		b.spanWhere(c, &s, failing)
		if batch.Matched, err = b.count(ctx, c); err != nil {
			return telemetry.SpanBatch{}, err
		}
	}
	batch.Spans, batch.Limited, batch.Scanned = out, limited, int64(len(out))
	return batch, nil
}

// onceNewestFirst orders spans as a scan's ORDER BY does (start time, then span id, newest
// first unless oldest) and keeps the first of each trace and span id, as LIMIT 1 BY does.
func onceNewestFirst(out []telemetry.SpanRow, oldest bool) []telemetry.SpanRow {
	// The order is found over indices and the rows moved once: a day's failing traces are
	// hundreds of thousands of rows, and a stable sort moving the rows themselves (each a few
	// hundred bytes) cost more than reading them.
	order := make([]int32, len(out))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(i, j int32) int {
		x, y := &out[i], &out[j]
		c := cmp.Or(cmp.Compare(x.StartNs, y.StartNs), strings.Compare(x.SpanID, y.SpanID))
		if oldest {
			return c
		}
		return -c
	})
	seen := make(map[[2]string]struct{}, len(out))
	kept := make([]telemetry.SpanRow, 0, len(out))
	for _, i := range order {
		r := &out[i]
		k := [2]string{r.TraceID, r.SpanID}
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			kept = append(kept, *r)
		}
	}
	return kept
}

// scanSpan reads one row of spanColumns and the optional fields.
func scanSpan(rows driver.Rows, f telemetry.Fields) (telemetry.SpanRow, error) {
	var r telemetry.SpanRow
	var dur uint64
	dest := []any{&r.TraceID, &r.SpanID, &r.ParentSpanID, &r.Name, &r.Kind, &r.Service, &r.StartNs, &dur, &r.StatusCode, &r.StatusMessage}
	var attrs, res map[string]string
	var evTimes []int64
	var evNames []string
	var evAttrs []map[string]string
	if f&telemetry.FieldAttributes != 0 {
		dest = append(dest, &attrs)
	}
	if f&telemetry.FieldEvents != 0 {
		dest = append(dest, &evTimes, &evNames, &evAttrs)
	}
	if f&telemetry.FieldResource != 0 {
		dest = append(dest, &res)
	}
	if err := rows.Scan(dest...); err != nil {
		return r, fmt.Errorf("read span: %w", err)
	}
	r.DurationNs = int64(min(dur, uint64(1<<63-1)))
	if f&telemetry.FieldAttributes != 0 {
		r.Attributes = nonNil(attrs)
	}
	if f&telemetry.FieldResource != 0 {
		r.Resource = nonNil(res)
	}
	if f&telemetry.FieldEvents != 0 && len(evNames) > 0 {
		r.Events = make([]telemetry.SpanEvent, len(evNames))
		for i := range evNames {
			r.Events[i] = telemetry.SpanEvent{Name: evNames[i]}
			if i < len(evTimes) {
				r.Events[i].TimeNs = evTimes[i]
			}
			if i < len(evAttrs) {
				r.Events[i].Attributes = nonNil(evAttrs[i])
			}
		}
	}
	return r, nil
}

// ScanLogs implements telemetry.Backend.
func (b *Backend) ScanLogs(ctx context.Context, s telemetry.LogScan) (telemetry.LogBatch, error) {
	return b.scanLogs(ctx, s, nil)
}

// scanLogs is ScanLogs with logWhere's failing condition.
func (b *Backend) scanLogs(ctx context.Context, s telemetry.LogScan, failing *telemetry.Window) (telemetry.LogBatch, error) {
	if err := b.ready(ctx); err != nil {
		return telemetry.LogBatch{}, err
	}
	limit := s.Limit
	if limit <= 0 {
		limit = maxBackendRows
	}
	q := &sqlText{}
	q.w("SELECT toUnixTimestamp64Nano(Timestamp), TraceId, SpanId, ServiceName, toUInt8(SeverityNumber), SeverityText, Body")
	if s.Fields&telemetry.FieldAttributes != 0 {
		q.w(", LogAttributes")
	}
	if s.Fields&telemetry.FieldResource != 0 {
		q.w(", ResourceAttributes")
	}
	b.logWhere(q, &s, failing)
	dir := " DESC"
	if s.Oldest {
		dir = " ASC"
	}
	q.w(" ORDER BY Timestamp", dir, " LIMIT ", strconv.Itoa(limit+1))
	var out []telemetry.LogRow
	limited, err := b.r.query(ctx, q, limit+1, func(rows driver.Rows) error {
		var r telemetry.LogRow
		var sev uint8
		var attrs, res map[string]string
		dest := []any{&r.TimeNs, &r.TraceID, &r.SpanID, &r.Service, &sev, &r.SeverityText, &r.Body}
		if s.Fields&telemetry.FieldAttributes != 0 {
			dest = append(dest, &attrs)
		}
		if s.Fields&telemetry.FieldResource != 0 {
			dest = append(dest, &res)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("read log record: %w", err)
		}
		r.SeverityNumber = int32(sev)
		if s.Fields&telemetry.FieldAttributes != 0 {
			r.Attributes = nonNil(attrs)
		}
		if s.Fields&telemetry.FieldResource != 0 {
			r.Resource = nonNil(res)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return telemetry.LogBatch{}, err
	}
	batch := telemetry.LogBatch{Matched: int64(len(out))}
	if len(out) > limit {
		out, limited = out[:limit], true
	}
	if limited {
		c := &sqlText{}
		c.w("SELECT count()")
		b.logWhere(c, &s, failing)
		if batch.Matched, err = b.count(ctx, c); err != nil {
			return telemetry.LogBatch{}, err
		}
	}
	batch.Logs, batch.Limited, batch.Scanned = out, limited, int64(len(out))
	return batch, nil
}

// logWhere writes the FROM and WHERE clauses of a log scan; failing, when not nil, keeps the
// records of the traces with an error span in that window.
func (b *Backend) logWhere(q *sqlText, s *telemetry.LogScan, failing *telemetry.Window) {
	q.w(" FROM ", b.logs, " WHERE ")
	window(q, "Timestamp", s.Window)
	if failing != nil {
		b.failingTraces(q, *failing)
	}
	if s.Service != "" {
		service(q, s.Service)
	}
	if s.ErrorsOnly {
		q.w(" AND ", errorLogExpr)
	}
	if len(s.TraceIDs) > 0 {
		q.w(" AND TraceId IN ", q.strs(s.TraceIDs))
	}
	if s.Invocation != "" {
		q.w(" AND ResourceAttributes[", q.str(telemetry.InvocationKey), "] = ", q.str(s.Invocation))
	}
}

// count runs a query of one count; a count cut by a limit is unknown (-1).
func (b *Backend) count(ctx context.Context, q *sqlText) (int64, error) {
	var n uint64
	limited, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error { return rows.Scan(&n) })
	if err != nil || limited {
		return -1, err
	}
	return int64(n), nil
}

// Services implements telemetry.Backend.
func (b *Backend) Services(ctx context.Context, limit int) ([]string, error) {
	if err := b.ready(ctx); err != nil {
		return nil, err
	}
	limit = cmp.Or(limit, 100)
	q := &sqlText{}
	q.w("SELECT DISTINCT if(ServiceName = '', ", q.str(telemetry.UnknownService), ", ServiceName) AS s FROM ", b.traces,
		" ORDER BY s LIMIT ", strconv.Itoa(limit))
	var out []string
	_, err := b.r.query(ctx, q, limit, func(rows driver.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// Fingerprint implements telemetry.Backend: the row counts and newest timestamps of both
// tables. ClickHouse cannot pin a snapshot, so AsOf is 0 and a cursor is refused once data
// arrived after it.
func (b *Backend) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	if err := b.ready(ctx); err != nil {
		return telemetry.Snapshot{}, err
	}
	q := &sqlText{}
	q.w("SELECT (SELECT count() FROM ", b.traces, "), (SELECT toUnixTimestamp64Nano(max(Timestamp)) FROM ", b.traces,
		"), (SELECT count() FROM ", b.logs, "), (SELECT toUnixTimestamp64Nano(max(Timestamp)) FROM ", b.logs, ")")
	var parts [4]string
	_, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error {
		var sc, lc uint64
		var sm, lm int64
		if err := rows.Scan(&sc, &sm, &lc, &lm); err != nil {
			return err
		}
		parts = [4]string{strconv.FormatUint(sc, 10), strconv.FormatInt(sm, 10), strconv.FormatUint(lc, 10), strconv.FormatInt(lm, 10)}
		return nil
	})
	if err != nil {
		return telemetry.Snapshot{}, err
	}
	return telemetry.Snapshot{ID: "clickhouse:" + strings.Join(parts[:], ":")}, nil
}

// Describe implements telemetry.Backend.
func (b *Backend) Describe(ctx context.Context) telemetry.SourceInfo {
	info := telemetry.SourceInfo{Kind: "clickhouse", Endpoint: b.ep.shown}
	newest, err := b.newest(ctx)
	if err != nil {
		info.Problem = err
		return info
	}
	info.Reachable, info.NewestDataMs = true, newest
	return info
}

// newest is the newest span or record time (Unix ms), 0 when the tables are empty.
func (b *Backend) newest(ctx context.Context) (int64, error) {
	if err := b.ready(ctx); err != nil {
		return 0, err
	}
	q := &sqlText{}
	q.w("SELECT greatest((SELECT toUnixTimestamp64Milli(max(Timestamp)) FROM ", b.traces,
		"), (SELECT toUnixTimestamp64Milli(max(Timestamp)) FROM ", b.logs, "))")
	var newest int64
	_, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error { return rows.Scan(&newest) })
	if newest < 0 {
		newest = 0
	}
	return newest, err
}

// nonNil is m, or an empty map: a scan that asked for attributes gets a map.
func nonNil(m map[string]string) conventions.Attributes {
	if m == nil {
		return conventions.Attributes{}
	}
	return m
}
