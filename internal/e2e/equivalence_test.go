package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// fixtureNow anchors the dataset and the tools' clock.
var fixtureNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// presets are the attribute dialects the fixture is written in.
var presets = []string{"otel", "netscript"}

func TestEveryWayOfSendingTelemetryGivesTheSameAnswers(t *testing.T) {
	// The SDK merges these into every resource it sends; the fixture's resources must arrive
	// as they are.
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	for _, preset := range presets {
		t.Run(preset, func(t *testing.T) {
			d, err := fixture.New(fixture.Options{Preset: preset, Now: fixtureNow, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			calls := telemetryCalls(d)
			var ref *seen
			for _, w := range ways {
				t.Run(w.name, func(t *testing.T) {
					st := w.load(t, d)
					f := flows.New(flows.Deps{
						Telemetry: engine.New(store.NewBackend(st), d.Conventions),
						Now:       func() time.Time { return d.Now },
					})
					checkKnownAnswers(t, d, f)
					got := &seen{
						answers: ask(t, f, calls),
						traces:  storedRows(t, st, store.TracesTable),
						logs:    storedRows(t, st, store.LogsTable),
					}
					if ref == nil {
						ref = got
						return
					}
					for i, c := range calls {
						mismatch(t, c.name, ref.answers[i], got.answers[i])
					}
					mismatch(t, "the stored spans", ref.traces, got.traces)
					mismatch(t, "the stored log records", ref.logs, got.logs)
				})
				if ref == nil {
					t.Fatalf("the reference way %s failed; nothing to compare with", w.name)
				}
			}
		})
	}
}

// seen is what one way of loading the fixture led to: every call's answer and the stored rows.
type seen struct {
	answers      []any
	traces, logs any
}

// mismatch reports, field by field, where got differs from the reference way's want.
func mismatch(t *testing.T, what string, want, got any) {
	t.Helper()
	if lines := diff(want, got); len(lines) > 0 {
		t.Errorf("%s: not as with the %s way:\n  %s", what, ways[0].name, strings.Join(lines, "\n  "))
	}
}

// ask makes every call and returns the answers, failing t when a call errs that should not
// (or answers that should err), so ways that all fail alike cannot pass.
func ask(t *testing.T, f *flows.Flows, calls []call) []any {
	t.Helper()
	ctx := context.Background()
	answers := make([]any, len(calls))
	for i, c := range calls {
		a, err := answer(c.do(ctx, f))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if code := errorCode(a); code != string(c.fails) {
			t.Errorf("%s: answered error %q, want %q: %s", c.name, code, c.fails, show(a))
		}
		answers[i] = a
	}
	return answers
}

// errorCode is the code of an error answer, "" for a success (a Go error has code "go").
func errorCode(a any) string {
	m, ok := a.(map[string]any)
	if !ok {
		return ""
	}
	e, ok := m["error"].(map[string]any)
	if !ok {
		return ""
	}
	if code, ok := e["code"].(string); ok {
		return code
	}
	return "go"
}
