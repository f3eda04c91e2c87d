package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// fuzzSeeds are real-looking traces of every format plus malformed ones.
var fuzzSeeds = []string{
	"goroutine 1 [running]:\nmain.main()\n\t/app/cmd/shop/main.go:12 +0x25\n",
	"goroutine 1 [running]:\npanic({0x1, 0x2})\n\t/usr/local/go/src/runtime/panic.go:860 +0x13a\nmain.f(...)\n\t/app/internal/a/b.go:3\n",
	"Traceback (most recent call last):\n  File \"/app/shop/cart.py\", line 12, in total\nKeyError: 'x'\n",
	"Error: x\n    at applyDiscount (/app/src/cart/checkout.ts:45:7)\n    at async file:///app/src/server.ts:2:1\n",
	"Error: x\n    at eval (eval at a (eval at b (/app/src/server.ts:1:2), <anonymous>:1:1), <anonymous>:1:1)\n",
	"java.lang.X\n\tat com.shop.Cart.apply(Cart.java:45) ~[a.jar:1]\nCaused by: y\n\tat com.shop.Api.c(Api.java:2)\n\t... 1 more\n",
	"System.X: y\n ---> System.Z\n   at Shop.Cart.Apply(Int32 q) in /src/Shop/Cart.cs:line 45\n   --- End of inner exception stack trace ---\n",
	"  at Shop.Cart.Apply (System.Int32 q) [0x0000c] in /src/Shop/Cart.cs:45\n",
	"    at (((((((\n\tat x(\n  File \"\", line , in\ngoroutine  []:\n\t:\n",
	"    at f (file://%zz/app:1:1)\n    at g (C:\\:1:1)\n    at h (webpack://:1:1)\n",
	"\tat ..(.:1)\n   at .(x y) in :line 9999999999\n",
	"goroutine 1 [running]:\n" + strings.Repeat("f(\n", 100),
	"Traceback (most recent call last):\n  [Previous line repeated 99999999999 more times]\n",
	"\xff\xfe at f (\x00:1:1)\n",
}

// fataler is what checkInvariants needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkInvariants holds every trace to what callers rely on, whatever the input.
func checkInvariants(t fataler, p *Project, tr Trace) {
	t.Helper()
	if len(tr.Frames) > p.maxFrames {
		t.Fatalf("%d frames kept, bound %d", len(tr.Frames), p.maxFrames)
	}
	if tr.Omitted < 0 {
		t.Fatalf("omitted = %d", tr.Omitted)
	}
	var first *Frame
	for i := range tr.Frames {
		f := tr.Frames[i]
		if f.Depth != i {
			t.Fatalf("frame %d has depth %d", i, f.Depth)
		}
		if f.InProject {
			if !p.ix.has(f.File) {
				t.Fatalf("frame %d claims %q, which the project does not hold", i, f.File)
			}
			if first == nil {
				first = &tr.Frames[i]
			}
		} else if strings.HasPrefix(f.File, "/") || strings.Contains("/"+f.File+"/", "/../") {
			t.Fatalf("frame %d outside the project shows the path %q", i, f.File)
		}
		for _, s := range []string{f.File, f.Function, f.Module} {
			if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
				t.Fatalf("frame %d shows %q, not clean text", i, s)
			}
		}
		if f.Line < 0 || f.Column < 0 {
			t.Fatalf("frame %d has position %d:%d", i, f.Line, f.Column)
		}
	}
	switch {
	case first == nil && tr.Location != nil:
		t.Fatalf("location %v without an in-project frame", tr.Location)
	case first != nil && (tr.Location == nil || *tr.Location != first.Location()):
		t.Fatalf("location %v, want the innermost project frame %v", tr.Location, first)
	}
}

func fuzzProject(t testing.TB, dir string, opts Options) *Project {
	t.Helper()
	for rel := range shopFiles {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzResolve: no input panics, and every answer keeps the invariants. The seeds run in plain
// go test; go test -fuzz FuzzResolve explores further.
func FuzzResolve(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	p := fuzzProject(f, f.TempDir(), Options{MaxFrames: 16})
	f.Fuzz(func(t *testing.T, trace string) {
		checkInvariants(t, p, p.Resolve(trace))
		checkInvariants(t, p, p.ResolveAttributes(map[string]string{"code.file.path": trace, "code.line.number": "1"}))
	})
}

// genFrame is a frame a property test renders in some format and expects back.
type genFrame struct {
	proj bool
	line int
}

// render writes frames (innermost first) in format's own text.
func render(format Format, frames []genFrame) string {
	var b strings.Builder
	switch format {
	case FormatGo:
		b.WriteString("goroutine 1 [running]:\n")
		for i, f := range frames {
			if f.proj {
				fmt.Fprintf(&b, "github.com/shop/app/internal/a.F%d(0x%x, ...)\n\t/home/ci/x/internal/a/b.go:%d +0x1d\n", i, i, f.line)
			} else {
				fmt.Fprintf(&b, "github.com/x/y.G(...)\n\t/home/ci/go/pkg/mod/github.com/x/y@v1.0.0/z.go:%d\n", f.line)
			}
		}
	case FormatPython:
		b.WriteString("Traceback (most recent call last):\n")
		for i := len(frames) - 1; i >= 0; i-- {
			if frames[i].proj {
				fmt.Fprintf(&b, "  File \"/app/shop/cart.py\", line %d, in f\n    f()\n", frames[i].line)
			} else {
				fmt.Fprintf(&b, "  File \"/usr/lib/python3.12/site-packages/requests/api.py\", line %d, in get\n", frames[i].line)
			}
		}
		b.WriteString("ValueError: x\n")
	case FormatV8:
		b.WriteString("Error: x\n")
		for _, f := range frames {
			if f.proj {
				fmt.Fprintf(&b, "    at applyDiscount (/app/src/cart/checkout.ts:%d:7)\n", f.line)
			} else {
				fmt.Fprintf(&b, "    at async Object.map (/app/node_modules/lodash/index.js:%d:3)\n", f.line)
			}
		}
	case FormatJVM:
		b.WriteString("java.lang.IllegalStateException: x\n")
		for _, f := range frames {
			if f.proj {
				fmt.Fprintf(&b, "\tat com.shop.Cart.apply(Cart.java:%d)\n", f.line)
			} else {
				fmt.Fprintf(&b, "\tat org.lib.Util.run(Util.java:%d) ~[lib.jar:1.0]\n", f.line)
			}
		}
	case FormatDotNet:
		b.WriteString("System.Exception: x\n")
		for _, f := range frames {
			if f.proj {
				fmt.Fprintf(&b, "   at Shop.Cart.Apply(Int32 q) in /src/Shop/Cart.cs:line %d\n", f.line)
			} else {
				fmt.Fprintf(&b, "   at System.Linq.Enumerable.Select(Int32 x) in /_/src/libraries/Linq/Select.cs:line %d\n", f.line)
			}
		}
	}
	return b.String()
}

func TestResolveReadsBackWhatEachFormatWrote(t *testing.T) {
	const maxFrames = 50
	p := fuzzProject(t, t.TempDir(), Options{MaxFrames: maxFrames})
	formats := []Format{FormatGo, FormatPython, FormatV8, FormatJVM, FormatDotNet}
	rapid.Check(t, func(rt *rapid.T) {
		format := rapid.SampledFrom(formats).Draw(rt, "format")
		frames := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) genFrame {
			return genFrame{proj: rapid.Bool().Draw(rt, "proj"), line: rapid.IntRange(1, 99999).Draw(rt, "line")}
		}), 1, 3*maxFrames).Draw(rt, "frames")
		tr := p.Resolve(render(format, frames))
		checkInvariants(rt, p, tr)
		if tr.Format != format {
			rt.Fatalf("format = %q, want %q", tr.Format, format)
		}
		kept := min(len(frames), maxFrames)
		if len(tr.Frames) != kept || tr.Omitted != len(frames)-kept {
			rt.Fatalf("kept %d, omitted %d of %d frames; want %d kept", len(tr.Frames), tr.Omitted, len(frames), kept)
		}
		var want *genFrame
		for i := range kept {
			g, f := frames[i], tr.Frames[i]
			if f.InProject != g.proj || f.Line != g.line {
				rt.Fatalf("frame %d = %+v, want in project %v at line %d", i, f, g.proj, g.line)
			}
			if g.proj && want == nil {
				want = &frames[i]
			}
		}
		if (want == nil) != (tr.Location == nil) || want != nil && tr.Location.Line != want.line {
			rt.Fatalf("location = %v, want the first project frame %v", tr.Location, want)
		}
	})
}

// TestGarbageNeverPanicsOrBreaksTheInvariants mixes real frame lines of every format with
// random bytes, beyond what the seed corpus covers.
func TestGarbageNeverPanicsOrBreaksTheInvariants(t *testing.T) {
	p := fuzzProject(t, t.TempDir(), Options{MaxFrames: 16})
	pieces := append([]string{"\n", "\t", " ", "at ", "(", ")", ":", "/", "..", "File \"", "\", line ", ", in ",
		"goroutine 1 [running]:", "Caused by: ", "Suppressed: ", "[cause]: ", " in ", ":line ", " +0x", "node:", "file://",
		"node_modules/", "site-packages/", "pkg/mod/", "@v1", "--- End of inner exception stack trace ---", "panic(", "\x00", "\xff"}, fuzzSeeds...)
	rapid.Check(t, func(rt *rapid.T) {
		parts := rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom(pieces), rapid.String()), 0, 60).Draw(rt, "parts")
		checkInvariants(rt, p, p.Resolve(strings.Join(parts, "")))
	})
}
