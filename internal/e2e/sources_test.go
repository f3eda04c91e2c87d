package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/aspire"
	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// source is one telemetry source the fixture can be loaded into and read back from.
type source struct {
	name string
	open func(t *testing.T, d *fixture.Dataset) telemetry.Source
	// differs lists, by JSON pointer below an answer, the fields this source cannot give as the
	// embedded store does, each with why; they are not compared.
	differs map[string]string
	// tracesOnly: the source stores no logs. It is held to the known answers of the dataset
	// without its logs and compared with the embedded store holding the same traces; what the
	// logs add there is documented in logsOnlyFields (jaeger_sources_test.go).
	tracesOnly bool
}

// sourceFields are the fields that name the source rather than the data: every source but
// the reference says another kind and endpoint.
var sourceFields = map[string]string{
	"/source":       "kind, endpoint and receiver name the source itself",
	"/scan/scanned": "how many rows a source examined is its own business (informational)",
}

// sources lists the reference first: every other source's answers are compared with its own.
var sources = []source{
	{name: "embedded store", open: func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		return engine.New(store.NewBackend(loadDirect(t, d)), d.Conventions)
	}},
	{name: "aspire dashboard", open: openAspire, differs: sourceFields},
	{name: "jaeger", open: openJaeger, differs: jaegerFields, tracesOnly: true},
}

// openAspire serves the fixture from a test dashboard that wants a key, as the dashboard sends
// it: every attribute value a string, unset statuses left out.
func openAspire(t *testing.T, d *fixture.Dataset) telemetry.Source {
	const key = "e2e-dashboard-key"
	srv := aspiretest.New(aspiretest.Options{APIKey: key})
	t.Cleanup(srv.Close)
	srv.Load(d.Traces, d.Logs)
	return engine.New(aspire.New(aspire.Options{Endpoint: srv.URL, APIKey: key}), d.Conventions)
}

func TestEverySourceGivesTheSameAnswers(t *testing.T) {
	for _, preset := range presets {
		t.Run(preset, func(t *testing.T) {
			d, err := fixture.New(fixture.Options{Preset: preset, Now: fixtureNow, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			calls := telemetryCalls(d)
			clock := func() time.Time { return d.Now }
			var ref []any
			for _, s := range sources {
				t.Run(s.name, func(t *testing.T) {
					f := flows.New(flows.Deps{Telemetry: s.open(t, d), Now: clock})
					known, base, refName := d, ref, sources[0].name
					if s.tracesOnly {
						known, refName = d.WithoutLogs(), sources[0].name+" holding the same traces"
						base = ask(t, flows.New(flows.Deps{Telemetry: engine.New(store.NewBackend(loadTracesOnly(t, d)), d.Conventions), Now: clock}), calls)
					}
					checkKnownAnswers(t, known, f)
					got := ask(t, f, calls)
					if s.tracesOnly {
						checkScanNotes(t, calls, got)
					}
					if ref == nil {
						ref = got
						return
					}
					for i, c := range calls {
						want, have := dropFields(base[i], s.differs), dropFields(got[i], s.differs)
						if lines := diff(want, have); len(lines) > 0 {
							t.Errorf("%s: not as from the %s:\n  %v", c.name, refName, lines)
						}
					}
				})
				if ref == nil {
					t.Fatalf("the reference source %s failed; nothing to compare with", s.name)
				}
			}
		})
	}
}

// checkScanNotes fails t unless every answer of a traces-only source that has a scan says in
// scan.note that logs are missing: an answer must not be silent about what it cannot hold.
func checkScanNotes(t *testing.T, calls []call, got []any) {
	t.Helper()
	var check func(name string, answer any)
	check = func(name string, answer any) {
		if pages, ok := answer.([]any); ok {
			for _, p := range pages {
				check(name, p)
			}
			return
		}
		m, _ := answer.(map[string]any)
		scan, ok := m["scan"].(map[string]any)
		if !ok {
			return
		}
		if note, _ := scan["note"].(string); !strings.Contains(note, "traces only") {
			t.Errorf("%s: scan.note is %q; want it to say the source stores traces only", name, note)
		}
	}
	for i, c := range calls {
		check(c.name, got[i])
	}
}

// dropFields removes the fields at pointers (below the answer, or below each page of a chain).
func dropFields(answer any, pointers map[string]string) any {
	if len(pointers) == 0 {
		return answer
	}
	if pages, ok := answer.([]any); ok {
		for _, p := range pages {
			dropFields(p, pointers)
		}
		return answer
	}
	m, ok := answer.(map[string]any)
	if !ok {
		return answer
	}
	for p := range pointers {
		drop(m, p)
	}
	return answer
}

func drop(m map[string]any, pointer string) {
	parts := splitPointer(pointer)
	for i, k := range parts {
		if i == len(parts)-1 {
			delete(m, k)
			return
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
}

func splitPointer(p string) []string {
	var out []string
	cur := ""
	for _, r := range p[1:] {
		if r == '/' {
			out = append(out, cur)
			cur = ""
			continue
		}
		cur += string(r)
	}
	return append(out, cur)
}
