package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// funcHandler is a handler made of one tool list and one function, for tests that need a
// behaviour the fake handler does not have.
type funcHandler struct {
	tools []ToolInfo
	call  func(context.Context, CallRequest) (CallResult, error)
}

func (h funcHandler) Tools() []ToolInfo { return h.tools }
func (h funcHandler) CallTool(ctx context.Context, req CallRequest) (CallResult, error) {
	return h.call(ctx, req)
}

func oneTool(call func(context.Context, CallRequest) (CallResult, error)) funcHandler {
	return funcHandler{tools: []ToolInfo{{Name: "t", Description: "A test tool."}}, call: call}
}

// liveServe runs Serve on a pipe, so a test can feed lines and watch the answers.
type liveServe struct {
	feed   *io.PipeWriter
	out    *frameRecorder
	done   chan error
	cancel context.CancelFunc
}

func startServe(t *testing.T, h Handler, opts Options) *liveServe {
	t.Helper()
	in, feed := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	ls := &liveServe{feed: feed, out: newFrameRecorder(), done: make(chan error, 1), cancel: cancel}
	go func() { ls.done <- NewServer(h, opts).Serve(ctx, in, ls.out) }()
	t.Cleanup(func() { cancel(); feed.Close() })
	return ls
}

func (ls *liveServe) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if _, err := io.WriteString(ls.feed, line+"\n"); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
}

func (ls *liveServe) waitLines(t *testing.T, n int) []string {
	t.Helper()
	if !ls.out.waitLines(n, waitDeadline) {
		t.Fatalf("fewer than %d lines within %s:\n%s", n, waitDeadline, clip(ls.out.String()))
	}
	return splitLines(ls.out.String())
}

func (ls *liveServe) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-ls.done:
		return err
	case <-time.After(waitDeadline):
		t.Fatalf("Serve did not return within %s", waitDeadline)
		return nil
	}
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func callLine(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, id, tool)
}

func TestCancellingTheContextDrainsCallsInFlight(t *testing.T) {
	tests := []struct {
		name      string
		release   bool // the call finishes within the grace
		want      string
		cancelled int32
	}{
		{"a call that finishes within the grace is answered normally", true,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"slow\":\"done\"}"}],"structuredContent":{"slow":"done"}}}`, 0},
		{"a call still running when the grace ends is cancelled and answered", false,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"request cancelled: the server is shutting down"}}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHandler()
			opts := testOptions()
			opts.DrainTimeout = 50 * time.Millisecond
			if tt.release {
				opts.DrainTimeout = waitDeadline
			}
			ls := startServe(t, h, opts)
			ls.send(t, initLine, callLine(1, "slow"))
			<-h.started
			ls.cancel() // the input stays open: only the context stops the server
			if tt.release {
				h.release <- struct{}{}
			}
			if err := ls.wait(t); err != nil {
				t.Fatalf("Serve returned %v, want nil", err)
			}
			lines := splitLines(ls.out.String())
			if len(lines) != 2 || lines[1] != tt.want {
				t.Errorf("lines after the init answer = %q, want [%s]", lines[1:], tt.want)
			}
			if got := h.cancelled.Load(); got != tt.cancelled {
				t.Errorf("handler saw cancellation %d times, want %d", got, tt.cancelled)
			}
		})
	}
}

func TestFailuresAreLoggedButNeverLeaked(t *testing.T) {
	tests := []struct {
		name string
		call func(context.Context, CallRequest) (CallResult, error)
		log  string
	}{
		{"an error keeps its detail in the log", func(context.Context, CallRequest) (CallResult, error) {
			return CallResult{}, errors.New("open /srv/app/.env: token=hunter2")
		}, "hunter2"},
		{"a panic is recovered and logged with its value", func(context.Context, CallRequest) (CallResult, error) {
			panic("hunter2 exploded")
		}, "hunter2 exploded"},
		{"an output that is not JSON is a server bug", func(context.Context, CallRequest) (CallResult, error) {
			return CallResult{Structured: json.RawMessage(`{"hunter2":`)}, nil
		}, "not a JSON object"},
		{"an error whose data cannot be encoded keeps code and message", func(context.Context, CallRequest) (CallResult, error) {
			return CallResult{}, &Error{Code: CodeInternal, Message: "internal error", Data: func() {}}
		}, "dropping unencodable error data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			opts := testOptions()
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			var out bytes.Buffer
			in := strings.NewReader(initLine + "\n" + callLine(1, "t") + "\n")
			if err := NewServer(oneTool(tt.call), opts).Serve(context.Background(), in, &out); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			lines := splitLines(out.String())
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`
			if len(lines) != 2 || lines[1] != want {
				t.Errorf("answer = %q, want %s", lines[1:], want)
			}
			if !strings.Contains(logs.String(), tt.log) {
				t.Errorf("log does not mention %q:\n%s", tt.log, logs.String())
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestAFailingOutputStopsTheServer(t *testing.T) {
	in, feed := io.Pipe()
	defer feed.Close()
	done := make(chan error, 1)
	go func() {
		done <- NewServer(newFakeHandler(), testOptions()).Serve(context.Background(), in, failingWriter{})
	}()
	go io.WriteString(feed, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("Serve returned %v, want the write failure", err)
		}
	case <-time.After(waitDeadline):
		t.Fatal("Serve kept running with a broken output")
	}
}

func TestTheWorkerPoolBoundsConcurrency(t *testing.T) {
	const workers, calls = 2, 6
	var running, peak atomic.Int32
	started := make(chan struct{}, calls)
	release := make(chan struct{})
	h := oneTool(func(ctx context.Context, _ CallRequest) (CallResult, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return CallResult{Structured: json.RawMessage(`{}`)}, nil
	})
	opts := testOptions()
	opts.Workers = workers
	ls := startServe(t, h, opts)
	ls.send(t, initLine)
	for i := 1; i <= calls; i++ {
		ls.send(t, callLine(i, "t"))
	}
	ls.send(t, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	ls.waitLines(t, 2) // ping is answered with calls still queued
	for range calls {
		select {
		case <-started:
		case <-time.After(waitDeadline):
			t.Fatal("a queued call never started")
		}
		release <- struct{}{}
	}
	ls.waitLines(t, 2+calls)
	if got := peak.Load(); got > workers {
		t.Errorf("%d calls ran at once, want at most %d", got, workers)
	}
}

func TestCallsBeyondTheInFlightBoundAreRefused(t *testing.T) {
	h := newFakeHandler()
	opts := testOptions()
	opts.Workers = 1
	ls := startServe(t, h, opts)
	ls.send(t, initLine)
	limit := minInflightCalls
	for i := 1; i <= limit+1; i++ {
		ls.send(t, callLine(i, "slow"))
	}
	lines := ls.waitLines(t, 2)
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"server busy: too many requests in flight; retry when some have answered"}}`, limit+1)
	if lines[1] != want {
		t.Errorf("answer = %s, want %s", lines[1], want)
	}
	for range limit {
		h.release <- struct{}{}
	}
	ls.waitLines(t, 2+limit)
}

func TestProgressAfterTheAnswerIsDropped(t *testing.T) {
	var progress func(float64, float64, string)
	got := make(chan struct{})
	h := oneTool(func(_ context.Context, req CallRequest) (CallResult, error) {
		progress = req.Progress
		close(got)
		return CallResult{Structured: json.RawMessage(`{}`)}, nil
	})
	ls := startServe(t, h, testOptions())
	ls.send(t, initLine, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":7}}}`)
	ls.waitLines(t, 2)
	<-got
	if progress == nil {
		t.Fatal("a request with a progress token got no Progress func")
	}
	progress(1, 2, "late")
	ls.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	lines := ls.waitLines(t, 3)
	if len(lines) != 3 || lines[2] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("lines = %q, want no progress after the answer", lines)
	}
}

func TestRequestsWithoutAProgressTokenGetNoProgressFunc(t *testing.T) {
	var hadProgress atomic.Bool
	h := oneTool(func(_ context.Context, req CallRequest) (CallResult, error) {
		hadProgress.Store(req.Progress != nil)
		return CallResult{Structured: json.RawMessage(`{}`)}, nil
	})
	in := strings.NewReader(initLine + "\n" + callLine(1, "t") + "\n")
	if err := NewServer(h, testOptions()).Serve(context.Background(), in, io.Discard); err != nil {
		t.Fatal(err)
	}
	if hadProgress.Load() {
		t.Error("a request without a progress token got a Progress func")
	}
}

func TestServeRefusesAToolListThatBreaksTheRules(t *testing.T) {
	tests := []struct {
		name  string
		tools []ToolInfo
		want  string
	}{
		{"a name with a space", []ToolInfo{{Name: "get run", Description: "d"}}, "does not match"},
		{"an empty name", []ToolInfo{{Name: "", Description: "d"}}, "does not match"},
		{"a name of 129 characters", []ToolInfo{{Name: strings.Repeat("a", 129), Description: "d"}}, "does not match"},
		{"a tool listed twice", []ToolInfo{{Name: "a", Description: "d"}, {Name: "a", Description: "d"}}, "listed twice"},
		{"a blank description", []ToolInfo{{Name: "a", Description: " "}}, "description is empty"},
		{"an input schema that is not an object", []ToolInfo{{Name: "a", Description: "d", InputSchema: json.RawMessage(`true`)}}, "input schema"},
		{"an output schema that is not JSON", []ToolInfo{{Name: "a", Description: "d", OutputSchema: json.RawMessage(`{`)}}, "output schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := funcHandler{tools: tt.tools}
			err := NewServer(h, testOptions()).Serve(context.Background(), strings.NewReader(""), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Serve = %v, want an error mentioning %q", err, tt.want)
			}
			if err := CheckTools(tt.tools); err == nil {
				t.Error("CheckTools accepted the list")
			}
		})
	}
	if err := CheckTools(newFakeHandler().Tools()); err != nil {
		t.Errorf("CheckTools rejected a valid list: %v", err)
	}
}

// The goroutine that reads a call's frame runs the call and hands the reading on: a call that
// has not returned still leaves the server reading, so a ping is answered and a cancellation
// reaches the call while it runs.
func TestACallInFlightLeavesTheServerReading(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	ls := startServe(t, oneTool(func(ctx context.Context, _ CallRequest) (CallResult, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return CallResult{}, ctx.Err()
	}), testOptions())
	ls.send(t, initLine, callLine(1, "t"))
	ls.waitLines(t, 1)
	select {
	case <-started:
	case <-time.After(waitDeadline):
		t.Fatal("the call did not start")
	}
	ls.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if lines := ls.waitLines(t, 2); !strings.Contains(lines[1], `"id":2`) || !strings.Contains(lines[1], `"result":{}`) {
		t.Fatalf("the ping while a call runs was answered %s", lines[1])
	}
	ls.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the call ended with %v, want its cancellation", err)
		}
	case <-time.After(waitDeadline):
		t.Fatal("the cancellation read while the call ran did not reach it")
	}
	ls.send(t, callLine(3, "unknown"))
	if lines := ls.waitLines(t, 3); !strings.Contains(lines[2], `"id":3`) {
		t.Fatalf("after the cancelled call, the next frame was answered %s", lines[2])
	}
	if n := len(splitLines(ls.out.String())); n != 3 {
		t.Fatalf("%d frames, want 3 (the cancelled call is not answered):\n%s", n, ls.out.String())
	}
}
