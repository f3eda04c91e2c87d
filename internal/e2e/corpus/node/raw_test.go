package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/app"
)

// rawTrace is what the receiver stored for one trace, span by span and log by log: status,
// status message, events (long values such as stack traces shortened) and the logs'
// attributes. Failure messages carry it so a wrong answer can be read against the data.
func rawTrace(t *testing.T, a *app.App, traceID string) string {
	t.Helper()
	ctx := context.Background()
	st, err := a.Store(ctx)
	if err != nil {
		return fmt.Sprintf("    (store: %v)\n", err)
	}
	var b strings.Builder
	rows, err := st.DB().QueryContext(ctx, `SELECT SpanId, ParentSpanId, SpanName, SpanKind, StatusCode, StatusMessage, EventsJSON
		FROM otel_traces WHERE TraceId = ? ORDER BY Timestamp, Seq`, traceID)
	if err != nil {
		return fmt.Sprintf("    (spans: %v)\n", err)
	}
	for rows.Next() {
		var id, parent, name, kind, code, msg, events string
		if err := rows.Scan(&id, &parent, &name, &kind, &code, &msg, &events); err != nil {
			break
		}
		fmt.Fprintf(&b, "    span %s ← %s %q %s status %s %q events %s\n", id, orDash(parent), name, kind, code, msg, shorten(events))
	}
	_ = rows.Close()
	rows, err = st.DB().QueryContext(ctx, `SELECT SpanId, SeverityText, SeverityNumber, Body, LogAttributes
		FROM otel_logs WHERE TraceId = ? ORDER BY Timestamp, Seq`, traceID)
	if err != nil {
		return b.String() + fmt.Sprintf("    (logs: %v)\n", err)
	}
	for rows.Next() {
		var span, sev, body, attrs string
		var num int
		if err := rows.Scan(&span, &sev, &num, &body, &attrs); err != nil {
			break
		}
		fmt.Fprintf(&b, "    log in %s %s(%d) %q attributes %s\n", orDash(span), sev, num, body, shorten(attrs))
	}
	_ = rows.Close()
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shorten re-encodes a JSON value with every string longer than 100 bytes cut to its first
// line and its length.
func shorten(raw string) string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return raw
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			if len(x) > 100 {
				first, _, _ := strings.Cut(x, "\n")
				if len(first) > 100 {
					first = first[:100]
				}
				return fmt.Sprintf("%s…(%d bytes)", first, len(x))
			}
			return x
		case map[string]any:
			for k, v := range x {
				x[k] = walk(v)
			}
			return x
		case []any:
			for i, v := range x {
				x[i] = walk(v)
			}
			return x
		}
		return x
	}
	out, _ := json.Marshal(walk(v))
	return string(out)
}
