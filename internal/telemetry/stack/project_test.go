package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/telemetry"
)

func TestPathsLeavingTheProjectNeverResolve(t *testing.T) {
	outside := writeProject(t, map[string]string{"secret.go": "package secret\n", "x.ts": ""})
	dir := writeProject(t, map[string]string{
		"etc/passwd":           "root:x:0:0\n",
		"src/cart/checkout.ts": "",
	})
	for link, target := range map[string]string{
		"linked":           outside,
		"src/alias.ts":     filepath.Join(outside, "x.ts"),
		"src/cart/loop.ts": filepath.Join(dir, "src", "cart", "checkout.ts"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	p := openProject(t, dir, Options{})
	if got := p.Stats().Symlinks; got != 3 {
		t.Errorf("symlinks counted = %d, want 3", got)
	}
	cases := []struct {
		name string
		file string
	}{
		{"a relative path climbing out of its folder", "../../etc/passwd"},
		{"a relative path climbing out after a folder", "src/../../../etc/passwd"},
		{"a folder linked out of the project", "linked/secret.go"},
		{"a container path through a folder linked out of the project", "/app/linked/secret.go"},
		{"a file linked out of the project", "src/alias.ts"},
		{"a file linked to another project file", "/app/src/cart/loop.ts"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" does not resolve", func(t *testing.T) {
			tr := p.ResolveAttributes(map[string]string{"code.file.path": tc.file, "code.line.number": "1"})
			if tr.Location != nil {
				t.Fatalf("location = %v for %q", tr.Location, tc.file)
			}
			if len(tr.Frames) != 1 || tr.Frames[0].InProject || strings.Contains(tr.Frames[0].File, "/") {
				t.Fatalf("frames = %+v, want one frame outside the project shown by base name at most", tr.Frames)
			}
			s := p.Snippet(Location{File: tc.file, Line: 1}, 0, strings.TrimSpace)
			if s.OK() {
				t.Fatalf("snippet of %q was read: %+v", tc.file, s.Lines)
			}
		})
	}
	t.Run("an absolute path naming the project's own file resolves to it", func(t *testing.T) {
		tr := p.ResolveAttributes(map[string]string{"code.filepath": "/app/../etc/passwd", "code.lineno": "1"})
		if tr.Location == nil || tr.Location.File != "etc/passwd" {
			t.Fatalf("location = %v, want the project's etc/passwd", tr.Location)
		}
	})
}

func TestATenThousandFrameTraceIsBounded(t *testing.T) {
	p := newProject(t, shopFiles)
	const n = 10_000
	build := func(head string, frame func(i int) string, tail string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			b.WriteString(frame(i))
		}
		b.WriteString(tail)
		return b.String()
	}
	cases := []struct {
		name, trace, location string
	}{
		{
			name: "go",
			trace: build("goroutine 1 [running]:\n", func(i int) string {
				if i == 0 {
					return "github.com/shop/app/internal/a.Load(...)\n\t/app/internal/a/b.go:20\n"
				}
				return fmt.Sprintf("main.recurse(0x%x)\n\t/app/cmd/shop/main.go:%d +0x1d\n", i, i)
			}, ""),
			location: "internal/a/b.go:20 in a.Load",
		},
		{
			name: "python, innermost last",
			trace: build("Traceback (most recent call last):\n", func(i int) string {
				if i == n-1 {
					return "  File \"/app/shop/cart.py\", line 12, in total\n"
				}
				return fmt.Sprintf("  File \"/app/shop/api.py\", line %d, in recurse\n    recurse()\n", i+1)
			}, "RecursionError: maximum recursion depth exceeded\n"),
			location: "shop/cart.py:12 in total",
		},
		{
			name: "v8",
			trace: build("RangeError: Maximum call stack size exceeded\n", func(i int) string {
				if i == 0 {
					return "    at applyDiscount (/app/src/cart/checkout.ts:45:7)\n"
				}
				return "    at recurse (/app/src/server.ts:3:9)\n"
			}, ""),
			location: "src/cart/checkout.ts:45 in applyDiscount",
		},
		{
			name: "jvm",
			trace: build("java.lang.StackOverflowError\n", func(i int) string {
				if i == 0 {
					return "\tat com.shop.Cart.apply(Cart.java:45)\n"
				}
				return "\tat com.shop.Api.recurse(Api.java:9)\n"
			}, ""),
			location: "src/main/java/com/shop/Cart.java:45 in com.shop.Cart.apply",
		},
		{
			name: "dotnet",
			trace: build("System.StackOverflowException\n", func(i int) string {
				if i == 0 {
					return "   at Shop.Cart.Apply(Int32 qty) in /src/Shop/Cart.cs:line 45\n"
				}
				return "   at Shop.Api.Recurse() in /src/Shop/Api.cs:line 9\n"
			}, ""),
			location: "src/Shop/Cart.cs:45 in Shop.Cart.Apply",
		},
	}
	for _, tc := range cases {
		t.Run("a "+tc.name+" trace keeps the innermost frames and counts the rest", func(t *testing.T) {
			tr := p.Resolve(tc.trace)
			if len(tr.Frames) != DefaultMaxFrames || tr.Omitted != n-DefaultMaxFrames {
				t.Fatalf("kept %d frames and omitted %d, want %d and %d", len(tr.Frames), tr.Omitted, DefaultMaxFrames, n-DefaultMaxFrames)
			}
			if tr.Location == nil || tr.Location.String() != tc.location {
				t.Fatalf("location = %v, want %s", tr.Location, tc.location)
			}
		})
	}
	t.Run("python's folded recursion counts the frames it folded", func(t *testing.T) {
		tr := p.Resolve("Traceback (most recent call last):\n" +
			"  File \"/app/shop/api.py\", line 3, in recurse\n" +
			"    recurse()\n" +
			"  [Previous line repeated 996 more times]\n" +
			"  File \"/app/shop/cart.py\", line 12, in total\n" +
			"RecursionError: maximum recursion depth exceeded\n")
		if len(tr.Frames) != 2 || tr.Omitted != 996 {
			t.Fatalf("kept %d frames, omitted %d; want 2 and 996", len(tr.Frames), tr.Omitted)
		}
	})
	t.Run("a trace past the read bound is cut and says so", func(t *testing.T) {
		line := "    at recurse (/app/src/server.ts:3:9)\n"
		tr := p.Resolve("Error: x\n" + strings.Repeat(line, (maxTraceBytes/len(line))+10))
		if !tr.Cut || len(tr.Frames) != DefaultMaxFrames {
			t.Fatalf("cut = %v with %d frames, want a cut trace of %d frames", tr.Cut, len(tr.Frames), DefaultMaxFrames)
		}
	})
	t.Run("a configured frame bound is kept", func(t *testing.T) {
		small := openProject(t, writeProject(t, map[string]string{"src/server.ts": ""}), Options{MaxFrames: 3})
		tr := small.Resolve(cases[2].trace)
		if len(tr.Frames) != 3 || tr.Omitted != n-3 {
			t.Fatalf("kept %d, omitted %d; want 3 and %d", len(tr.Frames), tr.Omitted, n-3)
		}
	})
}

func BenchmarkResolveTenThousandFrames(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "server.ts"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := Open(context.Background(), dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	trace := "Error: x\n" + strings.Repeat("    at recurse (/app/src/server.ts:3:9)\n", 10_000)
	b.SetBytes(int64(len(trace)))
	for b.Loop() {
		p.Resolve(trace)
	}
}

func TestAnOpenTelemetryGoStackCutByItsBufferDropsTheCutLine(t *testing.T) {
	p := newProject(t, shopFiles)
	// The SDK hands runtime.Stack a 2048-byte buffer: build a trace that fills it exactly and
	// ends inside a file line, "…/b.go:1" of what was "…/b.go:123 +0x1d".
	var b strings.Builder
	b.WriteString("goroutine 1 [running]:\n")
	k := 0
	for ; b.Len() < otelGoStackBytes-200; k++ {
		fmt.Fprintf(&b, "github.com/shop/app/internal/a.Load%d(...)\n\t/app/internal/a/b.go:%d +0x1d\n", k, 100+k)
	}
	cutLine := "\t/app/internal/a/b.go:1"
	pad := otelGoStackBytes - b.Len() - len("main.pad()\n") - len(cutLine)
	fmt.Fprintf(&b, "main.pad%s()\n%s", strings.Repeat("x", pad), cutLine)
	trace := b.String()
	if len(trace) != otelGoStackBytes {
		t.Fatalf("built %d bytes, want %d", len(trace), otelGoStackBytes)
	}
	tr := p.Resolve(trace)
	if len(tr.Frames) != k {
		t.Fatalf("kept %d frames, want the %d whole ones:%s", len(tr.Frames), k, frameStrings(tr.Frames))
	}
	for _, f := range tr.Frames {
		if f.Line < 100 || strings.HasPrefix(f.Function, "main.pad") {
			t.Errorf("frame %v comes from the cut end of the buffer", f)
		}
	}
	// The same frame, whole and ended, is read.
	whole := p.Resolve(trace + "23 +0x1d\n")
	if len(whole.Frames) != k+1 || whole.Frames[k].Line != 123 {
		t.Errorf("the whole trace kept %d frames (last %v), want %d ending at line 123", len(whole.Frames), whole.Frames[len(whole.Frames)-1], k+1)
	}
}

func TestTheIndexIsBoundedAndSaysSo(t *testing.T) {
	files := map[string]string{
		".git/config":              "[remote]\n",
		"node_modules/x/index.js":  "",
		"vendor/github.com/a/b.go": "",
		".env":                     "TOKEN=1\n",
		"keys/deploy.pem":          "",
	}
	for i := range 30 {
		files[fmt.Sprintf("src/f%02d.go", i)] = ""
	}
	dir := writeProject(t, files)
	all := openProject(t, dir, Options{})
	st := all.Stats()
	if st.Files != 30 || st.Truncated || st.PrunedDirs != 3 || st.SecretFiles != 2 {
		t.Fatalf("stats = %+v, want 30 files, 3 pruned folders, 2 secret files, not truncated", st)
	}
	if tr := all.ResolveAttributes(map[string]string{"code.file.path": "/app/.env"}); tr.Location != nil {
		t.Errorf("a secret file resolved as a location: %v", tr.Location)
	}
	capped := openProject(t, dir, Options{MaxFiles: 10})
	if st := capped.Stats(); st.Files != 10 || !st.Truncated {
		t.Fatalf("capped stats = %+v, want 10 files and truncated", st)
	}
	// The walk is in name order, so which files are indexed does not depend on the file system.
	if tr := capped.ResolveAttributes(map[string]string{"code.file.path": "src/f09.go"}); tr.Location == nil {
		t.Errorf("src/f09.go, within the first ten by name, is not indexed")
	}
	if tr := capped.ResolveAttributes(map[string]string{"code.file.path": "src/f10.go"}); tr.Location != nil {
		t.Errorf("src/f10.go, beyond the bound, resolved")
	}
}

func TestCodeAttributesGiveALocation(t *testing.T) {
	p := newProject(t, shopFiles)
	cases := []struct {
		name  string
		attrs map[string]string
		want  string
		col   int
	}{
		{
			name:  "stable code attributes from a container path",
			attrs: map[string]string{"code.file.path": "/app/src/cart/checkout.ts", "code.line.number": "45", "code.column.number": "7", "code.function.name": "applyDiscount"},
			want:  "src/cart/checkout.ts:45 in applyDiscount",
			col:   7,
		},
		{
			name:  "legacy code attributes join namespace and function",
			attrs: map[string]string{"code.filepath": "/src/Shop/Cart.cs", "code.lineno": "45", "code.namespace": "Shop.Cart", "code.function": "Apply"},
			want:  "src/Shop/Cart.cs:45 in Shop.Cart.Apply",
		},
		{
			name: "an exception stack wins over the code location",
			attrs: map[string]string{
				"exception.stacktrace": "Error: x\n    at applyDiscount (/app/src/cart/checkout.ts:45:7)\n",
				"code.file.path":       "/app/src/server.ts", "code.line.number": "3",
			},
			want: "src/cart/checkout.ts:45 in applyDiscount",
			col:  7,
		},
		{
			name: "the code location stands in when the stack has no project frame",
			attrs: map[string]string{
				"code.stacktrace":  "Error: x\n    at f (node:internal/errors:1:1)\n",
				"code.file.path":   "/app/src/server.ts",
				"code.line.number": "3",
			},
			want: "src/server.ts:3",
		},
		{
			name:  "a line number that is not a number is left out",
			attrs: map[string]string{"code.file.path": "src/server.ts", "code.line.number": "three"},
			want:  "src/server.ts",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := p.ResolveAttributes(tc.attrs)
			if tr.Location == nil || tr.Location.String() != tc.want || tr.Location.Column != tc.col {
				t.Fatalf("location = %+v, want %s column %d", tr.Location, tc.want, tc.col)
			}
		})
	}
}

func TestResolveSpanReadsTheLastExceptionEvent(t *testing.T) {
	p := newProject(t, shopFiles)
	span := telemetry.SpanRow{
		Attributes: map[string]string{"code.file.path": "/app/src/server.ts", "code.line.number": "3"},
		Events: []telemetry.SpanEvent{
			{Name: "exception", Attributes: map[string]string{"exception.stacktrace": "Error: retry 1\n    at first (/app/src/server.ts:10:1)\n"}},
			{Name: "exception", Attributes: map[string]string{"exception.stacktrace": "Error: final\n    at applyDiscount (/app/src/cart/checkout.ts:45:7)\n"}},
			{Name: "log", Attributes: map[string]string{"exception.stacktrace": "Error: not an exception event\n    at other (/app/src/server.ts:99:1)\n"}},
		},
	}
	if tr := p.ResolveSpan(&span); tr.Location == nil || tr.Location.String() != "src/cart/checkout.ts:45 in applyDiscount" {
		t.Fatalf("location = %v, want the last exception event's", tr.Location)
	}
	span.Events = nil
	if tr := p.ResolveSpan(&span); tr.Format != FormatCode || tr.Location == nil || tr.Location.String() != "src/server.ts:3" {
		t.Fatalf("without events: %+v, want the code attributes' location", tr)
	}
}

func TestTopPutsProjectFramesFirstAndKeepsTheirDepth(t *testing.T) {
	p := newProject(t, shopFiles)
	tr := p.Resolve("Error: x\n" +
		"    at a (/app/node_modules/lib/a.js:1:1)\n" +
		"    at applyDiscount (/app/src/cart/checkout.ts:45:7)\n" +
		"    at b (/app/node_modules/lib/b.js:2:2)\n" +
		"    at handler (/app/src/server.ts:12:3)\n")
	top := tr.Top(3)
	got := []string{}
	for _, f := range top {
		got = append(got, fmt.Sprintf("%d %s", f.Depth, f))
	}
	want := []string{"1 src/cart/checkout.ts:45 in applyDiscount", "3 src/server.ts:12 in handler", "0 lib/a.js:1 in a (lib)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Top(3) = %q, want %q", got, want)
	}
	if len(tr.Top(0)) != 0 || len(tr.Top(10)) != 4 {
		t.Errorf("Top(0) = %d frames, Top(10) = %d; want 0 and 4", len(tr.Top(0)), len(tr.Top(10)))
	}
}

func TestLocationReadsLikeAnEditorTarget(t *testing.T) {
	cases := []struct {
		loc  Location
		want string
	}{
		{Location{File: "src/cart/checkout.ts", Line: 45, Column: 7, Function: "applyDiscount"}, "src/cart/checkout.ts:45 in applyDiscount"},
		{Location{File: "src/server.ts", Line: 3}, "src/server.ts:3"},
		{Location{File: "src/server.ts"}, "src/server.ts"},
		{Location{Function: "main"}, "main"},
	}
	for _, tc := range cases {
		if got := tc.loc.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.loc, got, tc.want)
		}
	}
}

func TestOpenRefusesABadDenyPatternAndAMissingRoot(t *testing.T) {
	if _, err := Open(context.Background(), t.TempDir(), Options{Deny: []string{"src/[x"}}); err == nil || !strings.Contains(err.Error(), "deny") {
		t.Errorf("bad deny pattern: err = %v, want a deny list error", err)
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("a missing project root opened")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, t.TempDir(), Options{}); err == nil {
		t.Error("a cancelled context still indexed")
	}
}
