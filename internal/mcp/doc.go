// Package mcp is runlens's hand-written Model Context Protocol server core: newline-delimited
// JSON-RPC 2.0 over a byte stream (stdio in production), both protocol eras (the 2025-era
// initialize handshake and the stateless 2026-07-28 revision), concurrency, cancellation and
// progress.
//
// It knows nothing about individual tools. A Handler supplies the tool list and executes calls;
// this package frames, negotiates, gates features by revision, dispatches and answers. It is
// written by hand rather than on an SDK so every limit of the compatibility contract (inbound
// ceiling, recovery from malformed input, negotiation) is met exactly and start-up stays small.
package mcp
