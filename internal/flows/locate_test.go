package flows

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
	"github.com/runlens/runlens/internal/telemetry/stack"
)

// A failure recorded with a stack trace from a build in another folder is located in this
// workspace: get_recent_errors names the file and line, get_run's error span its frames, and
// its summary says where it failed; full detail shows the line itself.
func TestFailuresAreLocatedInTheWorkspace(t *testing.T) {
	root := t.TempDir()
	src := "package cart\n\nfunc Apply(total int) int {\n\treturn total / discount(total)\n}\n"
	if err := os.MkdirAll(filepath.Join(root, "internal", "cart"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "internal", "cart", "cart.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := "goroutine 7 [running]:\n" +
		"example.com/shop/internal/cart.Apply(0x0)\n\t/home/ci/build/shop/internal/cart/cart.go:4 +0x1d\n" +
		"net/http.HandlerFunc.ServeHTTP(0x0, {0x0, 0x0}, 0x0)\n\t/usr/local/go/src/net/http/server.go:2294 +0x29\n"
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	b := &memory.Backend{}
	tr := "4bf92f3577b34da6a3ce929d0e0e4736"
	b.AddSpans(
		telemetry.SpanRow{TraceID: tr, SpanID: "00f067aa0ba902b7", Name: "POST /cart", Kind: telemetry.KindServer, Service: "shop",
			StartNs: now.Add(-time.Minute).UnixNano(), DurationNs: 5e6, StatusCode: telemetry.CodeError},
		telemetry.SpanRow{TraceID: tr, SpanID: "53995c3f42cd8ad8", ParentSpanID: "00f067aa0ba902b7", Name: "apply discount", Service: "shop",
			StartNs: now.Add(-time.Minute).UnixNano() + 1e6, DurationNs: 1e6, StatusCode: telemetry.CodeError,
			Attributes: map[string]string{},
			Events: []telemetry.SpanEvent{{Name: "exception", Attributes: map[string]string{
				"exception.type": "runtime.Error", "exception.message": "integer divide by zero", "exception.stacktrace": trace}}}},
	)
	proj, err := stack.Open(context.Background(), root, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := New(Deps{Telemetry: engine.New(b, nil), Now: func() time.Time { return now },
		Stacks: func(context.Context) *stack.Project { return proj }})
	ctx := context.Background()
	errs, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(errs.Groups) != 1 || errs.Groups[0].Location == nil || *errs.Groups[0].Location != "internal/cart/cart.go:4 in cart.Apply" {
		t.Fatalf("groups %+v, want one located at internal/cart/cart.go:4", errs.Groups)
	}
	if errs.Groups[0].Snippet != nil {
		t.Fatal("a standard answer carries source")
	}
	full, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Detail: gen.DetailFull}))
	if err != nil {
		t.Fatal(err)
	}
	if s := full.Groups[0].Snippet; s == nil || *s != "4: \treturn total / discount(total)" {
		t.Fatalf("full snippet %v", s)
	}
	run, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: tr}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.Summary, "failed at internal/cart/cart.go:4 in cart.Apply") {
		t.Fatalf("summary %q does not say where it failed", run.Summary)
	}
	var located bool
	for _, s := range run.Spans {
		if s.Location != nil {
			located = true
			if len(s.Frames) == 0 || s.Frames[0] != "internal/cart/cart.go:4 in cart.Apply" || strings.Contains(strings.Join(s.Frames, " "), "/usr/local") {
				t.Fatalf("frames %v", s.Frames)
			}
		}
	}
	if !located {
		t.Fatalf("no span of %+v is located", run.Spans)
	}
}
