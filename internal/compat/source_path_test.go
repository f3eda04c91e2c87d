package compat

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appStatus is the part of get_app_status these tests read.
type appStatus struct {
	Counts struct {
		Spans int `json:"spans"`
	} `json:"counts"`
	Source struct {
		Reachable bool `json:"reachable"`
		Receivers []struct {
			Protocol string `json:"protocol"`
			Address  string `json:"address"`
			State    string `json:"state"`
			Note     string `json:"note"`
		} `json:"receivers"`
	} `json:"source"`
}

// fixtureSpans is how many spans fixtureTelemetry holds.
const fixtureSpans = 7

// customStoreWorkspace is a fixture workspace whose telemetry sits in data/custom.db, not in
// the default .runlens/telemetry.db, filled through `runlens collect --store`.
func customStoreWorkspace(t *testing.T) string {
	t.Helper()
	root := newWorkspace(t)
	if err := seedTelemetry(runlensBinary(t), root, time.Now(), "--store", "data/custom.db"); err != nil {
		t.Fatalf("seed data/custom.db: %v", err)
	}
	if exists(root, ".runlens/telemetry.db") {
		t.Fatal("collect --store created the default store too")
	}
	return root
}

// TestSQLiteSourcePathIsTheStoreThatIsRead serves a project whose telemetry is in a store at a
// custom path, naming it with --telemetry, RUNLENS_TELEMETRY and telemetry.source: every way,
// get_app_status counts the spans of that store, the default store is never created, and the
// receiver serve hosts writes into the named store.
func TestSQLiteSourcePathIsTheStoreThatIsRead(t *testing.T) {
	tests := []struct {
		name string
		env  func(root string) []string
		args func(root string) []string
		file bool // name the source in runlens.json instead
	}{
		{
			name: "the --telemetry flag with a relative path reads that store",
			args: func(string) []string { return []string{"--telemetry", "sqlite:data/custom.db"} },
		},
		{
			name: "RUNLENS_TELEMETRY with an absolute path reads that store",
			env: func(root string) []string {
				return []string{"RUNLENS_TELEMETRY=sqlite:" + filepath.Join(root, "data", "custom.db")}
			},
		},
		{
			name: "telemetry.source in runlens.json reads that store",
			file: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := customStoreWorkspace(t)
			if tt.file {
				writeFile(t, root, "runlens.json", `{"receiver": {"enabled": false}, "telemetry": {"source": "sqlite:data/custom.db"}}`)
			}
			port, err := pickPort()
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"--project-root", root, "--receiver", fmt.Sprintf("127.0.0.1:%d", port)}
			if tt.args != nil {
				args = append(args, tt.args(root)...)
			}
			var env []string
			if tt.env != nil {
				env = tt.env(root)
			}
			s := startServe(t, root, env, args...)

			var st appStatus
			wantSuccess(t, "get_app_status", s.call(t, "get_app_status", map[string]any{}), &st)
			if st.Counts.Spans != fixtureSpans || !st.Source.Reachable {
				t.Fatalf("get_app_status counted %d spans (reachable %v), want the %d of data/custom.db", st.Counts.Spans, st.Source.Reachable, fixtureSpans)
			}

			// The receiver this serve hosts writes the store it reads.
			trace := kv{"resourceSpans": []kv{resourceSpans("late-service",
				span("99999999999999999999999999999999", "9999999999999999", "", "GET /late", 2, time.Now().Add(-time.Second), time.Millisecond, 1, "", attrs{}))}}
			if err := postOTLP(t.Context(), fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port), trace); err != nil {
				t.Fatalf("post to the hosted receiver: %v\nstderr:\n%s", err, tail(s.stderr.Bytes()))
			}
			wantSuccess(t, "get_app_status", s.call(t, "get_app_status", map[string]any{}), &st)
			if st.Counts.Spans != fixtureSpans+1 {
				t.Errorf("after one more span through the hosted receiver, get_app_status counts %d spans, want %d", st.Counts.Spans, fixtureSpans+1)
			}
			if exists(root, ".runlens/telemetry.db") {
				t.Error("serve created the default store although the source names data/custom.db")
			}
		})
	}
}

// TestSQLiteSourceThatDoesNotExistIsAClearError names a store file that is not there: the
// tools answer source_unreachable with the path and a hint, the doctor fails the source with
// the fix, `runlens doctor` exits 1 saying so, and no empty store is created anywhere.
func TestSQLiteSourceThatDoesNotExistIsAClearError(t *testing.T) {
	root := newWorkspace(t)
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, root, nil, "--project-root", root, "--telemetry", "sqlite:missing/telemetry.db",
		"--receiver", fmt.Sprintf("127.0.0.1:%d", port))

	for _, tool := range []string{"get_app_status", "list_runs", "get_recent_errors"} {
		te := wantToolError(t, tool, s.call(t, tool, map[string]any{}))
		if te.Code != "source_unreachable" || !strings.Contains(te.Message, "missing/telemetry.db") || !strings.Contains(te.Message, "does not exist") {
			t.Errorf("%s: error %+v, want source_unreachable naming missing/telemetry.db as missing", tool, te)
		}
		if !strings.Contains(te.Hint, "runlens collect --store missing/telemetry.db") {
			t.Errorf("%s: hint %q does not say how to create the store", tool, te.Hint)
		}
	}

	var doc doctorAnswer
	wantSuccess(t, "doctor", s.call(t, "doctor", map[string]any{}), &doc)
	c := doc.check(t, "source", "source_exists")
	if c.Status != "fail" || !strings.Contains(c.Summary, "missing/telemetry.db") || !strings.Contains(c.Fix, "runlens collect --store missing/telemetry.db") {
		t.Errorf("doctor source_exists = %+v, want a fail naming the file with the fix", c)
	}
	if doc.Status != "fail" {
		t.Errorf("doctor status %s, want fail", doc.Status)
	}

	p := run(t, runOpts{dir: root}, runlensBinary(t), "doctor", "--project-root", root, "--telemetry", "sqlite:missing/telemetry.db")
	if p.exitCode != 1 || !strings.Contains(string(p.stdout), "missing/telemetry.db") || !strings.Contains(string(p.stdout), "runlens collect --store") {
		t.Errorf("runlens doctor: exit %d, want 1 with the missing store and its fix:\n%s%s", p.exitCode, p.stdout, p.stderr)
	}
	eventually(t, 10*time.Second, "serve's stderr says why its receiver did not start", func() bool {
		return strings.Contains(string(s.stderr.Bytes()), "missing/telemetry.db")
	})
	if exists(root, "missing/telemetry.db") || exists(root, ".runlens/telemetry.db") {
		t.Error("a missing source store was created instead of reported")
	}
}
