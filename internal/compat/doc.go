// Package compat proves runlens against MCP clients nobody here wrote: the official Go SDK,
// the MCP Inspector CLI, the v1 and v2 TypeScript SDKs, the conformance suite (behind
// supergateway, over Streamable HTTP) and Ajv's draft-07 validator. It holds tests only; they
// build the real binary, serve a small fixture workspace and drive each client as a user
// would, so a protocol regression fails the release gate rather than a user's host.
//
// The Node tooling comes from RUNLENS_NODE_TOOLS (set by `make test`) or is installed by
// .ci/install-tools on first use. Without it the Node-based tests skip, except under CI,
// where they fail.
package compat
