package telemetry

import (
	"context"
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
