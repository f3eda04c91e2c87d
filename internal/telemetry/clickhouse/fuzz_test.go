package clickhouse

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseEndpoint reads arbitrary text as a clickhouse source. The adapter parses nothing
// else itself: answers are decoded by the official client from the native or HTTP protocol,
// and everything else here builds SQL. An error wraps errSource; a parsed endpoint names
// plain identifiers only (they are spliced into SQL), shows no password and no fragment, and
// gives options.
func FuzzParseEndpoint(f *testing.F) {
	for _, seed := range []string{
		"clickhouse://localhost:9000/otel",
		"clickhouses://reader@ch.internal/otel?traces_table=spans&logs_table=logs",
		"clickhouse+http://127.0.0.1:8123/default?secure=true",
		"clickhouse+https://user@[::1]/db",
		"clickhouse://user:secret@host/db",
		"clickhouse://host/db?traces_table=x;DROP",
	} {
		f.Add(seed, "", "")
	}
	f.Add("clickhouse://host/db", "otel_traces", "otel_logs")
	f.Fuzz(func(t *testing.T, raw, traces, logs string) {
		e, err := parseEndpoint(raw, traces, logs)
		if err != nil {
			if !errors.Is(err, errSource) {
				t.Fatalf("error %v does not wrap errSource", err)
			}
			return
		}
		for _, name := range []string{e.database, e.traces, e.logs} {
			if !ident().MatchString(name) {
				t.Fatalf("%q parsed to the identifier %q", raw, name)
			}
		}
		if e.addr == "" || strings.Contains(e.shown, ":secret@") || strings.ContainsRune(e.shown, '#') {
			t.Fatalf("%q parsed to address %q, shown %q", raw, e.addr, e.shown)
		}
		_ = e.options("pw", Options{})
		_ = e.table(e.traces)
	})
}
