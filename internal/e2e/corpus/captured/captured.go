// Package captured keeps what a corpus app sent, as runlens stored it, beside the truth its
// workload counted, so that every telemetry backend can be held to that truth without running
// the app: the live corpus tests write a capture (RUNLENS_CORPUS_CAPTURE=1), and the backends'
// tests load it into the embedded store, memory, the Aspire test dashboard, Jaeger and
// ClickHouse. The rows are what the real instrumentation libraries produced; only their
// timestamps are moved, as a whole, so a capture is always recent.
package captured

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Truth is what a workload counted of its own runs (docs/semantics.md names the rules).
type Truth struct {
	// Runs counts the runs the workload made: requests and job runs, each its own trace, all
	// in Domains. Other runs (a connection an instrumentation traced at start-up) are not the
	// workload's: they must be ok.
	Runs    int      `json:"runs"`
	Domains []string `json:"domains"`
	// FailedRuns are the trace ids of the runs that failed (a 5xx, a failed job run), sorted.
	FailedRuns []string `json:"failedRuns"`
	// Occurrences counts one per cause per run (R7); Handled those in runs that ended ok (R8).
	Occurrences int `json:"occurrences"`
	Handled     int `json:"handled"`
	// Causes counts the distinct causes: one error group each.
	Causes int `json:"causes"`
	// SlowStatements name, by service ("" for all), a fragment of the statement that is the
	// database bottleneck there.
	SlowStatements map[string]string `json:"slowStatements"`
}

// Capture is one corpus app's telemetry and truth.
type Capture struct {
	App string `json:"app"`
	// EndMs is when the workload ended: answers are asked as of then.
	EndMs int64               `json:"endMs"`
	Truth Truth               `json:"truth"`
	Spans []telemetry.SpanRow `json:"spans"`
	Logs  []telemetry.LogRow  `json:"logs"`
}

// Dir is the folder of the captures, relative to this package.
const Dir = "testdata"

// Path is where app's capture lives, from a package whose folder is rel below the module's
// internal/e2e/corpus (e.g. "goapp", or "../.." from internal/e2e).
func Path(rel, app string) string {
	return filepath.Join(rel, "captured", Dir, app+".json.gz")
}

// Save reads every span and record b holds and writes them with the truth to path.
func Save(ctx context.Context, b telemetry.Backend, path, app string, end time.Time, truth Truth) error {
	spans, err := b.ScanSpans(ctx, telemetry.SpanScan{Oldest: true, Limit: 1_000_000,
		Fields: telemetry.FieldAttributes | telemetry.FieldEvents | telemetry.FieldResource})
	if err != nil {
		return err
	}
	logs, err := b.ScanLogs(ctx, telemetry.LogScan{Oldest: true, Limit: 1_000_000, Fields: telemetry.FieldAttributes | telemetry.FieldResource})
	if err != nil {
		return err
	}
	if spans.Limited || logs.Limited {
		return fmt.Errorf("the capture of %s is too large", app)
	}
	slices.Sort(truth.FailedRuns)
	c := Capture{App: app, EndMs: end.UnixMilli(), Truth: truth, Spans: spans.Spans, Logs: logs.Logs}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(c); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Load reads the capture at path with its times moved so that it ends at now.
func Load(path string, now time.Time) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var c Capture
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Spans) == 0 {
		return nil, fmt.Errorf("%s holds no spans", path)
	}
	shift := now.UnixMilli()*1e6 - c.EndMs*1e6
	for i := range c.Spans {
		s := &c.Spans[i]
		s.StartNs += shift
		for j := range s.Events {
			s.Events[j].TimeNs += shift
		}
	}
	for i := range c.Logs {
		c.Logs[i].TimeNs += shift
	}
	c.EndMs = now.UnixMilli()
	return &c, nil
}

// End is when the workload ended.
func (c *Capture) End() time.Time { return time.UnixMilli(c.EndMs) }

// Traces returns the spans as OTLP, one resource per distinct resource, every attribute the
// string it was stored as.
func (c *Capture) Traces() ptrace.Traces {
	td := ptrace.NewTraces()
	scopes := map[string]ptrace.SpanSlice{}
	for i := range c.Spans {
		r := &c.Spans[i]
		key := resourceKey(r.Resource, r.Service)
		spans, ok := scopes[key]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			putAttrs(rs.Resource().Attributes(), r.Resource)
			if r.Service != "" {
				rs.Resource().Attributes().PutStr("service.name", r.Service)
			}
			spans = rs.ScopeSpans().AppendEmpty().Spans()
			scopes[key] = spans
		}
		sp := spans.AppendEmpty()
		sp.SetTraceID(traceID(r.TraceID))
		sp.SetSpanID(spanID(r.SpanID))
		if r.ParentSpanID != "" {
			sp.SetParentSpanID(spanID(r.ParentSpanID))
		}
		sp.SetName(r.Name)
		sp.SetKind(kind(r.Kind))
		sp.SetStartTimestamp(pcommon.Timestamp(r.StartNs))
		sp.SetEndTimestamp(pcommon.Timestamp(r.StartNs + r.DurationNs))
		sp.Status().SetCode(code(r.StatusCode))
		sp.Status().SetMessage(r.StatusMessage)
		putAttrs(sp.Attributes(), r.Attributes)
		for _, e := range r.Events {
			ev := sp.Events().AppendEmpty()
			ev.SetName(e.Name)
			ev.SetTimestamp(pcommon.Timestamp(e.TimeNs))
			putAttrs(ev.Attributes(), e.Attributes)
		}
	}
	return td
}

// OTLPLogs returns the records as OTLP, one resource per distinct resource.
func (c *Capture) OTLPLogs() plog.Logs {
	ld := plog.NewLogs()
	scopes := map[string]plog.LogRecordSlice{}
	for i := range c.Logs {
		r := &c.Logs[i]
		key := resourceKey(r.Resource, r.Service)
		recs, ok := scopes[key]
		if !ok {
			rl := ld.ResourceLogs().AppendEmpty()
			putAttrs(rl.Resource().Attributes(), r.Resource)
			if r.Service != "" {
				rl.Resource().Attributes().PutStr("service.name", r.Service)
			}
			recs = rl.ScopeLogs().AppendEmpty().LogRecords()
			scopes[key] = recs
		}
		lr := recs.AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(r.TimeNs))
		lr.SetSeverityNumber(plog.SeverityNumber(r.SeverityNumber))
		lr.SetSeverityText(r.SeverityText)
		lr.Body().SetStr(r.Body)
		putAttrs(lr.Attributes(), r.Attributes)
		if r.TraceID != "" {
			lr.SetTraceID(traceID(r.TraceID))
		}
		if r.SpanID != "" {
			lr.SetSpanID(spanID(r.SpanID))
		}
	}
	return ld
}

// resourceKey identifies a resource by its attributes and service.
func resourceKey(res conventions.Attributes, service string) string {
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b, _ := json.Marshal([]any{service, keys, res})
	return string(b)
}

func putAttrs(m pcommon.Map, a conventions.Attributes) {
	for k, v := range a {
		m.PutStr(k, v)
	}
}

func traceID(s string) pcommon.TraceID {
	var id pcommon.TraceID
	_, _ = hex.Decode(id[:], []byte(s))
	return id
}

func spanID(s string) pcommon.SpanID {
	var id pcommon.SpanID
	_, _ = hex.Decode(id[:], []byte(s))
	return id
}

func kind(k string) ptrace.SpanKind {
	switch k {
	case telemetry.KindInternal:
		return ptrace.SpanKindInternal
	case telemetry.KindServer:
		return ptrace.SpanKindServer
	case telemetry.KindClient:
		return ptrace.SpanKindClient
	case telemetry.KindProducer:
		return ptrace.SpanKindProducer
	case telemetry.KindConsumer:
		return ptrace.SpanKindConsumer
	}
	return ptrace.SpanKindUnspecified
}

func code(c string) ptrace.StatusCode {
	switch c {
	case telemetry.CodeOk:
		return ptrace.StatusCodeOk
	case telemetry.CodeError:
		return ptrace.StatusCodeError
	}
	return ptrace.StatusCodeUnset
}
