package telemetry

import (
	"context"
	"slices"
	"strings"
)

// InstrumentationQuery asks what the app's instrumentation sends.
type InstrumentationQuery struct {
	// Window is what is looked at; spans that start after NowMs plus a minute are clock skew.
	Window Window
	NowMs  int64
	// MaxSpans and MaxErrorLogs bound what is read (newest first; defaults 20,000 and 5,000):
	// the doctor's checks are judgements over a sample, and say how large it was.
	MaxSpans     int
	MaxErrorLogs int
}

// Instrumentation is what the doctor's instrumentation checks judge.
type Instrumentation struct {
	// Spans is how many spans were read; Limited is true when the window held more.
	Spans   int64
	Limited bool
	// Services are the distinct services among them; Unnamed the spans without service.name.
	Services []string
	Unnamed  int64
	// Future counts spans starting more than a minute after NowMs.
	Future int64
	// LegacyDB and StableDB count database spans carrying the legacy (db.statement,
	// db.system) and the stable (db.query.text, db.system.name) attribute names.
	LegacyDB, StableDB int64
	// ErrorLogs were read; Orphaned are those whose trace has no span at all (the spans were
	// sampled away, or never exported).
	ErrorLogs, Orphaned int64
	// DBLookalikes counts client spans that look like database calls (a SQL statement in an
	// attribute, or a span named for one) but are no database operation under the conventions
	// (docs/semantics.md R13); DBLookalikeSpans names a few ("service: span name") and
	// DBLookalikeKeys the attributes that held their statements.
	DBLookalikes                      int64
	DBLookalikeSpans, DBLookalikeKeys []string
}

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
func dbLookalike(s *SpanRow) (key string, ok bool) {
	if s.Kind != KindClient {
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
func (e *Engine) Instrumentation(ctx context.Context, q InstrumentationQuery) (Instrumentation, error) {
	maxSpans, maxLogs := q.MaxSpans, q.MaxErrorLogs
	if maxSpans <= 0 {
		maxSpans = 20_000
	}
	if maxLogs <= 0 {
		maxLogs = 5_000
	}
	// Read up to a week past now, so spans from a clock that runs ahead are seen.
	w := Window{StartMs: q.Window.StartMs, EndMs: max(q.Window.EndMs, q.NowMs+7*24*3600*1000)}
	b, err := e.scanSpans(ctx, SpanScan{Window: w, Limit: maxSpans, Fields: FieldAttributes})
	if err != nil {
		return Instrumentation{}, err
	}
	var out Instrumentation
	out.Spans, out.Limited = int64(len(b.Spans)), b.Limited
	services := map[string]bool{}
	for i := range b.Spans {
		s := &b.Spans[i]
		services[ServiceOf(s.Service)] = true
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
		if _, isOp := DBOperationOf(e.conv, s); !isOp {
			if key, ok := dbLookalike(s); ok {
				out.DBLookalikes++
				name := ServiceOf(s.Service) + ": " + s.Name
				if !slices.Contains(out.DBLookalikeSpans, name) && len(out.DBLookalikeSpans) < MaxRelated {
					out.DBLookalikeSpans = append(out.DBLookalikeSpans, name)
				}
				if key != "" && !slices.Contains(out.DBLookalikeKeys, key) && len(out.DBLookalikeKeys) < MaxRelated {
					out.DBLookalikeKeys = append(out.DBLookalikeKeys, key)
				}
			}
		}
	}
	out.Services = keys(services)
	logs, err := e.scanLogs(ctx, LogScan{Window: q.Window, ErrorsOnly: true, Limit: maxLogs})
	if err != nil {
		return Instrumentation{}, err
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
		return Instrumentation{}, err
	}
	for _, l := range logs.Logs {
		if strings.TrimSpace(l.TraceID) != "" && len(seen[l.TraceID]) == 0 {
			out.Orphaned++
		}
	}
	return out, nil
}
