package e2e

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/telemetry/store"
)

// The tools read only some columns; the stored rows are compared too, so a way that loses an
// event attribute, a scope version or a log's observed time is caught before a tool or another
// source's adapter comes to depend on it. Seq, the ingest order, is left out: the SDK exporter
// groups spans by resource through a map, so its resource order (and so the sequence numbers)
// changes from run to run. For the same reason a row's ResourceScopeId is replaced by the
// resource and scope it refers to.

// rowOrders fixes an order of the rows of each table that does not depend on ingest order.
var rowOrders = map[string]string{
	store.TracesTable: "TraceId, SpanId",
	store.LogsTable:   "Timestamp, TraceId, SpanId, ServiceName, Body, SeverityNumber, LogAttributes",
}

// storedRows reads every row of table except its sequence number, as a JSON-like value for
// diff. Columns holding JSON (attribute maps, events, links) are decoded, so two stores that
// wrote the same attributes in another key order (the SDK sorts resource attributes) agree.
func storedRows(t *testing.T, st *store.Store, table string) any {
	t.Helper()
	rows, err := st.DB().Query(`SELECT t.*, r.ResourceAttributes AS StoredResourceAttributes, r.ScopeName AS StoredScopeName,
		r.ScopeVersion AS StoredScopeVersion FROM ` + table + ` t LEFT JOIN ` + store.ResourceScopesTable + ` r ON r.Id = t.ResourceScopeId
		ORDER BY ` + rowOrders[table])
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	out := []any{}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		row := map[string]any{}
		for i, c := range cols {
			if c != "Seq" && c != "ResourceScopeId" {
				row[c] = columnValue(c, vals[i].String)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return out
}

// columnValue decodes the JSON columns; other values stay as text.
func columnValue(column, text string) any {
	if !strings.HasSuffix(column, "Attributes") && !strings.HasSuffix(column, "JSON") {
		return text
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // nanosecond timestamps do not fit a float64
	var v any
	if err := dec.Decode(&v); err != nil {
		return "invalid JSON: " + text
	}
	return v
}
