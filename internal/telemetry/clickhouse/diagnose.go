package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
)

// Finding is one doctor check of the source: pass, warn or fail, with a fix when it does not
// pass.
type Finding struct {
	Name, Status, Summary, Fix string
}

// Diagnose checks the source for the doctor: the server answers, the tables are the
// exporter's (and which release their schema looks like), the trace-id lookup table, and the
// user's readonly setting. It never fails; what it cannot check it reports.
func (b *Backend) Diagnose(ctx context.Context) []Finding {
	var version string
	q := &sqlText{}
	q.w("SELECT version()")
	if _, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error { return rows.Scan(&version) }); err != nil {
		return []Finding{failure("clickhouse_connect", err)}
	}
	out := []Finding{{Name: "clickhouse_connect", Status: "pass", Summary: fmt.Sprintf("ClickHouse %s answers at %s.", version, b.ep.shown)}}
	s, err := b.Inspect(ctx)
	if err != nil {
		return append(out, failure("clickhouse_tables", err))
	}
	for _, t := range []TableReport{s.Traces, s.Logs} {
		switch {
		case !t.Present:
			out = append(out, Finding{Name: "clickhouse_tables", Status: "fail", Summary: fmt.Sprintf("The table %s.%s does not exist.", b.ep.database, t.Name),
				Fix: "Let the OpenTelemetry Collector ClickHouse exporter create its tables (create_schema: true), or name them with telemetry.clickhouse.tracesTable and logsTable."})
		case t.JSON:
			out = append(out, Finding{Name: "clickhouse_tables", Status: "fail", Summary: fmt.Sprintf("The table %s is the exporter's JSON-typed variant, which runlens does not read.", t.Name),
				Fix: "Point runlens at tables the exporter created with its default Map-typed schema (json: false)."})
		case len(t.Problems) > 0:
			out = append(out, Finding{Name: "clickhouse_tables", Status: "fail",
				Summary: fmt.Sprintf("The table %s does not have the exporter's columns: %s.", t.Name, strings.Join(capped(t.Problems, 5), "; ")),
				Fix:     "Point runlens at the exporter's tables (telemetry.clickhouse.tracesTable and logsTable), created by the exporter itself."})
		}
	}
	if s.OK() {
		note := ""
		if s.Traces.Engine == "Distributed" || s.Logs.Engine == "Distributed" {
			note = " (Distributed: queries fan out to the shards; trace-id subqueries run once, GLOBAL)"
		}
		out = append(out, Finding{Name: "clickhouse_tables", Status: "pass",
			Summary: fmt.Sprintf("%s (%s) and %s (%s) have the columns runlens reads%s; they look like %s.", s.Traces.Name, s.Traces.Engine, s.Logs.Name, s.Logs.Engine, note, s.Looks())})
		if s.Lookup {
			out = append(out, Finding{Name: "clickhouse_trace_lookup", Status: "pass", Summary: fmt.Sprintf("The trace-id lookup table %s_trace_id_ts narrows get_run to its trace's partitions.", s.Traces.Name)})
		} else {
			out = append(out, Finding{Name: "clickhouse_trace_lookup", Status: "warn", Summary: fmt.Sprintf("The exporter's trace-id lookup table %s_trace_id_ts is missing: get_run reads every partition.", s.Traces.Name),
				Fix: "Let the exporter create its tables (it creates the lookup table and its materialized view with the traces table)."})
		}
	}
	var ro string
	q = &sqlText{}
	q.w("SELECT toString(getSetting('readonly'))")
	if _, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error { return rows.Scan(&ro) }); err != nil {
		return append(out, failure("clickhouse_readonly", err))
	}
	switch {
	case b.r.noSettings.Load():
		out = append(out, Finding{Name: "clickhouse_readonly", Status: "pass", Summary: "The user is read-only and may change no settings: the server's profile bounds runlens's queries."})
	case ro == "0":
		out = append(out, Finding{Name: "clickhouse_readonly", Status: "pass", Summary: "The user may write, which is fine: runlens sends readonly=1 and its limits with every query."})
	default:
		out = append(out, Finding{Name: "clickhouse_readonly", Status: "pass", Summary: "The user is read-only (readonly=" + ro + ")."})
	}
	return out
}

func failure(name string, err error) Finding {
	var se *telemetry.SourceError
	if errors.As(err, &se) {
		return Finding{Name: name, Status: "fail", Summary: sentence(se.Message), Fix: sentence(se.Hint)}
	}
	return Finding{Name: name, Status: "fail", Summary: "ClickHouse failed the check.", Fix: "Check telemetry.source and that the server runs."}
}

func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func capped(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}
