package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runlens/runlens/internal/docs"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/store"
)

func TestRunIsolatesAFamilyThatPanicsOrFails(t *testing.T) {
	families := []Family{
		{Name: "first", Run: func(context.Context) ([]Check, error) { panic("boom") }},
		{Name: "second", Run: func(context.Context) ([]Check, error) { return nil, errors.New("cannot read") }},
		{Name: "third", Run: func(context.Context) ([]Check, error) {
			return []Check{{Name: "fine", Status: Pass, Summary: "ok"}}, nil
		}},
	}
	rep := Run(context.Background(), families, "")
	if len(rep.Families) != 3 {
		t.Fatalf("families = %d, want 3", len(rep.Families))
	}
	for i, want := range []Status{Fail, Fail, Pass} {
		if got := rep.Families[i].Status; got != want {
			t.Errorf("family %s status = %s, want %s", rep.Families[i].Name, got, want)
		}
	}
	if !strings.Contains(rep.Families[0].Checks[0].Summary, "panic: boom") {
		t.Errorf("panic summary = %q", rep.Families[0].Checks[0].Summary)
	}
	if rep.Families[1].Checks[0].Fix == "" {
		t.Error("a failing family check has no fix")
	}
	if rep.Status != Fail || rep.Counts != (Counts{Pass: 1, Fail: 2}) {
		t.Errorf("report = %s %+v", rep.Status, rep.Counts)
	}
}

func TestRunRunsOnlyTheRequestedFamily(t *testing.T) {
	ran := map[string]bool{}
	mk := func(name string) Family {
		return Family{Name: name, Run: func(context.Context) ([]Check, error) { ran[name] = true; return nil, nil }}
	}
	rep := Run(context.Background(), []Family{mk("a"), mk("b")}, "b")
	if ran["a"] || !ran["b"] || len(rep.Families) != 1 {
		t.Fatalf("ran = %v, families = %d", ran, len(rep.Families))
	}
}

func TestFoldKeepsTwentyChecksAndReportsTheWorstOmitted(t *testing.T) {
	var checks []Check
	for i := range 30 {
		st := Pass
		if i == 25 {
			st = Warn
		}
		checks = append(checks, Check{Name: fmt.Sprintf("c%d", i), Status: st, Summary: "s", Fix: "f"})
	}
	fr := runFamily(context.Background(), Family{Name: "big", Run: func(context.Context) ([]Check, error) { return checks, nil }})
	if len(fr.Checks) != MaxChecks {
		t.Fatalf("checks = %d, want %d", len(fr.Checks), MaxChecks)
	}
	last := fr.Checks[MaxChecks-1]
	if last.Name != "big_additional_checks" || last.Status != Warn || !strings.Contains(last.Summary, "11 more checks") {
		t.Fatalf("folded check = %+v", last)
	}
	if fr.Status != Warn {
		t.Errorf("family status = %s, want warn (from the folded check)", fr.Status)
	}
}

func TestEndpointProbeIsLoopbackOnlyUnlessAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	ctx := context.Background()
	tests := []struct {
		name, endpoint string
		allowRemote    bool
		wantName       string
		wantStatus     Status
	}{
		{"a loopback endpoint that answers passes", srv.URL, false, "endpoint_reachable", Pass},
		{"a private address is refused", "http://10.1.2.3:4318", false, "endpoint_allowed", Fail},
		{"a public name is refused", "http://example.com/", false, "endpoint_allowed", Fail},
		{"a non-http scheme is invalid", "file:///etc/passwd", false, "endpoint_valid", Fail},
		{"a closed loopback port fails as unreachable", "http://127.0.0.1:1", false, "endpoint_reachable", Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Deps{AllowRemoteEndpoints: tt.allowRemote, Client: &http.Client{Timeout: time.Second}}
			c := probeEndpoint(ctx, d, tt.endpoint)
			if c.Name != tt.wantName || c.Status != tt.wantStatus {
				t.Fatalf("check = %+v, want %s %s", c, tt.wantName, tt.wantStatus)
			}
			if c.Status != Pass && c.Fix == "" {
				t.Error("no fix on a failing check")
			}
		})
	}
}

// fakeSource answers Describe only; the source family needs nothing else.
type fakeSource struct {
	telemetry.Source
	info telemetry.SourceInfo
}

func (f fakeSource) Describe(context.Context) telemetry.SourceInfo { return f.info }

func TestSourceFamilyPassWarnFail(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		info telemetry.SourceInfo
		want Status
	}{
		{"recent data passes", telemetry.SourceInfo{Kind: "embedded", Reachable: true, NewestDataMs: now.Add(-time.Minute).UnixMilli()}, Pass},
		{"stale data warns", telemetry.SourceInfo{Kind: "embedded", Reachable: true, NewestDataMs: now.Add(-3 * time.Hour).UnixMilli()}, Warn},
		{"no data warns", telemetry.SourceInfo{Kind: "embedded", Reachable: true}, Warn},
		{"an unreachable source fails", telemetry.SourceInfo{Kind: "aspire"}, Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Deps{Telemetry: fakeSource{info: tt.info}, Now: func() time.Time { return now }, ReceiverAddr: "127.0.0.1:4318"}
			rep := Run(context.Background(), Families(d, ""), FamilySource)
			if rep.Status != tt.want {
				t.Fatalf("status = %s, want %s (%+v)", rep.Status, tt.want, rep.Families[0].Checks)
			}
		})
	}
}

func TestClientsFamilyFindsRegistrations(t *testing.T) {
	root := t.TempDir()
	d := Deps{ProjectRoot: root}
	rep := Run(context.Background(), Families(d, ""), FamilyClients)
	if rep.Status != Warn {
		t.Fatalf("empty project: status = %s, want warn", rep.Status)
	}
}

func TestClientsFamilyPassesOnlyWhenTheRegisteredCommandResolves(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "runlens")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, content, path string
		want                      Status
	}{
		{"a bare name on PATH passes", ".cursor/mcp.json", `{"mcpServers":{"runlens":{"command":"runlens","args":["serve"]}}}`, bin, Pass},
		{"a bare name not on PATH fails", ".mcp.json", `{"mcpServers":{"runlens":{"command":"runlens","args":["serve"]}}}`, t.TempDir(), Fail},
		{"an absolute path to an executable passes", ".vscode/mcp.json", `{"servers":{"runlens":{"type":"stdio","command":"` + exe + `"}}}`, t.TempDir(), Pass},
		{"an absolute path that does not exist fails", ".vscode/mcp.json", `{"servers":{"runlens":{"type":"stdio","command":"` + exe + `-gone"}}}`, bin, Fail},
		{"a Codex table whose command is not on PATH fails", ".codex/config.toml", "[mcp_servers.runlens]\ncommand = \"runlens\"\nargs = [\"serve\"]\n", t.TempDir(), Fail},
		{"a Codex table whose command is on PATH passes", ".codex/config.toml", "[other]\ncommand = \"x\"\n\n[mcp_servers.runlens]\ncommand = \"runlens\"\n", bin, Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			root := t.TempDir()
			path := filepath.Join(root, filepath.FromSlash(tt.file))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := Run(context.Background(), Families(Deps{ProjectRoot: root}, ""), FamilyClients)
			c := rep.Families[0].Checks[0]
			if c.Name != "clients_registered" || c.Status != tt.want || !strings.Contains(c.Summary, tt.file) {
				t.Fatalf("got %s %s: %s (fix %q), want %s naming %s", c.Name, c.Status, c.Summary, c.Fix, tt.want, tt.file)
			}
			if tt.want == Fail && !strings.Contains(c.Fix, "go install ./cmd/runlens") {
				t.Errorf("a failing registration's fix does not say how to install runlens: %q", c.Fix)
			}
		})
	}
}

func TestWorkspaceFamilyReportsAnInvalidConfiguration(t *testing.T) {
	d := Deps{ConfigFile: "runlens.json", CheckConfig: func() error { return errors.New("runlens.json#/docs/rooot: unknown key") }}
	rep := Run(context.Background(), Families(d, ""), FamilyWorkspace)
	c := rep.Families[0].Checks[0]
	if c.Status != Fail || !strings.Contains(c.Summary, "/docs/rooot") || c.Fix == "" {
		t.Fatalf("check = %+v", c)
	}
}

// fixedProblem is an error carrying its own fix, as the app's missing-store error does.
type fixedProblem struct{ msg, fix string }

func (p fixedProblem) Error() string { return p.msg }
func (p fixedProblem) Fix() string   { return p.fix }

func TestASourceProblemFailsTheSourceAndStoreFamiliesWithItsOwnFix(t *testing.T) {
	problem := fixedProblem{msg: "the telemetry store sqlite:gone.db does not exist", fix: "Create it with `runlens collect --store gone.db`."}
	d := Deps{
		Telemetry:     fakeSource{info: telemetry.SourceInfo{Kind: "embedded", Reachable: true}},
		SourceProblem: func() error { return problem },
		Store:         func(context.Context) (*store.Store, error) { return nil, problem },
	}
	rep := Run(context.Background(), Families(d, ""), "")
	src, _ := checkByName(rep, "source_exists")
	if src.Status != Fail || src.Summary != "The telemetry store sqlite:gone.db does not exist." || src.Fix != problem.fix {
		t.Errorf("source_exists = %+v, want a fail with the problem's own fix", src)
	}
	open, _ := checkByName(rep, "store_open")
	if open.Status != Fail || !strings.Contains(open.Summary, "gone.db") || open.Fix != problem.fix {
		t.Errorf("store_open = %+v, want a fail with the problem's own fix", open)
	}
}

func TestWorkspaceFamilyShowsAConfigProblemsOwnLocationAndFix(t *testing.T) {
	problem := fixedProblem{msg: "Invalid configuration at runlens.json:2:27: invalid JSON.", fix: "Correct the JSON syntax at this position."}
	d := Deps{ConfigFile: "runlens.json", CheckConfig: func() error { return problem }}
	rep := Run(context.Background(), Families(d, ""), FamilyWorkspace)
	c := rep.Families[0].Checks[0]
	if c.Name != "config_valid" || c.Status != Fail || c.Summary != problem.msg || c.Fix != problem.fix {
		t.Fatalf("check = %+v, want the problem's own summary and fix", c)
	}
}

func TestASourcesOwnChecksSayWhichPartFails(t *testing.T) {
	own := func(context.Context) []Check {
		return []Check{{Name: "clickhouse_tables", Status: Fail, Summary: "The table default.otel_traces does not exist.", Fix: "Let the exporter create it."}}
	}
	cases := []struct {
		name  string
		info  telemetry.SourceInfo
		names []string
	}{
		{"an unreachable source shows its own checks instead of a bare failure", telemetry.SourceInfo{Kind: "clickhouse"}, []string{"clickhouse_tables"}},
		{"a reachable source adds them after its data checks", telemetry.SourceInfo{Kind: "clickhouse", Reachable: true}, []string{"source_reachable", "source_recent_data", "clickhouse_tables"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checks, err := sourceChecks(context.Background(), Deps{Telemetry: fakeSource{info: c.info}, SourceChecks: own, Now: time.Now}, "")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ch := range checks {
				names = append(names, ch.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.names, ",") {
				t.Errorf("checks %v, want %v", names, c.names)
			}
		})
	}
}

// A check quotes what the user configured; however long that is, the check stays within the
// bounds of its schema, cut between characters.
func TestChecksAreShortenedToTheirSchemaBounds(t *testing.T) {
	long := strings.Repeat("é", 4000)
	rep := Run(context.Background(), []Family{{Name: "workspace", Run: func(context.Context) ([]Check, error) {
		return []Check{{Name: "docs_present_" + long, Status: Warn, Summary: "The docs folder " + long + " does not exist.", Fix: "Create " + long + "."}}, nil
	}}}, "")
	c := rep.Families[0].Checks[0]
	for _, f := range []struct {
		what, s string
		max     int
	}{{"name", c.Name, MaxNameRunes}, {"summary", c.Summary, MaxSummaryRunes}, {"fix", c.Fix, MaxFixRunes}} {
		if n := utf8.RuneCountInString(f.s); n != f.max || !utf8.ValidString(f.s) || !strings.HasSuffix(f.s, "…") {
			t.Errorf("%s: %d characters (valid %v), want %d ending in …", f.what, n, utf8.ValidString(f.s), f.max)
		}
	}
	if s := Summary(rep.Families[0]); utf8.RuneCountInString(s.Summary) > MaxSummaryRunes {
		t.Errorf("family summary has %d characters", utf8.RuneCountInString(s.Summary))
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"ééé", 2, "é…"},
		{"a\xffb", 3, "a\uFFFDb"},
		{"abc", 0, ""},
		{"", 1, ""},
	} {
		if got := Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestAMissingDocsFolderWarnsOnlyWhenDocsAreConfigured(t *testing.T) {
	for _, tt := range []struct {
		name       string
		configured bool
		want       Status
	}{
		{"a project without docs and without a docs setting passes", false, Pass},
		{"a configured docs folder that is missing warns", true, Warn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			corpus, err := docs.Open(docs.Options{ProjectRoot: root, Root: filepath.Join(root, "docs")})
			if err != nil {
				t.Fatal(err)
			}
			d := Deps{ProjectRoot: root, Docs: corpus, DocsConfigured: tt.configured}
			rep := Run(context.Background(), Families(d, ""), FamilyWorkspace)
			for _, c := range rep.Families[0].Checks {
				if c.Name == "docs_present" {
					if c.Status != tt.want || (tt.want == Pass) != (c.Fix == "") {
						t.Errorf("docs_present = %+v, want %s", c, tt.want)
					}
					return
				}
			}
			t.Fatalf("no docs_present check: %+v", rep.Families[0].Checks)
		})
	}
}
