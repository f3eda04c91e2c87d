// Package conformance adds the fixture tools that the MCP conformance suite's server scenarios
// call by name (test_error_handling, test_missing_capability, ...). They exist only so the
// suite can exercise the protocol core through runlens's own dispatch: they are served only
// when `runlens serve --test-fixtures` wraps the handler, never by default, and they touch
// nothing outside the process.
package conformance

import (
	"context"
	"encoding/json"

	"github.com/runlens/runlens/internal/mcp"
)

// CodeMissingClientCapability is the 2026-07-28 MissingRequiredClientCapabilityError code.
const CodeMissingClientCapability = -32021

// Wrap returns a handler that serves h's tools followed by the fixture tools. A call to a
// fixture is answered here; every other call goes to h unchanged. A tool of h whose name
// collides with a fixture keeps its own behaviour: the fixture is dropped, so wrapping can
// never change what a real tool does.
func Wrap(h mcp.Handler) mcp.Handler {
	w := &handler{next: h, fixtures: make(map[string]fixture)}
	real := h.Tools()
	taken := make(map[string]bool, len(real))
	for _, t := range real {
		taken[t.Name] = true
	}
	w.tools = append(w.tools, real...)
	for _, f := range fixtures() {
		if taken[f.info.Name] {
			continue
		}
		w.tools = append(w.tools, f.info)
		w.fixtures[f.info.Name] = f
	}
	return w
}

// handler is the wrapped handler: the real tools, then the fixtures.
type handler struct {
	next     mcp.Handler
	tools    []mcp.ToolInfo
	fixtures map[string]fixture
}

// Tools implements mcp.Handler.
func (w *handler) Tools() []mcp.ToolInfo { return w.tools }

// CallTool implements mcp.Handler.
func (w *handler) CallTool(ctx context.Context, req mcp.CallRequest) (mcp.CallResult, error) {
	if f, ok := w.fixtures[req.Name]; ok {
		return f.call(ctx, req)
	}
	return w.next.CallTool(ctx, req)
}

// fixture is one test-only tool: how it is listed and what a call returns.
type fixture struct {
	info mcp.ToolInfo
	call func(ctx context.Context, req mcp.CallRequest) (mcp.CallResult, error)
}

// emptyInput is the input schema of every fixture: they take no arguments.
var emptyInput = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// textOutput is the output schema of the fixtures that answer with one message.
var textOutput = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The fixture's message."}},"required":["text"],"additionalProperties":false}`)

func readOnly() *mcp.Annotations {
	yes, no := true, false
	return &mcp.Annotations{ReadOnlyHint: &yes, OpenWorldHint: &no}
}

// text renders a fixture's one-message answer.
func text(msg string) mcp.CallResult {
	raw, _ := json.Marshal(struct {
		Text string `json:"text"`
	}{msg})
	return mcp.CallResult{Structured: raw}
}

// fixtures lists the tools the conformance scenarios runlens runs call by name, in the order
// they are listed after the real tools.
func fixtures() []fixture {
	return []fixture{
		{
			// tools-call-simple-text: a plain successful answer.
			info: mcp.ToolInfo{
				Name: "test_simple_text", Title: "Conformance: simple text",
				Description: "Conformance fixture: returns a fixed text answer.",
				InputSchema: emptyInput, OutputSchema: textOutput, Annotations: readOnly(),
			},
			call: func(context.Context, mcp.CallRequest) (mcp.CallResult, error) {
				return text("This is a simple text response for testing."), nil
			},
		},
		{
			// tools-call-error: a tool error result (isError with a message), not a JSON-RPC error.
			info: mcp.ToolInfo{
				Name: "test_error_handling", Title: "Conformance: error handling",
				Description: "Conformance fixture: always answers with a tool error result.",
				InputSchema: emptyInput, Annotations: readOnly(),
			},
			call: func(context.Context, mcp.CallRequest) (mcp.CallResult, error) {
				raw, _ := json.Marshal(map[string]string{
					"code":    "internal",
					"message": "This tool intentionally returns an error for testing",
				})
				return mcp.CallResult{Structured: raw, IsError: true}, nil
			},
		},
		{
			// server-stateless: a tool that needs the sampling capability, which runlens never
			// uses and so never has; a call is refused with the 2026-07-28 error naming it.
			info: mcp.ToolInfo{
				Name: "test_missing_capability", Title: "Conformance: missing capability",
				Description: "Conformance fixture: requires the client's sampling capability, which this server never uses, so every call is refused with -32021.",
				InputSchema: emptyInput, Annotations: readOnly(),
			},
			call: func(context.Context, mcp.CallRequest) (mcp.CallResult, error) {
				return mcp.CallResult{}, &mcp.Error{
					Code:    CodeMissingClientCapability,
					Message: "missing required client capability: sampling",
					Data:    map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}},
				}
			},
		},
		{
			// server-stateless: runlens sends no log notifications at all, so a request without a
			// log level must see none.
			info: mcp.ToolInfo{
				Name: "test_logging_tool", Title: "Conformance: logging",
				Description: "Conformance fixture: does its work without sending log notifications.",
				InputSchema: emptyInput, OutputSchema: textOutput, Annotations: readOnly(),
			},
			call: func(context.Context, mcp.CallRequest) (mcp.CallResult, error) {
				return text("Done without log notifications."), nil
			},
		},
		{
			// server-stateless: the answer stream of a call must never carry a request of the
			// server's own; runlens sends none, so the call simply completes.
			info: mcp.ToolInfo{
				Name: "test_streaming_elicitation", Title: "Conformance: no server requests",
				Description: "Conformance fixture: completes without asking the client anything; this server never sends requests.",
				InputSchema: emptyInput, OutputSchema: textOutput, Annotations: readOnly(),
			},
			call: func(context.Context, mcp.CallRequest) (mcp.CallResult, error) {
				return text("Completed without eliciting input."), nil
			},
		},
	}
}
