package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// QueryLimits bound what one query reads, so a tool answer costs the same on a busy store as
// on a quiet one; a query that hits a limit says so through Scan.Limited.
type QueryLimits struct {
	// MaxScanRows bounds the rows one aggregate examines in Go (default 200,000).
	MaxScanRows int
	// MaxRunSpans bounds the spans get_run reads (default 10,000).
	MaxRunSpans int
	// MaxRunLogs bounds the log records get_run reads (default 1,000).
	MaxRunLogs int
}

// DefaultQueryLimits are the limits NewQuerier uses.
var DefaultQueryLimits = QueryLimits{MaxScanRows: 200_000, MaxRunSpans: 10_000, MaxRunLogs: 1_000}

// Querier answers the telemetry port from the embedded store. When the store's derived columns
// were computed with the querier's conventions (the usual case: both come from the project
// configuration), every aggregate runs in SQL over those columns, their indexes and the activity
// rollups. Otherwise — other conventions, or a recomputation still running — it decodes the
// attribute JSON of the rows in the window and applies the conventions in Go: the same answers,
// bounded by the scan limits, and slower.
type Querier struct {
	store  *Store
	conv   *conventions.Conventions
	convFP string
	limits QueryLimits
}

var _ telemetry.Source = (*Querier)(nil)

// NewQuerier returns the port over s, reading attributes with conv (the otel preset when nil).
func NewQuerier(s *Store, conv *conventions.Conventions) *Querier {
	if conv == nil {
		conv = conventions.Default()
	}
	return &Querier{store: s, conv: conv, convFP: conventionsFingerprint(conv), limits: DefaultQueryLimits}
}

// derived reports whether the derived columns can answer: they were all computed with the
// querier's conventions.
func (q *Querier) derived(ctx context.Context) (bool, error) {
	ok, err := q.store.derivedCurrent(ctx, q.convFP)
	if err != nil {
		return false, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	return ok, nil
}

// WithLimits returns a copy of q with other scan limits (zero fields keep the defaults).
func (q *Querier) WithLimits(l QueryLimits) *Querier {
	c := *q
	if l.MaxScanRows > 0 {
		c.limits.MaxScanRows = l.MaxScanRows
	}
	if l.MaxRunSpans > 0 {
		c.limits.MaxRunSpans = l.MaxRunSpans
	}
	if l.MaxRunLogs > 0 {
		c.limits.MaxRunLogs = l.MaxRunLogs
	}
	return &c
}

// Fingerprint is the store file's instance id and its high-water mark: any committed row moves
// it, and a cursor from another file never matches.
func (q *Querier) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	hw, err := q.store.HighWater(ctx)
	if err != nil {
		return telemetry.Snapshot{}, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	return telemetry.Snapshot{ID: fmt.Sprintf("%s:%d", q.store.InstanceID(), hw), AsOf: hw}, nil
}

// Describe reports the embedded source; the file path is not disclosed.
func (q *Querier) Describe(ctx context.Context) telemetry.SourceInfo {
	info := telemetry.SourceInfo{Kind: "embedded"}
	var spans, logs *int64
	err := q.store.DB().QueryRowContext(ctx,
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

// Services lists service names seen in spans, sorted, at most limit. It skips from one name to
// the next through the index that starts with ServiceName instead of reading every span.
func (q *Querier) Services(ctx context.Context, limit int) ([]string, error) {
	if limit <= 0 {
		limit = 20
	}
	var out []string
	err := q.eachRow(ctx, `WITH RECURSIVE services(name) AS (
		SELECT MIN(ServiceName) FROM `+TracesTable+`
		UNION ALL
		SELECT (SELECT MIN(ServiceName) FROM `+TracesTable+` WHERE ServiceName > services.name)
		FROM services WHERE services.name IS NOT NULL
	) SELECT name FROM services WHERE name IS NOT NULL LIMIT ?`, []any{limit}, func(scan func(...any) error) error {
		var s string
		err := scan(&s)
		out = append(out, serviceOut(s))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	slices.Sort(out) // "unknown" was stored as "" and sorted first
	return out, nil
}

// filter accumulates WHERE conditions and their arguments.
type filter struct {
	conds []string
	args  []any
}

func (f *filter) add(cond string, args ...any) {
	f.conds = append(f.conds, cond)
	f.args = append(f.args, args...)
}

// window restricts Timestamp to [start, end) in ns.
func (f *filter) window(w telemetry.Window) {
	f.add("Timestamp >= ? AND Timestamp < ?", w.StartMs*1e6, w.EndMs*1e6)
}

// service restricts to one service; "unknown" is the empty service.name as stored. The unary
// plus keeps SQLite from choosing the (ServiceName, SpanName, …) index for it over the index of
// the query's own access path; serviceIndexed lets it.
func (f *filter) service(svc string) {
	if svc == "" {
		return
	}
	f.add("+ServiceName = ?", storedService(svc))
}

// serviceIndexed restricts to one service through the index that starts with ServiceName.
func (f *filter) serviceIndexed(svc string) {
	if svc == "" {
		return
	}
	f.add("ServiceName = ?", storedService(svc))
}

// services restricts spans to the stored service names through the index that starts with
// ServiceName, one seek per name; nil leaves them unrestricted.
func (f *filter) services(names []string) {
	if names == nil {
		return
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	f.add("ServiceName IN ("+placeholders(len(names))+")", args...)
}

// storedService maps a reported service name to the stored one ("unknown" is stored empty).
func storedService(svc string) string {
	if svc == telemetry.UnknownService {
		return ""
	}
	return svc
}

// asOf pins the snapshot.
func (f *filter) asOf(hw int64) {
	if hw > 0 {
		f.add("Seq <= ?", hw)
	}
}

// anyKey keeps rows whose attribute column mentions one of keys (exact) or prefixes; a cheap
// text test that the caller confirms on the decoded attributes.
func (f *filter) anyKey(column string, keys, prefixes []string) {
	var ors []string
	for _, k := range keys {
		ors = append(ors, "instr("+column+", ?) > 0")
		f.args = append(f.args, `"`+k+`":`)
	}
	for _, p := range prefixes {
		ors = append(ors, "instr("+column+", ?) > 0")
		f.args = append(f.args, `"`+p)
	}
	if len(ors) == 0 {
		ors = append(ors, "0")
	}
	f.conds = append(f.conds, "("+strings.Join(ors, " OR ")+")")
}

func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// serviceOut maps the stored empty service.name to the reported one.
func serviceOut(s string) string {
	if s == "" {
		return telemetry.UnknownService
	}
	return s
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

// spanEvent is one element of EventsJSON.
type spanEvent struct {
	Name       string            `json:"Name"`
	Attributes map[string]string `json:"Attributes"`
}

// spanError returns an error span's message (status message, else the exception event's) and
// exception type (the exception event's, else error.type).
func spanError(statusMessage, eventsJSON string, attrs conventions.Attributes) (msg, typ string) {
	exMsg, exType := exceptionOf(eventsJSON)
	return errorFields(statusMessage, exMsg, exType, attrs)
}

// scanOf builds the Scan of a window.
func scanOf(w telemetry.Window, scanned int, limited bool) telemetry.Scan {
	return telemetry.Scan{WindowStartMs: w.StartMs, WindowEndMs: w.EndMs, Scanned: int64(scanned), Limited: limited}
}

// placeholders returns "?, ?, …" for n arguments.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// jsonString encodes s as the ingest code does (a JSON string literal, no HTML escaping).
func jsonString(s string) (string, bool) {
	return string(appendJSONString(nil, s)), true
}
