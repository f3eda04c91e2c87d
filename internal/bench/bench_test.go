package bench

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
)

// envBench turns on the full benchmark run of TestReport (`make bench`).
const envBench = "RUNLENS_BENCH"

// envCommit names the commit in the Results row when the tree is not a git checkout.
const envCommit = "RUNLENS_BENCH_COMMIT"

// TestReport runs every measure at full size and prints the tables and the Results row. It is a
// benchmark, not a test: it asserts only that each measure ran, never a target, since a shared
// machine's timings are no verdict.
func TestReport(t *testing.T) {
	if os.Getenv(envBench) != "1" {
		t.Skipf("set %s=1 to run the benchmarks (make bench)", envBench)
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins, err := Build(ctx, root, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "project")
	if err := WriteProject(project); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(bins, project)
	cfg.Log = testWriter{t}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.Write(&out)
	t.Logf("GOMAXPROCS %d, %s/%s, %s, took %s\n%s", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version(), time.Since(r.Started).Round(time.Second), out.String())
	t.Logf("Results row:\n%s", r.ResultsRow(commit(root)))
}

// TestHarnessServesBothServers is the cheap proof that the harness works: a few start-ups of
// each server, the same 13 tools with the same schemas from both, and a few calls of each kind.
func TestHarnessServesBothServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bins, err := Build(ctx, root, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "project")
	if err := WriteProject(project); err != nil {
		t.Fatal(err)
	}
	ts := NewTargets(bins, project)

	series, err := MeasureStartups([]Target{ts.Runlens, ts.Peer, ts.Floor}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range series {
		want := len(gen.Tools)
		if s.Target == floorName {
			want = 0
		}
		if s.Tools != want || s.Discovery.N != 3 || s.Discovery.Median <= 0 {
			t.Errorf("%s series %d: %d tools over %d runs (median %s), want %d tools over 3 runs", s.Target, s.Index, s.Tools, s.Discovery.N, s.Discovery.Median, want)
		}
	}

	want := registryTools(t)
	for _, target := range []Target{ts.Runlens, ts.Peer} {
		s, err := Open(target)
		if err != nil {
			t.Fatal(err)
		}
		if got := listedTools(t, s.Discovery.ToolsList); !equalTools(got, want) {
			t.Errorf("%s lists tools that differ from the registry:\n got %v\nwant %v", target.Name, keys(got), keys(want))
		}
		lat, err := s.RoundTrips(CallRequest("list_docs", "{}"), 2, 10)
		if err != nil {
			t.Fatalf("%s: %v", target.Name, err)
		}
		if lat.N != 10 || lat.Median <= 0 {
			t.Errorf("%s round trips: %s, want 10 timed calls", target.Name, lat)
		}
		rate, err := s.Pipelined(PingRequest(), 200, 16)
		if err != nil || rate <= 0 {
			t.Errorf("%s pipelined ping: %.0f calls/s, %v", target.Name, rate, err)
		}
		if runtime.GOOS == "linux" {
			m, err := ReadMemory(s.Pid())
			if err != nil || m.RSS <= 0 || m.HWM < m.RSS || m.Anon <= 0 || m.ByFiles <= 0 || m.Anon+m.ByFiles > m.RSS {
				t.Errorf("%s memory: %+v, %v", target.Name, m, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: %v", target.Name, err)
		}
	}

	s, err := Open(ts.RunlensCompact)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := MeasureBootstrap(ts.RunlensCompact.Name, s.Discovery.ToolsList)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tools) != len(gen.CompactTools) || b.Bytes <= 0 {
		t.Errorf("compact profile: %d tools in %d bytes, want %d tools", len(b.Tools), b.Bytes, len(gen.CompactTools))
	}
}

// listedTool is what the comparison needs of one listed tool.
type listedTool struct {
	Input, Output string
}

// listedTools decodes a tools/list result into each tool's schemas, re-encoded canonically.
func listedTools(t *testing.T, list json.RawMessage) map[string]listedTool {
	t.Helper()
	var l struct {
		Tools []struct {
			Name         string `json:"name"`
			InputSchema  any    `json:"inputSchema"`
			OutputSchema any    `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatal(err)
	}
	out := map[string]listedTool{}
	for _, tool := range l.Tools {
		out[tool.Name] = listedTool{Input: canonical(t, tool.InputSchema), Output: canonical(t, tool.OutputSchema)}
	}
	return out
}

// registryTools is what both servers must list: the registry's names and listed schemas.
func registryTools(t *testing.T) map[string]listedTool {
	t.Helper()
	out := map[string]listedTool{}
	for _, tool := range gen.Tools {
		var in, o any
		if err := json.Unmarshal(tool.ListedInputSchema, &in); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(tool.ListedOutputSchema, &o); err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = listedTool{Input: canonical(t, in), Output: canonical(t, o)}
	}
	return out
}

// canonical encodes v with sorted keys, so that two servers' key orders compare equal.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equalTools(a, b map[string]listedTool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keys(m map[string]listedTool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// moduleRoot is the folder holding go.mod above the test.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		t.Fatal("not inside a Go module")
	}
	return filepath.Dir(mod)
}

// commit names the source of the binaries for the Results row.
func commit(root string) string {
	if c := os.Getenv(envCommit); c != "" {
		return c
	}
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
