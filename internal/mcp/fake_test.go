package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
)

// bigText is the payload of the "big" tool: a 5 MiB answer that must go out as one frame.
var bigText = strings.Repeat("a", 5<<20)

func ptr[T any](v T) *T { return &v }

// fakeHandler is a handler with a few tools covering every path the server takes: fast, slow
// (blocks until released or cancelled), huge, failing in each way, and reporting progress.
type fakeHandler struct {
	started   chan string   // the name of every slow call that started
	release   chan struct{} // one value lets one slow call finish
	cancelled atomic.Int32  // slow calls that saw their context cancelled
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{started: make(chan string, 64), release: make(chan struct{}, 64)}
}

func (f *fakeHandler) Tools() []ToolInfo {
	object := json.RawMessage(`{"type": "object"}`)
	readOnly := &Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}
	return []ToolInfo{
		{Name: "echo", Title: "Echo", Description: "Returns its arguments.", InputSchema: object,
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"echo":{"type":"object"}}}`), Annotations: readOnly},
		{Name: "slow", Description: "Blocks until released or cancelled.", InputSchema: object,
			Annotations: &Annotations{DestructiveHint: ptr(true), IdempotentHint: ptr(false)}},
		{Name: "big", Description: "Returns a 5 MiB answer.", InputSchema: object},
		{Name: "fail", Description: "Fails with an internal error.", InputSchema: object},
		{Name: "denied", Description: "Returns a domain error.", InputSchema: object},
		{Name: "badout", Description: "Returns an output that is not an object.", InputSchema: object},
		{Name: "rpcerr", Description: "Returns a JSON-RPC error of its own.", InputSchema: object},
		{Name: "gone", Description: "Says it does not exist.", InputSchema: object},
		{Name: "progress", Description: "Reports progress.", InputSchema: object},
	}
}

func (f *fakeHandler) CallTool(ctx context.Context, req CallRequest) (CallResult, error) {
	switch req.Name {
	case "echo":
		if bytes.Contains(req.Arguments, []byte(`"deny"`)) {
			return CallResult{IsError: true, Structured: json.RawMessage(`{"code":"command_denied","message":"echo refused"}`)}, nil
		}
		return CallResult{Structured: json.RawMessage(fmt.Sprintf(`{"echo": %s, "version": %q}`, req.Arguments, req.ProtocolVersion))}, nil
	case "slow":
		f.started <- req.Name
		select {
		case <-ctx.Done():
			f.cancelled.Add(1)
			return CallResult{}, ctx.Err()
		case <-f.release:
			return CallResult{Structured: json.RawMessage(`{"slow":"done"}`)}, nil
		}
	case "big":
		return CallResult{Structured: json.RawMessage(`{"data":"` + bigText + `"}`)}, nil
	case "fail":
		return CallResult{}, errors.New("open /secret/path: token=hunter2")
	case "denied":
		return CallResult{IsError: true, Structured: json.RawMessage(`{"code":"command_denied","message":"denied by rule deny-rm"}`)}, nil
	case "badout":
		return CallResult{Structured: json.RawMessage(`[1,2]`)}, nil
	case "rpcerr":
		return CallResult{}, fmt.Errorf("validate output: %w", &Error{Code: CodeInternal, Message: "output does not match its schema", Data: map[string]string{"tool": "rpcerr"}})
	case "gone":
		return CallResult{}, fmt.Errorf("dispatch %s: %w", req.Name, ErrUnknownTool)
	case "progress":
		if req.Progress != nil {
			req.Progress(1, 4, "started")
			req.Progress(1, 4, "same value is dropped")
			req.Progress(0.5, 4, "lower value is dropped")
			req.Progress(math.NaN(), 4, "NaN is dropped")
			req.Progress(3, 0, "")
		}
		return CallResult{Structured: json.RawMessage(`{"progress":"done"}`)}, nil
	}
	return CallResult{}, ErrUnknownTool
}
