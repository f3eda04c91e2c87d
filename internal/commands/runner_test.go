package commands

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTimeoutPrecedenceAndCeiling(t *testing.T) {
	r, err := New(Options{Root: t.TempDir(), DefaultTimeout: 10 * time.Second, MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		declared  time.Duration
		requested time.Duration
		want      time.Duration
	}{
		{"the default applies when nothing is set", 0, 0, 10 * time.Second},
		{"the command's own timeout replaces the default", 30 * time.Second, 0, 30 * time.Second},
		{"the requested timeout replaces the command's", 30 * time.Second, 5 * time.Second, 5 * time.Second},
		{"a requested timeout above the maximum is capped", 0, time.Hour, time.Minute},
		{"a declared timeout above the maximum is capped", 2 * time.Minute, 0, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Timeout(Command{Timeout: tt.declared}, tt.requested); got != tt.want {
				t.Errorf("Timeout = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestADefaultAboveTheMaximumIsCapped(t *testing.T) {
	r, err := New(Options{Root: t.TempDir(), DefaultTimeout: time.Hour, MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Timeout(Command{}, 0); got != time.Minute {
		t.Errorf("Timeout = %v, want the maximum", got)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"no root", Options{MaxTimeout: time.Minute}},
		{"no maximum timeout", Options{Root: "/"}},
		{"a bad rule", Options{Root: "/", MaxTimeout: time.Minute, Allow: []Rule{{Name: "x"}}}},
		{"a bad declared command", Options{Root: "/", MaxTimeout: time.Minute, Declared: []Command{{Path: "x"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}

func TestTheCatalogFollowsTheMakefile(t *testing.T) {
	root := t.TempDir()
	writeProjectFile(t, root, "Makefile", "build:\n")
	r, err := New(Options{Root: root, DiscoverMakefile: true, MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Catalog()
	if _, ok := first.Lookup("make build"); !ok {
		t.Fatal("make build was not discovered")
	}
	if r.Catalog() != first {
		t.Error("an unchanged Makefile rebuilt the catalog")
	}
	writeProjectFile(t, root, "Makefile", "build:\ntest:\n")
	second := r.Catalog()
	if _, ok := second.Lookup("make test"); !ok {
		t.Fatal("a target added to the Makefile was not picked up")
	}
	if second.Fingerprint() == first.Fingerprint() {
		t.Error("the fingerprint did not change with the catalog")
	}
	if err := os.Remove(filepath.Join(root, "Makefile")); err != nil {
		t.Fatal(err)
	}
	if r.Catalog().Len() != 0 {
		t.Error("targets of a deleted Makefile are still listed")
	}
}

func TestDiscoveryProblemsAreReportedNotFatal(t *testing.T) {
	root := t.TempDir()
	writeProjectFile(t, root, "package.json", "{")
	r, err := New(Options{Root: root, DiscoverPackageJSON: true, MaxTimeout: time.Minute,
		Declared: []Command{{Path: "test", Argv: []string{"go"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Catalog().Len() != 1 {
		t.Errorf("catalog has %d commands, want the declared one", r.Catalog().Len())
	}
	if len(r.Problems()) != 1 {
		t.Errorf("Problems = %v, want the package.json error", r.Problems())
	}
}

func TestExecuteRunsAnAllowedCommandWithItsArguments(t *testing.T) {
	root := t.TempDir()
	sentinel := filepath.Join(root, "args")
	r, err := New(Options{
		Root:       root,
		Declared:   []Command{{Path: "db migrate", Argv: helperArgv(t, "touch", sentinel, "fixed")}},
		Allow:      []Rule{{Name: "db", Prefix: []string{"db"}}},
		MaxTimeout: time.Minute,
		Executor:   Executor{Env: helperEnvironment()},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background(), "db migrate", []string{"up", "--to=3"}, ExecuteOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(sentinel); string(got) != "fixed\x00up\x00--to=3" {
		t.Errorf("argv after the program = %q, want the catalog's then the call's", got)
	}
}

func TestExecuteAppliesTheTimeout(t *testing.T) {
	r, err := New(Options{
		Root:       t.TempDir(),
		Declared:   []Command{{Path: "wait", Argv: helperArgv(t, "sleep"), Timeout: 100 * time.Millisecond}},
		Allow:      []Rule{{Name: "wait", Prefix: []string{"wait"}}},
		MaxTimeout: time.Minute,
		Executor:   Executor{Env: helperEnvironment(), Grace: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background(), "wait", nil, ExecuteOptions{})
	if err != nil || !res.TimedOut {
		t.Errorf("Execute = %+v, %v; want a timeout from the catalog entry", res, err)
	}
}

func TestExecuteDistinguishesUnknownFromDenied(t *testing.T) {
	r, err := New(Options{Root: t.TempDir(), MaxTimeout: time.Minute,
		Declared: []Command{{Path: "test", Argv: []string{"go"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background(), "nope", nil, ExecuteOptions{}); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrDenied) {
		t.Errorf("unknown path: error %v, want ErrNotFound only", err)
	}
	_, err = r.Execute(context.Background(), "test", nil, ExecuteOptions{})
	var denied *DeniedError
	if !errors.As(err, &denied) || denied.Decision.Rule != RuleDefaultDeny {
		t.Errorf("unallowed path: error %v, want a DeniedError by default_deny", err)
	}
}

func TestLookupNormalizesLikeThePolicy(t *testing.T) {
	r, err := New(Options{Root: t.TempDir(), MaxTimeout: time.Minute,
		Declared: []Command{{Path: "db migrate", Argv: []string{"go"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("  db  migrate "); !ok {
		t.Error("ASCII spaces around and between tokens should not matter")
	}
	if _, ok := r.Lookup("db\u00a0migrate"); ok {
		t.Error("a no-break space must not act as a separator")
	}
}
