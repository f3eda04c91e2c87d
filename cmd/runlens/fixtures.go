package main

import "github.com/runlens/runlens/internal/mcp"

// wrapFixtures adds the MCP conformance suite's fixture tools to the served handler. It is nil
// in the product: only a build with -tags conformance (the one the compatibility tests run)
// links the fixtures, so `runlens serve --test-fixtures` is refused everywhere else.
var wrapFixtures func(mcp.Handler) mcp.Handler
