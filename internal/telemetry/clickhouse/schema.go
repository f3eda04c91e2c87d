package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
)

// column is one column the adapter reads, with the types it accepts: the exporter's, and the
// plainer ones earlier exporter releases used (String for LowCardinality(String), Map(String,
// String), Int64 durations, Int32 severities).
type column struct {
	name  string
	types []string
}

var (
	str           = []string{"String", "LowCardinality(String)"}
	attrMap       = []string{"Map(LowCardinality(String), String)", "Map(String, String)"}
	ts            = []string{"DateTime64(9)"}
	tracesColumns = []column{
		{"Timestamp", ts}, {"TraceId", str}, {"SpanId", str}, {"ParentSpanId", str}, {"SpanName", str}, {"SpanKind", str},
		{"ServiceName", str}, {"ResourceAttributes", attrMap}, {"SpanAttributes", attrMap},
		{"Duration", []string{"UInt64", "Int64"}}, {"StatusCode", str}, {"StatusMessage", str},
		{"Events.Timestamp", []string{"Array(DateTime64(9))"}}, {"Events.Name", []string{"Array(String)", "Array(LowCardinality(String))"}},
		{"Events.Attributes", []string{"Array(Map(LowCardinality(String), String))", "Array(Map(String, String))"}},
	}
	logsColumns = []column{
		{"Timestamp", ts}, {"TraceId", str}, {"SpanId", str}, {"SeverityText", str},
		{"SeverityNumber", []string{"UInt8", "Int32"}}, {"ServiceName", str}, {"Body", str},
		{"ResourceAttributes", attrMap}, {"LogAttributes", attrMap},
	}
)

// TableReport says how one table compares with what the adapter reads.
type TableReport struct {
	Name string
	// Present is false when the table does not exist.
	Present bool
	// Engine is the table engine (MergeTree, ReplicatedMergeTree, Distributed, …).
	Engine string
	// Problems name the missing columns and the columns of another type.
	Problems []string
	// JSON is true for the exporter's JSON-typed variant, which is not supported.
	JSON bool
	// Columns lists every column, for the schema's look.
	Columns map[string]string
}

// Schema compares the configured tables with the exporter's.
type Schema struct {
	Traces, Logs TableReport
	// Lookup reports whether the trace-id lookup table (<traces>_trace_id_ts) exists.
	Lookup bool
}

// OK reports whether every table is present with the columns the adapter reads.
func (s Schema) OK() bool {
	return s.Traces.Present && s.Logs.Present && len(s.Traces.Problems) == 0 && len(s.Logs.Problems) == 0
}

// Looks says which exporter schema the tables look like.
func (s Schema) Looks() string {
	switch {
	case s.Traces.JSON || s.Logs.JSON:
		return "the exporter's JSON-typed schema (json: true), which runlens does not read"
	case !s.OK():
		return "not the exporter's schema"
	case s.Logs.Columns["EventName"] != "" && s.Logs.Columns["ScopeAttributes"] != "":
		return "the exporter's Map-typed schema as of v0.165.1"
	}
	return "an earlier release of the exporter's Map-typed schema"
}

// Inspect reads the tables' columns from system.columns.
func (b *Backend) Inspect(ctx context.Context) (Schema, error) {
	q := &sqlText{}
	q.w("SELECT t.name, t.engine, c.name, c.type FROM system.tables AS t LEFT JOIN system.columns AS c ON c.database = t.database AND c.table = t.name",
		" WHERE t.database = ", q.str(b.ep.database), " AND t.name IN ", q.strs([]string{b.ep.traces, b.ep.logs, b.ep.traces + "_trace_id_ts"}))
	s := Schema{Traces: TableReport{Name: b.ep.traces, Columns: map[string]string{}}, Logs: TableReport{Name: b.ep.logs, Columns: map[string]string{}}}
	_, err := b.r.query(ctx, q, 10_000, func(rows driver.Rows) error {
		var table, engine, col, typ string
		if err := rows.Scan(&table, &engine, &col, &typ); err != nil {
			return err
		}
		var r *TableReport
		switch table {
		case b.ep.traces:
			r = &s.Traces
		case b.ep.logs:
			r = &s.Logs
		default:
			s.Lookup = true
			return nil
		}
		r.Present, r.Engine = true, engine
		if col != "" {
			r.Columns[col] = typ
		}
		return nil
	})
	if err != nil {
		return Schema{}, err
	}
	check(&s.Traces, tracesColumns)
	check(&s.Logs, logsColumns)
	return s, nil
}

func check(r *TableReport, want []column) {
	if !r.Present {
		return
	}
	for _, t := range []string{r.Columns["SpanAttributes"], r.Columns["LogAttributes"]} {
		if strings.HasPrefix(t, "JSON") {
			r.JSON = true
		}
	}
	for _, c := range want {
		got, ok := r.Columns[c.name]
		switch {
		case !ok:
			r.Problems = append(r.Problems, c.name+" is missing")
		case !slices.Contains(c.types, got):
			r.Problems = append(r.Problems, fmt.Sprintf("%s is %s, not %s", c.name, got, c.types[0]))
		}
	}
}

// ready checks the tables once before the first query: a table that is missing or not the
// exporter's is a clear error rather than wrong or empty answers. A failed check is repeated
// by the next query, so tables created later are picked up.
func (b *Backend) ready(ctx context.Context) error {
	if b.checked.Load() {
		return nil
	}
	b.checking.Lock()
	defer b.checking.Unlock()
	if b.checked.Load() {
		return nil
	}
	s, err := b.Inspect(ctx)
	if err != nil {
		return err
	}
	for _, t := range []TableReport{s.Traces, s.Logs} {
		switch {
		case !t.Present:
			return sourceError(telemetry.ErrRefused, fmt.Sprintf("ClickHouse has no table %s.%s", b.ep.database, t.Name),
				"the tables are the OpenTelemetry Collector ClickHouse exporter's: set their names with traces_table= and logs_table= in the source URL, or let the exporter create them (create_schema: true); run the doctor tool")
		case t.JSON:
			return sourceError(telemetry.ErrRefused, fmt.Sprintf("the table %s is the exporter's JSON-typed variant", t.Name),
				"runlens reads the exporter's default Map-typed schema: point it at tables created without json: true; run the doctor tool")
		case len(t.Problems) > 0:
			return sourceError(telemetry.ErrRefused, fmt.Sprintf("the table %s does not have the exporter's columns (%s)", t.Name, strings.Join(t.Problems, "; ")),
				"runlens reads the exporter's default Map-typed schema; run the doctor tool")
		}
	}
	b.hasLookup.Store(s.Lookup)
	b.checked.Store(true)
	return nil
}
