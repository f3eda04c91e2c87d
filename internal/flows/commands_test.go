package flows

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/callctx"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/toolerr"
)

// sh is a test fixture's catalog argv: runlens itself never runs a shell.
func sh(script string) []string { return []string{"/bin/sh", "-c", script, "sh"} }

// commandFlows returns flows over a catalog of shell fixtures in a fresh project folder.
func commandFlows(t *testing.T, extra ...commands.Command) (*Flows, string) {
	t.Helper()
	root := t.TempDir()
	declared := append([]commands.Command{
		{Path: "build", Argv: sh(`echo building "$@"`), Description: "Build it.", Usage: "build [target]"},
		{Path: "db migrate", Argv: sh(`echo migrated`), Description: "Migrate."},
		{Path: "db reset", Argv: sh(`touch reset-ran`), Description: "Drop everything."},
		{Path: "fail", Argv: sh(`echo about to fail >&2; exit 3`)},
		{Path: "leak", Argv: sh(`echo "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789"; printf 'bad \377 byte\n'`)},
		{Path: "slow", Argv: sh(`sleep 0.4; echo done`)},
		{Path: "hang", Argv: sh(`sleep 30`)},
		{Path: "missing", Argv: []string{"./bin/does-not-exist"}},
		{Path: "test", Argv: sh(`echo "args:$#:$1"`)},
	}, extra...)
	r, err := commands.New(commands.Options{
		Root:     root,
		Declared: declared,
		Allow: []commands.Rule{
			{Name: "build", Prefix: []string{"build"}},
			{Name: "db", Prefix: []string{"db"}},
			{Name: "runnable", Prefix: []string{"fail"}},
			{Name: "leak", Prefix: []string{"leak"}},
			{Name: "slow", Prefix: []string{"slow"}},
			{Name: "hang", Prefix: []string{"hang"}},
			{Name: "missing", Prefix: []string{"missing"}},
		},
		Deny:           []commands.Rule{{Name: "no-db-reset", Prefix: []string{"db", "reset"}}},
		DefaultTimeout: time.Second,
		MaxTimeout:     1500 * time.Millisecond,
		Executor:       commands.Executor{Grace: 100 * time.Millisecond, ProgressEvery: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	return New(Deps{Commands: r, Redactor: shape.NewRedactor(shape.RedactorOptions{})}), root
}

func TestListCommandsShowsThePolicyVerdict(t *testing.T) {
	f, _ := commandFlows(t)
	out, err := f.ListCommands(context.Background(), defaults(gen.ListCommandsInput{}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gen.ListCommandsOutputCommand{}
	for _, c := range out.Commands {
		got[c.Path] = c
	}
	want := map[string]struct {
		allowed bool
		rule    string
	}{
		"build":      {true, "build"},
		"db migrate": {true, "db"},
		"db reset":   {false, "no-db-reset"},
		"test":       {false, commands.RuleDefaultDeny},
	}
	for path, w := range want {
		c, ok := got[path]
		if !ok || c.Allowed != w.allowed || c.Rule != w.rule {
			t.Errorf("%s = %+v, want allowed=%v rule=%s", path, c, w.allowed, w.rule)
		}
	}
	if got["build"].Usage != "build [target]" || got["db migrate"].Usage != "db migrate" {
		t.Errorf("usage: build %q, db migrate %q; want the declared one, else the path", got["build"].Usage, got["db migrate"].Usage)
	}
	if out.Count != 9 || out.Page.Returned != 9 || *out.Page.Total != 9 || out.Page.NextCursor != nil {
		t.Errorf("count %d page %+v, want all 9 on one page", out.Count, out.Page)
	}
}

func TestListCommandsPagesWithCursors(t *testing.T) {
	f, _ := commandFlows(t)
	ctx := context.Background()
	in := defaults(gen.ListCommandsInput{Limit: 4})
	var paths []string
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		out, err := f.ListCommands(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out.Commands {
			paths = append(paths, c.Path)
		}
		if out.Page.NextCursor == nil {
			break
		}
		in.Cursor = out.Page.NextCursor
	}
	want := "build,db migrate,db reset,fail,hang,leak,missing,slow,test"
	if strings.Join(paths, ",") != want {
		t.Errorf("pages gave %q, want every command once in path order", paths)
	}
}

func TestListCommandsCursorsFailClosed(t *testing.T) {
	f, root := commandFlows(t)
	ctx := context.Background()
	first, err := f.ListCommands(ctx, defaults(gen.ListCommandsInput{Limit: 2}))
	if err != nil || first.Page.NextCursor == nil {
		t.Fatalf("first page: %+v, %v", first.Page, err)
	}
	cursor := first.Page.NextCursor

	t.Run("with other arguments", func(t *testing.T) {
		_, err := f.ListCommands(ctx, defaults(gen.ListCommandsInput{Limit: 2, Cursor: cursor, Filter: ptr("db")}))
		wantCode(t, err, gen.ErrorCodeCursorInvalid)
	})
	t.Run("forged", func(t *testing.T) {
		_, err := f.ListCommands(ctx, defaults(gen.ListCommandsInput{Limit: 2, Cursor: ptr(*cursor + "x")}))
		wantCode(t, err, gen.ErrorCodeCursorInvalid)
	})
	t.Run("after the catalog changed", func(t *testing.T) {
		r, err := commands.New(commands.Options{Root: root, DiscoverMakefile: true, MaxTimeout: time.Second,
			Declared: []commands.Command{{Path: "a", Argv: []string{"x"}}, {Path: "b", Argv: []string{"x"}}, {Path: "c", Argv: []string{"x"}}}})
		if err != nil {
			t.Fatal(err)
		}
		g := New(Deps{Commands: r})
		page, err := g.ListCommands(ctx, defaults(gen.ListCommandsInput{Limit: 1}))
		if err != nil || page.Page.NextCursor == nil {
			t.Fatalf("first page: %+v, %v", page.Page, err)
		}
		if err := os.WriteFile(filepath.Join(root, "Makefile"), []byte("aa:\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = g.ListCommands(ctx, defaults(gen.ListCommandsInput{Limit: 1, Cursor: page.Page.NextCursor}))
		wantCode(t, err, gen.ErrorCodeCursorInvalid)
	})
}

func TestListCommandsFilterAndSummary(t *testing.T) {
	f, _ := commandFlows(t)
	ctx := context.Background()
	out, err := f.ListCommands(ctx, defaults(gen.ListCommandsInput{Filter: ptr("DB")}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 2 || out.Commands[0].Path != "db migrate" || out.Commands[1].Path != "db reset" {
		t.Errorf("filter DB gave %+v, want the two db commands", out.Commands)
	}
	sum, err := f.ListCommands(ctx, defaults(gen.ListCommandsInput{Detail: gen.DetailSummary}))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Commands) != 0 || sum.Count != 0 || *sum.Page.Total != 9 || !sum.Page.Truncated {
		t.Errorf("summary = %+v, want the total and no commands", sum)
	}
}

func TestExecuteCommandRunsAnAllowedCommand(t *testing.T) {
	f, _ := commandFlows(t)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "build", Args: []string{"web; rm -rf /", "$(id)"}}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != gen.ExecuteCommandOutputStatusPass || out.ExitCode != 0 || out.OutputTail != "building web; rm -rf / $(id)\n" {
		t.Errorf("got %+v, want pass with the arguments echoed literally", out)
	}
	if out.DurationMs <= 0 || out.TimedOut || out.Cancelled || out.Truncated {
		t.Errorf("got %+v", out)
	}
}

func TestExecuteCommandReportsAFailure(t *testing.T) {
	f, _ := commandFlows(t)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "fail"}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != gen.ExecuteCommandOutputStatusFail || out.ExitCode != 3 || out.OutputTail != "about to fail\n" {
		t.Errorf("got %+v, want fail, exit 3 and the stderr line", out)
	}
}

func TestExecuteCommandRedactsAndRepairsOutput(t *testing.T) {
	f, _ := commandFlows(t)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "leak"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.OutputTail, "abcdefghijklmnopqrstuvwxyz0123456789") || !strings.Contains(out.OutputTail, shape.Redacted) {
		t.Errorf("output tail %q still holds the bearer token", out.OutputTail)
	}
	if !strings.Contains(out.OutputTail, "bad \uFFFD byte") {
		t.Errorf("output tail %q: invalid UTF-8 was not replaced", out.OutputTail)
	}
	if _, err := json.Marshal(out); err != nil {
		t.Errorf("answer does not encode: %v", err)
	}
}

func TestExecuteCommandSummaryLeavesOutTheOutput(t *testing.T) {
	f, _ := commandFlows(t)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "build", Detail: gen.DetailSummary}))
	if err != nil {
		t.Fatal(err)
	}
	if out.OutputTail != "" || !out.Truncated || out.Status != gen.ExecuteCommandOutputStatusPass {
		t.Errorf("summary = %+v, want the verdict without output, marked truncated", out)
	}
}

func TestExecuteCommandDeniedStartsNothing(t *testing.T) {
	f, root := commandFlows(t)
	_, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "db reset"}))
	wantCode(t, err, gen.ErrorCodeCommandDenied)
	te, _ := toolerr.As(err)
	if !strings.Contains(te.Message, "no-db-reset") || te.HintText() == "" {
		t.Errorf("error %+v does not name the rule or say what to do", te)
	}
	if _, err := os.Stat(filepath.Join(root, "reset-ran")); err == nil {
		t.Error("a denied command ran")
	}
	_, err = f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "db", Args: []string{"reset"}}))
	wantCode(t, err, gen.ErrorCodeCommandNotFound)
	_, err = f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "test"}))
	wantCode(t, err, gen.ErrorCodeCommandDenied)
	if te, _ := toolerr.As(err); !strings.Contains(te.Message, commands.RuleDefaultDeny) {
		t.Errorf("message %q does not name default_deny", te.Message)
	}
}

func TestExecuteCommandUnknownSuggestsKnownCommands(t *testing.T) {
	f, _ := commandFlows(t)
	_, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "db seed"}))
	wantCode(t, err, gen.ErrorCodeCommandNotFound)
	te, _ := toolerr.As(err)
	if strings.Join(te.Choices, ",") != "db migrate,db reset" {
		t.Errorf("choices = %q, want the db commands", te.Choices)
	}
	_, err = f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "zzz"}))
	te, _ = toolerr.As(err)
	if len(te.Choices) == 0 || len(te.Choices) > maxCommandChoices {
		t.Errorf("choices = %q, want a bounded list of known commands", te.Choices)
	}
}

func TestExecuteCommandThatCannotStartFails(t *testing.T) {
	f, _ := commandFlows(t)
	_, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "missing"}))
	wantCode(t, err, gen.ErrorCodeCommandFailed)
}

func TestExecuteCommandTimeoutIsCappedByConfiguration(t *testing.T) {
	f, _ := commandFlows(t)
	start := time.Now()
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "hang", TimeoutMs: ptr(3_600_000)}))
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || out.Status != gen.ExecuteCommandOutputStatusFail || out.ExitCode != -1 {
		t.Errorf("got %+v, want a timeout", out)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("an hour-long request ran %v; the configured 1.5s maximum should have capped it", took)
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("the command stopped after %v, before the 1.5s maximum it should have been given", took)
	}
}

func TestExecuteCommandReportsProgress(t *testing.T) {
	f, _ := commandFlows(t)
	var mu sync.Mutex
	var progress, totals []float64
	ctx := callctx.WithProgress(context.Background(), func(p, total float64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p)
		totals = append(totals, total)
	})
	out, err := f.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "slow"}))
	if err != nil || out.Status != gen.ExecuteCommandOutputStatusPass {
		t.Fatalf("got %+v, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 3 {
		t.Fatalf("%d progress notifications during a 400ms command, want several", len(progress))
	}
	for i := range progress {
		if (i > 0 && progress[i] <= progress[i-1]) || totals[i] != 1 {
			t.Fatalf("progress %v totals %v: want increasing values out of the 1s default timeout", progress, totals)
		}
	}
}

func TestExecuteCommandCancellationStopsTheCommand(t *testing.T) {
	f, _ := commandFlows(t)
	ctx, cancel := context.WithCancel(context.Background())
	ctx = callctx.WithProgress(ctx, func(float64, float64, string) { cancel() }) // cancel once it runs
	start := time.Now()
	out, err := f.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "hang"}))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Cancelled || out.Status != gen.ExecuteCommandOutputStatusFail {
		t.Errorf("got %+v, want cancelled", out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancellation took %v", took)
	}
}
