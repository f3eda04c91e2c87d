package chfront

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

// ExporterVersion is the OpenTelemetry Collector ClickHouse exporter release whose table
// definitions ddl/ holds, unchanged.
const ExporterVersion = "v0.165.1"

//go:embed ddl/*.sql
var ddlFiles embed.FS

func ddl(name string) string {
	b, err := ddlFiles.ReadFile("ddl/" + name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return string(b)
}

// Tables names the exporter's tables to create.
type Tables struct {
	Database string
	Traces   string
	Logs     string
	// TTL is the exporter's ttl setting rendered as its GenerateTTLExpr does; empty (the
	// exporter's default, ttl 0) means no TTL clause, so test data with old timestamps stays.
	TTL string
	// JSON creates the exporter's JSON-typed traces table instead of the Map-typed one.
	JSON bool
}

// DefaultTables are the exporter's defaults: database default, otel_traces, otel_logs, no TTL.
var DefaultTables = Tables{Database: "default", Traces: "otel_traces", Logs: "otel_logs"}

// CreateStatements fills the exporter's templates as the exporter does with its default
// configuration (table engine MergeTree(), no cluster, and, since chDB is ClickHouse 26.5, the
// full-text indexes the exporter picks for servers from 26.2 on).
func (t Tables) CreateStatements() ([]string, error) {
	const cluster, engine = "", "MergeTree()"
	traces := ddl("traces_table.sql")
	if t.JSON {
		traces = ddl("traces_json_table.sql")
	}
	ttlTs := strings.ReplaceAll(t.TTL, "{time}", "toDateTime(Timestamp)")
	ttlStart := strings.ReplaceAll(t.TTL, "{time}", "toDateTime(Start)")
	stmts := []string{
		fmt.Sprintf(traces, t.Database, t.Traces, cluster, engine, ttlTs),
		fmt.Sprintf(ddl("traces_id_ts_lookup_table.sql"), t.Database, t.Traces, cluster, engine, ttlStart),
		fmt.Sprintf(ddl("traces_id_ts_lookup_mv.sql"), t.Database, t.Traces, cluster, t.Database, t.Traces, t.Database, t.Traces),
	}
	tmpl, err := template.New("logs").Funcs(template.FuncMap{
		"ident": func(s string) string { return "`" + strings.ReplaceAll(s, "`", "\\`") + "`" },
	}).Parse(ddl("logs_table.sql"))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = tmpl.Execute(&buf, map[string]any{
		"Database": t.Database, "TableName": t.Logs, "ClusterString": cluster, "Engine": engine,
		"TTL": strings.ReplaceAll(t.TTL, "{time}", "toDateTime(Timestamp)"), "HasFullTextSearch": true,
	})
	if err != nil {
		return nil, err
	}
	return append(stmts, buf.String()), nil
}

// Create creates the tables (and their database) in e.
func (e *Engine) Create(t Tables) error {
	stmts, err := t.CreateStatements()
	if err != nil {
		return err
	}
	if t.Database != "default" {
		stmts = append([]string{"CREATE DATABASE IF NOT EXISTS `" + t.Database + "`"}, stmts...)
	}
	return e.Exec(stmts...)
}

// Drop drops the tables of t.
func (e *Engine) Drop(t Tables) error {
	q := func(n string) string { return "DROP TABLE IF EXISTS `" + t.Database + "`.`" + n + "`" }
	return e.Exec(q(t.Traces+"_trace_id_ts_mv"), q(t.Traces+"_trace_id_ts"), q(t.Traces), q(t.Logs))
}
