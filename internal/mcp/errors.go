package mcp

import "fmt"

// JSON-RPC and MCP error codes the server answers with.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternal           = -32603
	CodeUnsupportedVersion = -32022
)

// Error is a JSON-RPC error object. A Handler returns it to choose the exact code and message
// the client sees; the server builds its own for framing and protocol failures.
type Error struct {
	Code    int
	Message string
	Data    any
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}
