package doctor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// spanSpec is one span to ingest.
type spanSpec struct {
	service string // "" leaves service.name unset
	trace   byte
	start   time.Time
	attrs   map[string]string
}

func ingest(t *testing.T, st *store.Store, spans []spanSpec, errorLogTraces []byte) {
	t.Helper()
	td, ld := payloads(spans, errorLogTraces)
	if _, _, err := st.IngestTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if ld.ResourceLogs().Len() > 0 {
		if _, _, err := st.IngestLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
	}
}

// source is the engine over an in-memory backend holding spans and error logs.
func source(spans []spanSpec, errorLogTraces []byte) telemetry.Source {
	td, ld := payloads(spans, errorLogTraces)
	b := &memory.Backend{}
	b.AddTraces(td)
	b.AddLogs(ld)
	return engine.New(b, nil)
}

// payloads renders spans and error logs (one per trace byte) as OTLP.
func payloads(spans []spanSpec, errorLogTraces []byte) (ptrace.Traces, plog.Logs) {
	td := ptrace.NewTraces()
	for i, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		if s.service != "" {
			rs.Resource().Attributes().PutStr("service.name", s.service)
		}
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID([16]byte{s.trace, 1}))
		sp.SetSpanID(pcommon.SpanID([8]byte{byte(i + 1), 2}))
		sp.SetName("op")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.start.Add(5 * time.Millisecond)))
		for k, v := range s.attrs {
			sp.Attributes().PutStr(k, v)
		}
	}
	ld := plog.NewLogs()
	for _, tr := range errorLogTraces {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "api")
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.SetSeverityText("ERROR")
		lr.Body().SetStr("boom")
		lr.SetTraceID(pcommon.TraceID([16]byte{tr, 1}))
	}
	return td, ld
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Path: filepath.Join(t.TempDir(), "telemetry.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func checkByName(rep Report, name string) (Check, bool) {
	for _, f := range rep.Families {
		for _, c := range f.Checks {
			if c.Name == name {
				return c, true
			}
		}
	}
	return Check{}, false
}

func TestInstrumentationFamilyFindsWhatTheAppGetsWrong(t *testing.T) {
	now := time.Now()
	src := source([]spanSpec{
		{service: "api", trace: 1, start: now.Add(-time.Minute), attrs: map[string]string{"db.system": "postgresql", "db.statement": "SELECT 1"}},
		{service: "", trace: 2, start: now.Add(-time.Minute)},
		{service: "api", trace: 3, start: now.Add(10 * time.Minute)},
	}, []byte{9})
	d := Deps{Telemetry: src, ReceiverAddr: "127.0.0.1:4318", Now: time.Now}
	rep := Run(context.Background(), Families(d, ""), FamilyInstrumentation)
	for name, want := range map[string]Status{
		"services_seen":         Pass,
		"service_name_set":      Warn,
		"clock_skew":            Warn,
		"db_attribute_names":    Warn,
		"sampling_keeps_errors": Warn,
	} {
		c, ok := checkByName(rep, name)
		if !ok {
			t.Errorf("no %s check: %+v", name, rep.Families)
			continue
		}
		if c.Status != want || (want != Pass && c.Fix == "") {
			t.Errorf("%s = %s %q (fix %q), want %s", name, c.Status, c.Summary, c.Fix, want)
		}
	}
}

func TestInstrumentationFamilyPassesOnCleanTelemetry(t *testing.T) {
	now := time.Now()
	src := source([]spanSpec{
		{service: "api", trace: 1, start: now.Add(-time.Minute), attrs: map[string]string{"db.system.name": "postgresql", "db.query.text": "SELECT 1"}},
	}, []byte{1})
	d := Deps{Telemetry: src, Now: time.Now}
	rep := Run(context.Background(), Families(d, ""), FamilyInstrumentation)
	if rep.Status != Pass {
		t.Fatalf("status = %s: %+v", rep.Status, rep.Families[0].Checks)
	}
}

func TestStoreFamilyReportsSizeIntegrityAndReceiver(t *testing.T) {
	st := openStore(t)
	ingest(t, st, []spanSpec{{service: "api", trace: 1, start: time.Now()}}, nil)
	d := Deps{Store: func(context.Context) (*store.Store, error) { return st, nil }, ReceiverEnabled: true, ReceiverAddr: "127.0.0.1:1"}
	rep := Run(context.Background(), Families(d, ""), FamilyStore)
	if c, _ := checkByName(rep, "store_integrity"); c.Status != Pass {
		t.Errorf("integrity = %+v", c)
	}
	if c, _ := checkByName(rep, "store_size"); c.Status != Pass || !strings.Contains(c.Summary, "1 spans") {
		t.Errorf("size = %+v", c)
	}
	if c, _ := checkByName(rep, "receiver_listening"); c.Status != Warn || c.Fix == "" {
		t.Errorf("receiver = %+v", c)
	}
}

func TestReceiverCheckFollowsWhoHoldsTheAddress(t *testing.T) {
	st := openStore(t)
	tests := []struct {
		name  string
		state string
		want  Status
	}{
		{"this process hosting the receiver passes", "hosted", Pass},
		{"another runlens on this project's store passes", "shared", Pass},
		{"another store's receiver or another program fails", "foreign", Fail},
		{"nothing listening warns", "off", Warn},
		{"a holder that did not answer warns", "unknown", Warn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Deps{
				Store:        func(context.Context) (*store.Store, error) { return st, nil },
				ReceiverAddr: "127.0.0.1:4318", ReceiverEnabled: true,
				Receiver: func(context.Context) Receiver {
					return Receiver{State: tt.state, Note: "note for " + tt.state, Fix: "fix for " + tt.state}
				},
			}
			rep := Run(context.Background(), Families(d, ""), FamilyStore)
			c, ok := checkByName(rep, "receiver_listening")
			if !ok || c.Status != tt.want || c.Summary != "note for "+tt.state {
				t.Fatalf("receiver check = %+v, want %s with the app's note", c, tt.want)
			}
			if c.Status != Pass && c.Fix != "fix for "+tt.state {
				t.Errorf("fix = %q, want the app's fix", c.Fix)
			}
		})
	}
}

func TestGRPCReceiverCheckFollowsWhoHoldsTheAddress(t *testing.T) {
	st := openStore(t)
	tests := []struct {
		name     string
		r        Receiver
		want     Status
		wantNote string
	}{
		{"this process hosting the gRPC receiver passes", Receiver{State: "hosted", Note: "hosted here"}, Pass, "hosted here"},
		{"another runlens on this project's store passes", Receiver{State: "shared", Note: "shared"}, Pass, "shared"},
		{"another store's gRPC receiver fails", Receiver{State: "foreign", Note: "foreign", Fix: "own port"}, Fail, "foreign"},
		{"nothing listening on an enabled gRPC address warns", Receiver{State: "off", Note: "nothing listens", Fix: "run collect"}, Warn, "nothing listens"},
		{"a gRPC receiver turned off in the configuration passes", Receiver{State: "off", Note: "turned off", Disabled: true}, Pass, "The OTLP/gRPC receiver is turned off; apps export OTLP/HTTP."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Deps{
				Store:        func(context.Context) (*store.Store, error) { return st, nil },
				ReceiverAddr: "127.0.0.1:4318", ReceiverEnabled: true,
				Receiver:     func(context.Context) Receiver { return Receiver{State: "hosted"} },
				GRPCReceiver: func(context.Context) Receiver { return tt.r },
			}
			rep := Run(context.Background(), Families(d, ""), FamilyStore)
			c, ok := checkByName(rep, "receiver_grpc_listening")
			if !ok || c.Status != tt.want || c.Summary != tt.wantNote {
				t.Fatalf("gRPC receiver check = %+v, want %s with %q", c, tt.want, tt.wantNote)
			}
			if c.Status != Pass && c.Fix != tt.r.Fix {
				t.Errorf("fix = %q, want the app's fix %q", c.Fix, tt.r.Fix)
			}
		})
	}
}

// An app that sends only metrics does not look healthy but silent: with metric points dropped
// and no spans, the instrumentation family warns that runlens keeps traces and logs only; with
// spans too, it only says metrics were dropped; with no metrics, there is no such check.
func TestInstrumentationFamilySaysWhenTheAppSendsOnlyMetrics(t *testing.T) {
	tests := []struct {
		name      string
		spans     bool
		dropped   int64
		want      Status // "" for no metrics_dropped check
		wantWords string
	}{
		{"metrics and no spans warn", false, 120, Warn, "which runlens does not keep, and no spans: send traces and logs"},
		{"metrics beside spans only say they were dropped", true, 120, Pass, "runlens keeps traces and logs only"},
		{"no metrics, no check", false, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var spans []spanSpec
			if tt.spans {
				spans = []spanSpec{{service: "api", trace: 1, start: time.Now().Add(-time.Minute)}}
			}
			d := Deps{Telemetry: source(spans, nil), ReceiverAddr: "127.0.0.1:4318", Now: time.Now,
				MetricPointsDropped: func(context.Context) int64 { return tt.dropped }}
			rep := Run(context.Background(), Families(d, ""), FamilyInstrumentation)
			c, ok := checkByName(rep, "metrics_dropped")
			if tt.want == "" {
				if ok {
					t.Fatalf("a metrics_dropped check without metrics: %+v", c)
				}
				return
			}
			if !ok || c.Status != tt.want || !strings.Contains(c.Summary, tt.wantWords) || !strings.Contains(c.Summary, "120") {
				t.Fatalf("metrics_dropped = %+v, want %s saying %q with the count", c, tt.want, tt.wantWords)
			}
			if tt.want == Warn && !strings.Contains(c.Fix, "OTEL_TRACES_EXPORTER=otlp") {
				t.Errorf("fix %q does not say how to send traces", c.Fix)
			}
			if tt.want == Pass && rep.Status != Pass {
				t.Errorf("family status %s: dropped metrics beside spans must not make it %s", rep.Status, rep.Status)
			}
		})
	}
}
