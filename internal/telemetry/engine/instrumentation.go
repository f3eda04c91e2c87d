package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
)

// sqlVerbs start a SQL statement or a span named for one.
var sqlVerbs = []string{"select ", "insert ", "update ", "delete ", "with ", "sql ", "call ", "exec "}

// looksLikeSQL reports whether s starts with a SQL verb.
func looksLikeSQL(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, v := range sqlVerbs {
		if strings.HasPrefix(s, v) {
			return true
		}
	}
	return false
}

// dbLookalike reports whether a span that is no database operation looks like a database call,
// and the attribute key holding its statement ("" when only its name says so).
func dbLookalike(s *telemetry.SpanRow) (key string, ok bool) {
	if s.Kind != telemetry.KindClient {
		return "", false
	}
	keys := make([]string, 0, len(s.Attributes))
	for k := range s.Attributes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := s.Attributes[k]; looksLikeSQL(v) && strings.ContainsAny(v, " \t") {
			return k, true
		}
	}
	return "", looksLikeSQL(s.Name + " ")
}

// Instrumentation implements Source.
func (e *Engine) Instrumentation(ctx context.Context, q telemetry.InstrumentationQuery) (telemetry.Instrumentation, error) {
	maxSpans, maxLogs := q.MaxSpans, q.MaxErrorLogs
	if maxSpans <= 0 {
		maxSpans = 20_000
	}
	if maxLogs <= 0 {
		maxLogs = 5_000
	}
	// Read up to a week past now, so spans from a clock that runs ahead are seen.
	w := telemetry.Window{StartMs: q.Window.StartMs, EndMs: max(q.Window.EndMs, q.NowMs+7*24*3600*1000)}
	b, err := e.scanSpans(ctx, telemetry.SpanScan{Window: w, Limit: maxSpans, Fields: telemetry.FieldAttributes})
	if err != nil {
		return telemetry.Instrumentation{}, err
	}
	var out telemetry.Instrumentation
	out.Spans, out.Limited = int64(len(b.Spans)), b.Limited
	services := map[string]bool{}
	for i := range b.Spans {
		s := &b.Spans[i]
		services[telemetry.ServiceOf(s.Service)] = true
		if s.Service == "" {
			out.Unnamed++
		}
		if s.StartNs > (q.NowMs+60_000)*1e6 {
			out.Future++
		}
		legacy := s.Attributes["db.statement"] != "" || s.Attributes["db.system"] != ""
		stable := s.Attributes["db.query.text"] != "" || s.Attributes["db.system.name"] != ""
		if legacy {
			out.LegacyDB++
		}
		if stable {
			out.StableDB++
		}
		if _, isOp := telemetry.DBOperationOf(e.conv, s); !isOp {
			if key, ok := dbLookalike(s); ok {
				out.DBLookalikes++
				name := telemetry.ServiceOf(s.Service) + ": " + s.Name
				if !slices.Contains(out.DBLookalikeSpans, name) && len(out.DBLookalikeSpans) < telemetry.MaxRelated {
					out.DBLookalikeSpans = append(out.DBLookalikeSpans, name)
				}
				if key != "" && !slices.Contains(out.DBLookalikeKeys, key) && len(out.DBLookalikeKeys) < telemetry.MaxRelated {
					out.DBLookalikeKeys = append(out.DBLookalikeKeys, key)
				}
			}
		}
	}
	out.Services = telemetry.Keys(services)
	logs, err := e.scanLogs(ctx, telemetry.LogScan{Window: q.Window, ErrorsOnly: true, Limit: maxLogs})
	if err != nil {
		return telemetry.Instrumentation{}, err
	}
	out.ErrorLogs = int64(len(logs.Logs))
	var traces []string
	for _, l := range logs.Logs {
		if l.TraceID != "" {
			traces = append(traces, l.TraceID)
		}
	}
	seen, _, _, err := e.traceSpans(ctx, sortedUnique(traces), false, 0, 0)
	if err != nil {
		return telemetry.Instrumentation{}, err
	}
	for _, l := range logs.Logs {
		if strings.TrimSpace(l.TraceID) != "" && len(seen[l.TraceID]) == 0 {
			out.Orphaned++
		}
	}
	return out, nil
}
