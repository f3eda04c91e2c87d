package mcp

import (
	"context"
	"errors"
	"io"
)

// Server serves one MCP peer over one byte stream.
type Server struct {
	h    Handler
	opts Options
}

// NewServer returns a server that dispatches tool calls to h.
func NewServer(h Handler, opts Options) *Server {
	return &Server{h: h, opts: opts.withDefaults()}
}

// Serve reads r until EOF or ctx is done, drains in-flight requests (bounded by DrainTimeout,
// then cancels them), flushes, and returns nil on a clean stop.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return errors.New("mcp: serve not implemented yet")
}
