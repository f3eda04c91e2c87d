package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
	"github.com/runlens/runlens/internal/telemetry/jaeger/jaegertest"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// jaegerFields are the fields a Jaeger source answers differently from the embedded store
// holding the same traces (see the jaeger row of sources); every other field must be equal.
var jaegerFields = map[string]string{
	"/source":        "kind, endpoint, note (it stores no logs) and newest data (its own spans) name the source itself",
	"/scan/scanned":  "rows examined depend on the access path (whole traces per search)",
	"/scan/note":     "every answer says that Jaeger stores no logs (checked by checkScanNotes)",
	"/knownServices": "analyze_service_performance of an unknown service: the known services include Jaeger's own, jaeger",
	"/hint":          "the same list, in the hint's words",
}

// What the fixture's logs add to the embedded store's answers: the fields a traces-only
// source cannot give. The embedded store with and without the logs must differ only here.
var logsOnlyFields = []struct {
	pointer, why string
}{
	{"/counts/logs", "get_app_status: there are no log records to count"},
	{"/counts/errors", "failures only an error log reported are not counted"},
	{"/status", "the verdict, when only a log reported a failure"},
	{"/services/*/lastSeenUnixMs", "a service's newest log record is not seen"},
	{"/services/*/errors", "a service's log-only failures are not counted"},
	{"/source/newestDataUnixMs", "a log record newer than every span is not seen"},
	{"/hint", "an empty answer's hint gives the newest data's age, a log record's included"},
	{"/scan/scanned", "log records are not examined"},
	{"/logs", "get_run: no correlated logs"},
	{"/count", "get_recent_errors: log-only failures are not counted"},
	{"/groups", "their groups, and the runs and traces related to a group, are missing"},
	{"/page", "so are their pages"},
	{"", "a cursor chain over fewer groups has fewer pages"},
	{"/*/count", "the same, on each page of a cursor chain"},
	{"/*/groups", "the same, on each page of a cursor chain"},
	{"/*/page", "the same, on each page of a cursor chain"},
	{"/*/scan/scanned", "the same, on each page of a cursor chain"},
}

// pointerPattern matches a documented pointer ("*" for one segment), and every pointer under
// it, against a diff line's.
func pointerPattern(p string) *regexp.Regexp {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if s == "*" {
			parts[i] = "[^/]+"
		} else {
			parts[i] = regexp.QuoteMeta(s)
		}
	}
	if p == "" {
		return regexp.MustCompile(`^(\(answer\))?$`)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "/") + "(/.*)?$")
}

// undocumented keeps the diff lines whose pointer matches none of the patterns.
func undocumented(lines []string, patterns []string) []string {
	var res []*regexp.Regexp
	for _, p := range patterns {
		res = append(res, pointerPattern(p))
	}
	var out []string
	for _, l := range lines {
		ptr, _, _ := strings.Cut(l, ": ")
		matched := false
		for _, re := range res {
			if re.MatchString(ptr) {
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, l)
		}
	}
	return out
}

// loadTracesOnly stores the fixture's traces and none of its logs: what Jaeger holds.
func loadTracesOnly(t *testing.T, d *fixture.Dataset) *store.Store {
	st := openStore(t)
	if accepted, rejected, err := st.IngestTraces(context.Background(), d.Traces); err != nil || rejected != 0 || accepted != d.Traces.SpanCount() {
		t.Fatalf("ingest traces: accepted %d of %d, rejected %d: %v", accepted, d.Traces.SpanCount(), rejected, err)
	}
	return st
}

// openJaeger sends the fixture's traces to a real Jaeger over OTLP/HTTP (Jaeger tracing
// itself, as it does by default), waits until every span is queryable and reads it back
// through the Jaeger backend.
func openJaeger(t *testing.T, d *fixture.Dataset) telemetry.Source {
	srv := jaegertest.Start(t)
	ctx := context.Background()
	if err := srv.Send(ctx, d.Traces); err != nil {
		t.Fatal(err)
	}
	poll, err := jaeger.New(srv.QueryURL, jaeger.Options{CacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	jaegertest.WaitFor(t, "Jaeger holds the fixture", time.Minute, func() (bool, error) {
		b, err := poll.ScanSpans(ctx, telemetry.SpanScan{Window: telemetry.Window{StartMs: d.Now.Add(-48 * time.Hour).UnixMilli(), EndMs: d.Now.UnixMilli()}})
		return err == nil && len(b.Spans) == d.Traces.SpanCount(), err
	})
	b, err := jaeger.New(srv.QueryURL, jaeger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return engine.New(b, d.Conventions)
}

// What the fixture's logs add to the embedded store's answers is only ever in
// logsOnlyFields: the fields a traces-only source (Jaeger) cannot give like the embedded store.
func TestWhatLogsAddToTheAnswersIsOnlyInTheLogOnlyFields(t *testing.T) {
	for _, preset := range presets {
		t.Run(preset, func(t *testing.T) {
			d, err := fixture.New(fixture.Options{Preset: preset, Now: fixtureNow, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			calls := telemetryCalls(d)
			clock := func() time.Time { return d.Now }
			tracesOnly := ask(t, flows.New(flows.Deps{Telemetry: engine.New(store.NewBackend(loadTracesOnly(t, d)), d.Conventions), Now: clock}), calls)
			withLogs := ask(t, flows.New(flows.Deps{Telemetry: engine.New(store.NewBackend(loadDirect(t, d)), d.Conventions), Now: clock}), calls)
			var logsOnly []string
			for _, x := range logsOnlyFields {
				logsOnly = append(logsOnly, x.pointer)
			}
			logDiffs := 0
			for i, c := range calls {
				lines := diffAll(tracesOnly[i], withLogs[i])
				logDiffs += len(lines)
				if rest := undocumented(lines, logsOnly); len(rest) > 0 {
					t.Errorf("%s: the logs change fields not documented as log-only:\n  %s", c.name, strings.Join(rest, "\n  "))
				}
			}
			if logDiffs == 0 {
				t.Error("the fixture's logs changed no answer: the log-only fields are not exercised")
			}
		})
	}
}

// diffAll is diff without its line bound.
func diffAll(want, got any) []string {
	var out []string
	walkDiff("", want, got, &out)
	return out
}

func TestTheLogOnlyFieldsAreEachExplainedAndCoverWhatIsBelowThem(t *testing.T) {
	for _, x := range logsOnlyFields {
		if x.why == "" || (x.pointer != "" && !strings.HasPrefix(x.pointer, "/")) {
			t.Errorf("documented difference %+v: want a pointer and a reason", x)
		}
	}
	lines := []string{"/scan/scanned: got 3, want 4", "/runs/0/id: got a, want b", "/groups/2/relatedRunIds/0: got a, want b", "/groupsX: got 1, want 2"}
	if got := fmt.Sprint(undocumented(lines, []string{"/scan/scanned", "/groups"})); got != "[/runs/0/id: got a, want b /groupsX: got 1, want 2]" {
		t.Errorf("undocumented = %s, want the run id and groupsX lines only", got)
	}
}
