package mcp

import (
	"context"
	"encoding/json"
	"errors"
)

// ToolInfo is one entry of tools/list. The server renders it per protocol revision, so a
// handler describes every field once and never thinks about which client is asking.
type ToolInfo struct {
	Name, Title, Description  string
	InputSchema, OutputSchema json.RawMessage // published schemas
	Annotations               *Annotations    // nil = none
}

// Annotations are the MCP behaviour hints of a tool. Pointers keep "not said" apart from
// "false", which the protocol gives different defaults.
type Annotations struct {
	ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint *bool
}

// CallRequest is one tools/call, already unwrapped from its JSON-RPC envelope.
type CallRequest struct {
	Name            string
	Arguments       json.RawMessage // "{}" when absent
	ProtocolVersion string          // negotiated (legacy) or per-request (modern) revision
	// Progress reports progress when the client sent _meta.progressToken; nil otherwise. The
	// server enforces strictly increasing progress values (drops non-increasing ones).
	Progress func(progress, total float64, message string)
}

// CallResult is a tool result. Structured is the JSON object answer (an output or, when IsError,
// the domain error object {code,message,hint?,retryable?} or the invalid-arguments object).
type CallResult struct {
	Structured json.RawMessage
	IsError    bool
}

// Handler is what the server dispatches to. CallTool returns *Error for JSON-RPC level failures
// (unknown tool → -32602 via ErrUnknownTool wrapped or an *Error with CodeInvalidParams;
// an output that fails its schema → *Error CodeInternal); any other error → -32603 "internal error"
// with the detail logged to stderr only (never leaked).
type Handler interface {
	Tools() []ToolInfo
	CallTool(ctx context.Context, req CallRequest) (CallResult, error)
}

// ErrUnknownTool is what a Handler wraps when asked for a tool it does not serve; the server
// answers it with -32602, as the protocol prescribes for unknown tools.
var ErrUnknownTool = errors.New("unknown tool")
