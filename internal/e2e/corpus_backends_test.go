package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/e2e/corpus/captured"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/aspire"
	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
	"github.com/runlens/runlens/internal/telemetry/jaeger/jaegertest"
	"github.com/runlens/runlens/internal/telemetry/memory"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// corpusApps are the captured corpus apps (internal/e2e/corpus/captured/testdata): what the
// real instrumentation libraries of each app sent, as runlens stored it, with the truth its
// workload counted.
var corpusApps = []string{"goapp", "node"}

// TestEveryBackendHoldsTheCorpusTruth loads each corpus capture into every backend that can
// hold it and holds each one's answers to the app's own truth (package captured): the failed
// runs, occurrences, handled errors and causes, the cause a failed run leads with, and the
// slow statement. Jaeger keeps no log records: it is held to the same truth, which the corpus
// apps' traces decide alone (their failures are all recorded on spans).
func TestEveryBackendHoldsTheCorpusTruth(t *testing.T) {
	for _, app := range corpusApps {
		t.Run(app, func(t *testing.T) {
			c, err := captured.Load(filepath.Join("corpus", "captured", captured.Dir, app+".json.gz"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			traces, logs := c.Traces(), c.OTLPLogs()
			if traces.SpanCount() != len(c.Spans) || logs.LogRecordCount() != len(c.Logs) {
				t.Fatalf("the capture's OTLP holds %d spans and %d records of %d and %d", traces.SpanCount(), logs.LogRecordCount(), len(c.Spans), len(c.Logs))
			}
			for _, b := range []struct {
				name string
				open func(t *testing.T) telemetry.Source
			}{
				{"embedded store", func(t *testing.T) telemetry.Source {
					st := openStore(t)
					if _, rejected, err := st.IngestTraces(ctx, traces); err != nil || rejected != 0 {
						t.Fatalf("ingest: %d rejected, %v", rejected, err)
					}
					if _, rejected, err := st.IngestLogs(ctx, logs); err != nil || rejected != 0 {
						t.Fatalf("ingest logs: %d rejected, %v", rejected, err)
					}
					return engine.New(store.NewBackend(st), nil)
				}},
				{"embedded store, scans only", func(t *testing.T) telemetry.Source {
					st := openStore(t)
					if _, _, err := st.IngestTraces(ctx, traces); err != nil {
						t.Fatal(err)
					}
					if _, _, err := st.IngestLogs(ctx, logs); err != nil {
						t.Fatal(err)
					}
					return engine.New(store.NewBackend(st), nil).ScansOnly()
				}},
				{"memory", func(t *testing.T) telemetry.Source {
					m := &memory.Backend{}
					m.AddSpans(c.Spans...)
					m.AddLogRows(c.Logs...)
					return engine.New(m, nil)
				}},
				{"aspire dashboard", func(t *testing.T) telemetry.Source {
					srv := aspiretest.New(aspiretest.Options{})
					t.Cleanup(srv.Close)
					srv.Load(traces, logs)
					return engine.New(aspire.New(aspire.Options{Endpoint: srv.URL}), nil)
				}},
				{"jaeger", func(t *testing.T) telemetry.Source {
					srv := jaegertest.Start(t, jaegertest.Options{NoSelfTracing: true}) // its own spans are no run of the app
					if err := srv.Send(ctx, traces); err != nil {
						t.Fatal(err)
					}
					poll, err := jaeger.New(srv.QueryURL, jaeger.Options{CacheTTL: -1})
					if err != nil {
						t.Fatal(err)
					}
					jaegertest.WaitFor(t, "Jaeger holds the capture", time.Minute, func() (bool, error) {
						n, err := poll.ScanSpans(ctx, telemetry.SpanScan{Window: c.Window(), Limit: len(c.Spans) + 1})
						return err == nil && len(n.Spans) == len(c.Spans), err
					})
					b, err := jaeger.New(srv.QueryURL, jaeger.Options{})
					if err != nil {
						t.Fatal(err)
					}
					return engine.New(b, nil)
				}},
			} {
				t.Run(b.name, func(t *testing.T) {
					if bad := captured.Check(ctx, b.open(t), c); len(bad) > 0 {
						t.Errorf("%s's answers on %s disagree with the app's truth:\n  %s", b.name, app, strings.Join(bad, "\n  "))
					}
				})
			}
		})
	}
}
