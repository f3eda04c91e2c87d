package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// repoProject opens the repository this test is in as the project, so real Go traces of the
// test binary resolve to its files.
func repoProject(t *testing.T) (*Project, string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found from the package folder: %v", err)
	}
	return openProject(t, dir, Options{}), dir
}

// machineFolders are folders of this machine no answer may show.
func machineFolders(t *testing.T, extra ...string) []string {
	t.Helper()
	home, _ := os.UserHomeDir()
	out := []string{home, os.TempDir()}
	env, err := exec.Command("go", "env", "GOROOT", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	out = append(out, strings.Fields(string(env))...)
	return append(out, extra...)
}

type panicLine int

//go:noinline
func applyDiscount(items []int) int {
	_, _, line, _ := runtime.Caller(0)
	if len(items) == 0 {
		panic(panicLine(line + 2))
	}
	return items[0]
}

// recoveredStack runs applyDiscount into a panic and returns debug.Stack() from the deferred
// recover, with the line the panic was raised on.
func recoveredStack() (stack string, line int) {
	defer func() {
		r := recover()
		line = int(r.(panicLine))
		stack = string(debug.Stack())
	}()
	applyDiscount(nil)
	return "", 0
}

func TestARealGoPanicRecoveredWithDebugStackLocatesThePanickingFunction(t *testing.T) {
	p, dir := repoProject(t)
	stack, line := recoveredStack()
	tr := p.Resolve(stack)
	if tr.Format != FormatGo {
		t.Fatalf("format = %q, want go; stack:\n%s", tr.Format, stack)
	}
	want := fmt.Sprintf("internal/telemetry/stack/real_test.go:%d in stack.applyDiscount", line)
	if tr.Location == nil || tr.Location.String() != want {
		t.Fatalf("location = %v, want %s; frames:%s", tr.Location, want, frameStrings(tr.Frames))
	}
	// The deferred recover and debug.Stack sat above the panic: machinery, not the failure.
	for _, f := range tr.Frames {
		if strings.Contains(f.Function, "recoveredStack.func") || f.Function == "debug.Stack" {
			t.Errorf("frame %q above the panic was kept", f)
		}
	}
	if tr.Frames[1].Location().String() == "" || tr.Frames[1].Function != "stack.recoveredStack" {
		t.Errorf("caller frame = %v, want stack.recoveredStack", tr.Frames[1])
	}
	last := tr.Frames[len(tr.Frames)-1]
	if last.InProject || last.Module != "testing" {
		t.Errorf("outermost frame = %+v, want the testing package, outside the project", last)
	}
	t.Logf("frames:%s", frameStrings(tr.Frames))
	assertNothingLeaks(t, tr, machineFolders(t, dir)...)
}

func TestARealOpenTelemetryGoSDKStackTraceLocatesTheRecordErrorCaller(t *testing.T) {
	p, dir := repoProject(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	_, span := tp.Tracer("test").Start(context.Background(), "checkout")
	_, _, line, _ := runtime.Caller(0)
	span.RecordError(errors.New("declined"), trace.WithStackTrace(true))
	span.End()

	ended := rec.Ended()
	if len(ended) != 1 || len(ended[0].Events()) != 1 {
		t.Fatalf("recorded %d spans; want one span with one exception event", len(ended))
	}
	ev := ended[0].Events()[0]
	row := telemetry.SpanRow{Name: "checkout", Events: []telemetry.SpanEvent{{Name: ev.Name, Attributes: attrs(ev.Attributes)}}}
	stack := row.Events[0].Attributes["exception.stacktrace"]
	if !strings.HasPrefix(stack, "goroutine ") {
		t.Fatalf("the SDK wrote no goroutine trace: %q", stack)
	}
	tr := p.ResolveSpan(&row)
	want := fmt.Sprintf("internal/telemetry/stack/real_test.go:%d in stack.TestARealOpenTelemetryGoSDKStackTraceLocatesTheRecordErrorCaller", line+1)
	if tr.Location == nil || tr.Location.String() != want {
		t.Fatalf("location = %v, want %s; frames:%s", tr.Location, want, frameStrings(tr.Frames))
	}
	sdk := tr.Frames[0]
	if sdk.InProject || sdk.Module != "go.opentelemetry.io/otel/sdk" || !strings.HasPrefix(sdk.File, "go.opentelemetry.io/otel/sdk@v") {
		t.Errorf("innermost frame = %+v, want the SDK named by its module and module-cache path", sdk)
	}
	t.Logf("frames:%s", frameStrings(tr.Frames))
	assertNothingLeaks(t, tr, machineFolders(t, dir)...)
}

func attrs(kvs []attribute.KeyValue) conventions.Attributes {
	out := conventions.Attributes{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func TestARealPythonTracebackWithAChainedCauseLocatesTheRootCauseInTheProject(t *testing.T) {
	python := requireTool(t, "python3")
	dir := writeProject(t, map[string]string{
		"shop/__init__.py": "",
		"shop/cart.py": `import json


def apply_discount(raw):
    try:
        return json.loads(raw)["pct"]
    except ValueError as e:
        raise RuntimeError("discount unreadable") from e
`,
	})
	script := "import sys, traceback\nsys.path.insert(0, sys.argv[1])\nfrom shop import cart\n" +
		"try:\n    cart.apply_discount('{')\nexcept Exception:\n    print(traceback.format_exc())\n"
	out, err := exec.Command(python, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	p := openProject(t, dir, Options{})
	tr := p.Resolve(string(out))
	if tr.Format != FormatPython {
		t.Fatalf("format = %q; traceback:\n%s", tr.Format, out)
	}
	if tr.Location == nil || tr.Location.String() != "shop/cart.py:6 in apply_discount" {
		t.Fatalf("location = %v, want the root cause shop/cart.py:6; frames:%s\n%s", tr.Location, frameStrings(tr.Frames), out)
	}
	// The root cause's innermost frames are the json package's, named by module.
	if f := tr.Frames[0]; f.InProject || f.Module != "json" || !strings.HasPrefix(f.File, "json/") {
		t.Errorf("innermost frame = %+v, want the json package", f)
	}
	// The enclosing exception's frames follow: the raise on line 8, then the caller.
	var raise, module bool
	for _, f := range tr.Frames {
		raise = raise || (f.InProject && f.Line == 8 && f.Function == "apply_discount")
		module = module || (f.Function == "<module>" && f.File == "<string>")
	}
	if !raise || !module {
		t.Errorf("the enclosing exception's frames are missing (raise %v, <string> caller %v):%s", raise, module, frameStrings(tr.Frames))
	}
	t.Logf("frames:%s", frameStrings(tr.Frames))
	assertNothingLeaks(t, tr, machineFolders(t, dir)...)
}

func TestARealNodeErrorStackLocatesTheThrowingFunction(t *testing.T) {
	node := requireTool(t, "node")
	dir := writeProject(t, map[string]string{
		"src/cart/checkout.js": "function applyDiscount(cart) {\n" +
			"  if (!cart.discount) {\n" +
			"    throw new Error('no discount');\n" +
			"  }\n" +
			"}\n" +
			"module.exports = { applyDiscount };\n",
		"src/cart/total.mjs": "export async function total() {\n  await null;\n  throw new TypeError('no total');\n}\n",
	})
	p := openProject(t, dir, Options{})

	cjs := "const { applyDiscount } = require(process.argv[1]); try { applyDiscount({}) } catch (e) { console.log(e.stack) }"
	out, err := exec.Command(node, "-e", cjs, filepath.Join(dir, "src", "cart", "checkout.js")).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	tr := p.Resolve(string(out))
	if tr.Format != FormatV8 || tr.Location == nil || tr.Location.String() != "src/cart/checkout.js:3 in applyDiscount" {
		t.Fatalf("location = %v (format %q), want src/cart/checkout.js:3 in applyDiscount; frames:%s\n%s", tr.Location, tr.Format, frameStrings(tr.Frames), out)
	}
	if tr.Location.Column != 11 {
		t.Errorf("column = %d, want 11", tr.Location.Column)
	}
	var internal bool
	for _, f := range tr.Frames {
		internal = internal || (f.Module == "node" && strings.HasPrefix(f.File, "node:internal/"))
	}
	if !internal {
		t.Errorf("no node:internal frame named by module:%s", frameStrings(tr.Frames))
	}
	t.Logf("frames:%s", frameStrings(tr.Frames))
	assertNothingLeaks(t, tr, machineFolders(t, dir)...)

	// An ES module's frames are file:// URLs, and an awaited throw is an async frame.
	esm := "import(require('url').pathToFileURL(process.argv[1])).then(({ total }) => total()).catch(e => console.log(e.stack))"
	out, err = exec.Command(node, "-e", esm, filepath.Join(dir, "src", "cart", "total.mjs")).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "file://") {
		t.Fatalf("the ES module trace has no file:// URL:\n%s", out)
	}
	tr = p.Resolve(string(out))
	if tr.Location == nil || tr.Location.String() != "src/cart/total.mjs:3 in total" {
		t.Fatalf("location = %v, want src/cart/total.mjs:3 in total; frames:%s\n%s", tr.Location, frameStrings(tr.Frames), out)
	}
	t.Logf("frames:%s", frameStrings(tr.Frames))
	assertNothingLeaks(t, tr, machineFolders(t, dir)...)
}

func TestARealJavaStackTraceWithACauseLocatesTheRootCauseByPackage(t *testing.T) {
	java := requireTool(t, "java")
	src := "package com.shop;\n\n" +
		"public class Cart {\n" +
		"    static int apply(int qty) {\n" +
		"        return 100 / qty;\n" +
		"    }\n\n" +
		"    public static void main(String[] args) {\n" +
		"        try {\n" +
		"            try {\n" +
		"                apply(0);\n" +
		"            } catch (ArithmeticException e) {\n" +
		"                throw new IllegalStateException(\"checkout failed\", e);\n" +
		"            }\n" +
		"        } catch (IllegalStateException e) {\n" +
		"            e.printStackTrace(System.out);\n" +
		"        }\n" +
		"    }\n" +
		"}\n"
	dir := writeProject(t, map[string]string{"src/main/java/com/shop/Cart.java": src})
	out, err := exec.Command(java, filepath.Join(dir, "src", "main", "java", "com", "shop", "Cart.java")).CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	p := openProject(t, dir, Options{})
	tr := p.Resolve(string(out))
	if tr.Format != FormatJVM || tr.Location == nil || tr.Location.String() != "src/main/java/com/shop/Cart.java:5 in com.shop.Cart.apply" {
		t.Fatalf("location = %v (format %q), want the root cause Cart.java:5; frames:%s\n%s", tr.Location, tr.Format, frameStrings(tr.Frames), out)
	}
	var wrap bool
	for _, f := range tr.Frames {
		wrap = wrap || (f.InProject && f.Line == 13)
	}
	if !wrap {
		t.Errorf("the enclosing exception's frame (line 13) is missing:%s", frameStrings(tr.Frames))
	}
	t.Logf("frames:%s", frameStrings(tr.Frames))
	assertNothingLeaks(t, tr, machineFolders(t, dir)...)
}
