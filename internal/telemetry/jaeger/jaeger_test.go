package jaeger_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
	"github.com/runlens/runlens/internal/telemetry/jaeger/jaegertest"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// load starts a Jaeger, sends it d's traces over OTLP/HTTP and waits until every span of d is
// queryable through the backend.
func load(t *testing.T, d *fixture.Dataset, o jaeger.Options, jo ...jaegertest.Options) (*jaegertest.Server, *jaeger.Backend) {
	t.Helper()
	srv := jaegertest.Start(t, jo...)
	ctx := context.Background()
	if err := srv.Send(ctx, d.Traces); err != nil {
		t.Fatal(err)
	}
	// The poll must see Jaeger, not the cache, and every span, whatever o limits.
	poll, err := jaeger.New(srv.QueryURL, jaeger.Options{CacheTTL: -1, MaxRequests: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	want := len(d.Spans)
	jaegertest.WaitFor(t, fmt.Sprintf("Jaeger holds the fixture's %d spans", want), time.Minute, func() (bool, error) {
		n, err := fixtureSpans(ctx, poll)
		return n == want, err
	})
	b, err := jaeger.New(srv.QueryURL, o)
	if err != nil {
		t.Fatal(err)
	}
	return srv, b
}

// fixtureSpans counts the spans Jaeger holds, over all time, outside its own service.
func fixtureSpans(ctx context.Context, b *jaeger.Backend) (int, error) {
	batch, err := b.ScanSpans(ctx, telemetry.SpanScan{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range batch.Spans {
		if s.Service != "jaeger" {
			n++
		}
	}
	return n, nil
}

// Jaeger is real: the fixture goes in through its OTLP receiver, and the engine over the
// backend must give the fixture's answers, those of the dataset without logs (Jaeger stores
// none). The suite's thousands of queries run with Jaeger's self-tracing off (see
// jaegertest.Options); the otel dataset runs with it on too, its spans (service "jaeger")
// stored beside the fixture's, at the present time, outside every window of the suite.
func TestTheEngineOverJaegerConforms(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		_, b := load(t, d, jaeger.Options{}, jaegertest.Options{NoSelfTracing: true})
		return engine.New(b, d.Conventions)
	}, telemetrytest.Options{NoLogs: true})
	t.Run("with Jaeger tracing itself", func(t *testing.T) {
		telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
			_, b := load(t, d, jaeger.Options{})
			return engine.New(b, d.Conventions)
		}, telemetrytest.Options{NoLogs: true, Presets: []string{"otel"}, Seeds: []uint64{1}})
	})
}

// With searches of a few traces each, window scans fill their searches and must split them;
// the answers stay the fixture's.
func TestTheEngineOverJaegerConformsWhenSearchesComeBackFull(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		_, b := load(t, d, jaeger.Options{TracesPerSearch: 8, MaxRequests: 10_000}, jaegertest.Options{NoSelfTracing: true})
		return engine.New(b, d.Conventions)
	}, telemetrytest.Options{NoLogs: true, Presets: []string{"otel"}, Seeds: []uint64{1}})
}

func TestJaegerListsItsOwnServiceAndTheFixturesWithUnknownForSpansWithoutAName(t *testing.T) {
	d, err := fixture.New(fixture.Options{Now: telemetrytest.Now, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, b := load(t, d, jaeger.Options{})
	ctx := context.Background()
	var got []string
	// Jaeger's spans of the queries above reach its storage through its own exporter.
	jaegertest.WaitFor(t, "Jaeger lists its own service", time.Minute, func() (bool, error) {
		got, err = b.Services(ctx, 0)
		return slices.Contains(got, "jaeger"), err
	})
	want := []string{"billing", "checkout", "jaeger", telemetry.UnknownService, "worker"}
	if !slices.Equal(got, want) {
		t.Errorf("Services = %v, want %v", got, want)
	}
	info := b.Describe(ctx)
	if !info.Reachable || info.Kind != "jaeger" || info.Note == "" || info.NewestDataMs < time.Now().Add(-time.Hour).UnixMilli() {
		t.Errorf("Describe = %+v, want a reachable jaeger source with a note and newest data from Jaeger's own recent spans", info)
	}
	logs, err := b.ScanLogs(ctx, telemetry.LogScan{})
	if err != nil || len(logs.Logs) != 0 || logs.Limited {
		t.Errorf("ScanLogs = %+v, %v; want no records, not limited", logs, err)
	}
}

func TestASearchTheRequestBudgetCannotCoverIsLimited(t *testing.T) {
	d, err := fixture.New(fixture.Options{Now: telemetrytest.Now, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, b := load(t, d, jaeger.Options{TracesPerSearch: 2, MaxRequests: 3})
	batch, err := b.ScanSpans(context.Background(), telemetry.SpanScan{Window: telemetrytest.Last(time.Hour), Service: "checkout"})
	if err != nil {
		t.Fatal(err)
	}
	if !batch.Limited || batch.Matched != -1 {
		t.Errorf("Limited %v, Matched %d; want limited with an unknown match count", batch.Limited, batch.Matched)
	}
	if len(batch.Spans) == 0 {
		t.Error("no spans: a limited scan still returns what it read")
	}
}
