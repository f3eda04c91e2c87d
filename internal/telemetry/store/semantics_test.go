package store

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/golden"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/flatten"
)

// behaviour digests what the engine's functions answer, with c, over a sample of telemetry: the
// fixture dataset of c's preset, as the store would derive it. The derived columns hold those
// answers, so a build whose engine answers otherwise must carry another
// telemetry.SemanticsVersion, which TestSemanticsVersionFollowsTheEngine holds it to.
func behaviour(t *testing.T, c *conventions.Conventions) string {
	t.Helper()
	d, err := fixture.New(fixture.Options{Preset: c.Preset, Now: time.Unix(1_700_000_000, 0).UTC(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	spans, _ := flatten.Spans(d.Traces)
	logs := flatten.Logs(d.Logs, d.Now)
	dv := newDeriver(c)
	h := sha256.New()
	byTrace := map[string][]telemetry.SpanRow{}
	for i := range spans {
		fmt.Fprintf(h, "%+v\n", dv.deriveSpan(&spans[i]))
		byTrace[spans[i].TraceID] = append(byTrace[spans[i].TraceID], spans[i])
	}
	errLogs := map[string][]telemetry.LogRow{}
	for i := range logs {
		if logs[i].IsError() {
			fmt.Fprintf(h, "%+v\n", dv.deriveLog(&logs[i]))
			errLogs[logs[i].TraceID] = append(errLogs[logs[i].TraceID], logs[i])
		}
	}
	traces := make([]string, 0, len(byTrace))
	for t := range byTrace {
		traces = append(traces, t)
	}
	slices.Sort(traces)
	for _, t := range traces {
		ss := byTrace[t]
		slices.SortStableFunc(ss, func(a, b telemetry.SpanRow) int {
			return cmp.Or(cmp.Compare(b.StartNs, a.StartNs), cmp.Compare(b.SpanID, a.SpanID))
		})
		fmt.Fprintf(h, "%+v\n%+v\n", telemetry.ShapeTrace(ss), telemetry.TraceOccurrences(c, ss, errLogs[t]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestSemanticsVersionFollowsTheEngine fails when what the engine answers over the fixture
// changed while telemetry.SemanticsVersion did not: stores would keep columns derived under the
// old rules. Raise the constant, then write the golden again with UPDATE_GOLDEN=1.
func TestSemanticsVersionFollowsTheEngine(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "version %d\n", telemetry.SemanticsVersion)
	for _, name := range conventions.PresetNames() {
		fmt.Fprintf(&b, "%s %s\n", name, behaviour(t, mustPreset(t, name)))
	}
	got := b.String()
	path := filepath.Join("testdata", "semantics.golden")
	want := string(golden.Read(t, path, []byte(got)))
	if got == want {
		return
	}
	wantVersion, _, _ := strings.Cut(want, "\n")
	if wantVersion == "version "+strconv.Itoa(telemetry.SemanticsVersion) {
		t.Fatalf("the engine answers otherwise over the fixture but telemetry.SemanticsVersion is still %d: "+
			"raise it (stores must recompute their derived columns), then run with UPDATE_GOLDEN=1\ngot:\n%swant:\n%s",
			telemetry.SemanticsVersion, got, want)
	}
	t.Fatalf("telemetry.SemanticsVersion changed: write %s again with UPDATE_GOLDEN=1\ngot:\n%swant:\n%s", path, got, want)
}

func TestTheFingerprintFollowsTheConventionsAndTheSemantics(t *testing.T) {
	otel, netscript := mustPreset(t, "otel"), mustPreset(t, "netscript")
	if conventionsFingerprint(otel) != conventionsFingerprint(mustPreset(t, "otel")) {
		t.Fatal("the same conventions give two fingerprints")
	}
	if conventionsFingerprint(otel) == conventionsFingerprint(netscript) {
		t.Fatal("two presets give one fingerprint")
	}
	if behaviour(t, otel) == behaviour(t, netscript) {
		t.Fatal("two presets give one behaviour digest")
	}
}
