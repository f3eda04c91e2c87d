package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Backend is the store as a telemetry.Backend: bounded scans in SQL with every filter pushed
// down, and the capabilities (capabilities.go) that answer the tools from the derived columns,
// indexes and rollups. It holds no semantics: the engine over it (engine.New) decides what a
// run, an occurrence or an entry span is, and the derived columns are what the engine's own
// functions computed at ingest.
type Backend struct {
	s *Store
	// fps remembers the fingerprint of each conventions document the engine passes.
	fps sync.Map // *conventions.Conventions -> string
}

var _ telemetry.Backend = (*Backend)(nil)

// NewBackend returns the store as a telemetry backend.
func NewBackend(s *Store) *Backend { return &Backend{s: s} }

// maxBackendRows bounds a scan that asks for no limit (the engine always sets one).
const maxBackendRows = 1_000_000

// queryer is what the scans run on: the reader pool, or the writer's transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ScanSpans implements telemetry.Backend.
func (b *Backend) ScanSpans(ctx context.Context, s telemetry.SpanScan) (telemetry.SpanBatch, error) {
	batch, err := scanSpans(ctx, b.s.readers, &s)
	if err != nil {
		return telemetry.SpanBatch{}, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	return batch, nil
}

// ScanLogs implements telemetry.Backend.
func (b *Backend) ScanLogs(ctx context.Context, s telemetry.LogScan) (telemetry.LogBatch, error) {
	batch, err := scanLogs(ctx, b.s.readers, &s)
	if err != nil {
		return telemetry.LogBatch{}, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	return batch, nil
}

// Span rows are read in the order every backend returns them: newest first by start, then span
// id descending, then ingest order (oldest first: start, span id, ingest order).
const (
	spansNewest = ` ORDER BY Timestamp DESC, SpanId DESC, Seq`
	spansOldest = ` ORDER BY Timestamp, SpanId, Seq`
	logsNewest  = ` ORDER BY Timestamp DESC, Seq`
	logsOldest  = ` ORDER BY Timestamp, Seq`
)

// spanColumns are the columns scanSpanRow reads, attributes and events last.
const spanColumns = `Seq, TraceId, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName, Timestamp, Duration, StatusCode, StatusMessage`

// spanFilter turns the filters of s into WHERE conditions.
func spanFilter(s *telemetry.SpanScan) filter {
	var f filter
	if s.Window != (telemetry.Window{}) {
		f.window(s.Window)
	}
	f.service("ServiceName", s.Service)
	if s.RootsOnly {
		f.add("IsRoot = 1")
	}
	if s.ErrorsOnly {
		f.add("IsError = 1")
	}
	f.in("TraceId", s.TraceIDs)
	f.in("SpanName", s.Names)
	if len(s.AttrKeys) > 0 {
		f.attrs("SpanAttributes", s.AttrKeys, s.AttrValue)
	}
	if s.Invocation != "" {
		f.add(invocationFilter(TracesTable), s.Invocation, s.Invocation)
	}
	f.asOf(s.AsOf)
	return f
}

// scanSpans runs a span scan on q.
func scanSpans(ctx context.Context, q queryer, s *telemetry.SpanScan) (telemetry.SpanBatch, error) {
	f := spanFilter(s)
	limit := s.Limit
	if limit <= 0 || limit > maxBackendRows {
		limit = maxBackendRows
	}
	cols := spanColumns + fieldColumns(s.Fields, TracesTable, "SpanAttributes", "EventsJSON")
	order := spansNewest
	if s.Oldest {
		order = spansOldest
	}
	rows, err := q.QueryContext(ctx, `SELECT `+cols+` FROM `+TracesTable+f.where()+order+` LIMIT ?`, append(f.args, limit+1)...)
	if err != nil {
		return telemetry.SpanBatch{}, fmt.Errorf("scan spans: %w", err)
	}
	defer rows.Close()
	var out []telemetry.SpanRow
	more := false
	for rows.Next() {
		if len(out) == limit {
			more = true
			break
		}
		r, _, err := scanSpanRow(rows, s.Fields)
		if err != nil {
			return telemetry.SpanBatch{}, fmt.Errorf("scan spans: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return telemetry.SpanBatch{}, fmt.Errorf("scan spans: %w", err)
	}
	rows.Close()
	batch := telemetry.SpanBatch{Spans: out, Matched: int64(len(out)), Scanned: int64(len(out))}
	if more {
		batch.Limited = true
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+TracesTable+f.where(), f.args...).Scan(&batch.Matched); err != nil {
			return telemetry.SpanBatch{}, fmt.Errorf("count spans: %w", err)
		}
	}
	return batch, nil
}

// fieldColumns lists the optional columns of table that fields asks for (an empty text in place
// of those it does not), so scanners read a fixed shape: attributes, events (spans only),
// resource.
func fieldColumns(fields telemetry.Fields, table, attrs, events string) string {
	out := ", ''"
	if fields&telemetry.FieldAttributes != 0 {
		out = ", " + attrs
	}
	if events != "" {
		if fields&telemetry.FieldEvents != 0 {
			out += ", " + events
		} else {
			out += ", ''"
		}
	}
	if fields&telemetry.FieldResource != 0 {
		return out + ", " + resourceColumn(table)
	}
	return out + ", ''"
}

// scanSpanRow reads one row of spanColumns plus attributes and events (fieldColumns).
func scanSpanRow(rows *sql.Rows, fields telemetry.Fields) (telemetry.SpanRow, int64, error) {
	var r telemetry.SpanRow
	var seq int64
	var attrs, events, res string
	if err := rows.Scan(&seq, &r.TraceID, &r.SpanID, &r.ParentSpanID, &r.Name, &r.Kind, &r.Service, &r.StartNs, &r.DurationNs,
		&r.StatusCode, &r.StatusMessage, &attrs, &events, &res); err != nil {
		return r, 0, err
	}
	if fields&telemetry.FieldAttributes != 0 {
		r.Attributes = decodeAttrs(attrs)
	}
	if fields&telemetry.FieldEvents != 0 {
		r.Events = decodeEvents(events)
	}
	if fields&telemetry.FieldResource != 0 {
		r.Resource = decodeAttrs(res)
	}
	return r, seq, nil
}

// logColumns are the columns scanLogRow reads, attributes last.
const logColumns = `Seq, Timestamp, TraceId, SpanId, ServiceName, SeverityNumber, SeverityText, Body`

// scanLogs runs a log scan on q.
func scanLogs(ctx context.Context, q queryer, s *telemetry.LogScan) (telemetry.LogBatch, error) {
	var f filter
	if s.Window != (telemetry.Window{}) {
		f.window(s.Window)
	}
	f.service("ServiceName", s.Service)
	if s.ErrorsOnly {
		f.add("IsError = 1")
	}
	f.in("TraceId", s.TraceIDs)
	if s.Invocation != "" {
		f.add(invocationFilter(LogsTable), s.Invocation, s.Invocation)
	}
	f.asOf(s.AsOf)
	limit := s.Limit
	if limit <= 0 || limit > maxBackendRows {
		limit = maxBackendRows
	}
	order := logsNewest
	if s.Oldest {
		order = logsOldest
	}
	rows, err := q.QueryContext(ctx, `SELECT `+logColumns+fieldColumns(s.Fields, LogsTable, "LogAttributes", "")+` FROM `+LogsTable+
		f.where()+order+` LIMIT ?`, append(f.args, limit+1)...)
	if err != nil {
		return telemetry.LogBatch{}, fmt.Errorf("scan logs: %w", err)
	}
	defer rows.Close()
	var out []telemetry.LogRow
	more := false
	for rows.Next() {
		if len(out) == limit {
			more = true
			break
		}
		r, _, err := scanLogRow(rows, s.Fields)
		if err != nil {
			return telemetry.LogBatch{}, fmt.Errorf("scan logs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return telemetry.LogBatch{}, fmt.Errorf("scan logs: %w", err)
	}
	rows.Close()
	batch := telemetry.LogBatch{Logs: out, Matched: int64(len(out)), Scanned: int64(len(out))}
	if more {
		batch.Limited = true
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+LogsTable+f.where(), f.args...).Scan(&batch.Matched); err != nil {
			return telemetry.LogBatch{}, fmt.Errorf("count logs: %w", err)
		}
	}
	return batch, nil
}

// scanLogRow reads one row of logColumns plus attributes.
func scanLogRow(rows *sql.Rows, fields telemetry.Fields) (telemetry.LogRow, int64, error) {
	var r telemetry.LogRow
	var seq int64
	var attrs, res string
	if err := rows.Scan(&seq, &r.TimeNs, &r.TraceID, &r.SpanID, &r.Service, &r.SeverityNumber, &r.SeverityText, &r.Body, &attrs, &res); err != nil {
		return r, 0, err
	}
	if fields&telemetry.FieldAttributes != 0 {
		r.Attributes = decodeAttrs(attrs)
	}
	if fields&telemetry.FieldResource != 0 {
		r.Resource = decodeAttrs(res)
	}
	return r, seq, nil
}

// Services implements telemetry.Backend: the names of the services with spans, sorted,
// "unknown" for spans without service.name, at most limit (all when limit ≤ 0). It skips from
// one name to the next through the index that starts with ServiceName.
func (b *Backend) Services(ctx context.Context, limit int) ([]string, error) {
	names, err := storedServices(ctx, b.s.readers, limit)
	if err != nil {
		return nil, fmt.Errorf("%w: list services: %w", telemetry.ErrUnreachable, err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, telemetry.ServiceOf(n))
	}
	slices.Sort(out)
	out = slices.Compact(out) // a service named "unknown" and spans without one
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// storedServices lists stored service names ("" included), sorted, at most limit when limit
// > 0 besides "" (which sorts first and is always listed when present).
func storedServices(ctx context.Context, q queryer, limit int) ([]string, error) {
	query := `WITH RECURSIVE services(name) AS (
		SELECT MIN(ServiceName) FROM ` + TracesTable + `
		UNION ALL
		SELECT (SELECT MIN(ServiceName) FROM ` + TracesTable + ` WHERE ServiceName > services.name)
		FROM services WHERE services.name IS NOT NULL
	) SELECT name FROM services WHERE name IS NOT NULL`
	args := []any{}
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit+1)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Fingerprint implements telemetry.Backend: the store file's instance id and its high-water
// mark, so any committed row moves it and a cursor from another file never matches.
func (b *Backend) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	hw, err := b.s.HighWater(ctx)
	if err != nil {
		return telemetry.Snapshot{}, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	return telemetry.Snapshot{ID: fmt.Sprintf("%s:%d", b.s.InstanceID(), hw), AsOf: hw}, nil
}

// Describe implements telemetry.Backend: the embedded source; the file path is not disclosed.
func (b *Backend) Describe(ctx context.Context) telemetry.SourceInfo {
	info := telemetry.SourceInfo{Kind: "embedded"}
	var spans, logs *int64
	err := b.s.readers.QueryRowContext(ctx,
		`SELECT (SELECT MAX(Timestamp) FROM `+TracesTable+`), (SELECT MAX(Timestamp) FROM `+LogsTable+`)`).
		Scan(&spans, &logs)
	if err != nil {
		return info
	}
	info.Reachable = true
	for _, v := range []*int64{spans, logs} {
		if v != nil {
			info.NewestDataMs = max(info.NewestDataMs, telemetry.NsToMs(*v))
		}
	}
	return info
}

// filter accumulates WHERE conditions and their arguments.
type filter struct {
	conds []string
	args  []any
}

// clone returns a copy of f that conditions can be added to without changing f.
func (f filter) clone() filter {
	return filter{conds: slices.Clone(f.conds), args: slices.Clone(f.args)}
}

func (f *filter) add(cond string, args ...any) {
	f.conds = append(f.conds, cond)
	f.args = append(f.args, args...)
}

// window restricts Timestamp to [start, end) in ns.
func (f *filter) window(w telemetry.Window) {
	f.add("Timestamp >= ? AND Timestamp < ?", w.StartMs*1e6, w.EndMs*1e6)
}

// service restricts column to the stored names a reported service name stands for: "unknown"
// is both the absent service.name (stored empty) and a service named so.
func (f *filter) service(column, svc string) {
	switch svc {
	case "":
	case telemetry.UnknownService:
		f.add(column + " IN ('', '" + telemetry.UnknownService + "')")
	default:
		f.add(column+" = ?", svc)
	}
}

// in restricts column to values; nil or empty leaves it unrestricted.
func (f *filter) in(column string, values []string) {
	if len(values) == 0 {
		return
	}
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	f.add(column+" IN ("+placeholders(len(args))+")", args...)
}

// attrs keeps rows whose attribute column carries a non-empty value under one of keys (a key
// ending in "." is a prefix when value is empty), equal to value when value is set: what
// telemetry.MatchSpan tests. A text search for the key in the JSON skips most rows before it
// is decoded.
func (f *filter) attrs(column string, keys []string, value string) {
	var ors []string
	for _, k := range keys {
		enc := string(appendJSONString(nil, k))
		if strings.HasSuffix(k, ".") && value == "" {
			ors = append(ors, `(instr(`+column+`, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(`+column+`) WHERE instr(key, ?) = 1 AND value != ''))`)
			f.args = append(f.args, enc[:len(enc)-1], k)
			continue
		}
		if value == "" {
			ors = append(ors, `(instr(`+column+`, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(`+column+`) WHERE key = ? AND value != ''))`)
			f.args = append(f.args, enc+":", k)
			continue
		}
		ors = append(ors, `(instr(`+column+`, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(`+column+`) WHERE key = ? AND value = ?))`)
		f.args = append(f.args, enc+":"+string(appendJSONString(nil, value)), k, value)
	}
	f.conds = append(f.conds, "("+strings.Join(ors, " OR ")+")")
}

// asOf pins the snapshot.
func (f *filter) asOf(hw int64) {
	if hw > 0 {
		f.add("Seq <= ?", hw)
	}
}

func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// placeholders returns "?, ?, …" for n arguments.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// decodeAttrs reads an attribute column; a malformed value reads as no attributes.
func decodeAttrs(text string) conventions.Attributes {
	if text == "" || text == "{}" {
		return conventions.Attributes{}
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return conventions.Attributes{}
	}
	return m
}

// storedEvent is one element of EventsJSON.
type storedEvent struct {
	Timestamp  int64             `json:"Timestamp"`
	Name       string            `json:"Name"`
	Attributes map[string]string `json:"Attributes"`
}

// decodeEvents reads an EventsJSON column; nil when there are none (or it is malformed).
func decodeEvents(text string) []telemetry.SpanEvent {
	if text == "" || text == "[]" {
		return nil
	}
	var evs []storedEvent
	if json.Unmarshal([]byte(text), &evs) != nil || len(evs) == 0 {
		return nil
	}
	out := make([]telemetry.SpanEvent, len(evs))
	for i, e := range evs {
		attrs := conventions.Attributes(e.Attributes)
		if attrs == nil {
			attrs = conventions.Attributes{}
		}
		out[i] = telemetry.SpanEvent{TimeNs: e.Timestamp, Name: e.Name, Attributes: attrs}
	}
	return out
}
