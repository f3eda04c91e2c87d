// Package bench measures runlens's protocol and bootstrap costs as a coding agent's host sees
// them — a fresh process over stdio — against a minimal server built on the official go-sdk that
// serves the same 13 tools and schemas (./peer). Both run as release builds in the same run, so
// the ratios hold on a shared, noisy machine where absolute numbers drift.
//
// The measures are those of the project's benchmark targets: B1 start-up plus discovery, B2 the
// warm tools/call round trip, B3 pipelined throughput, B4 idle memory and B8 the size of the
// bootstrap tools/list. `RUNLENS_BENCH=1 go test ./internal/bench -run TestReport -v` runs them
// and prints the results; plain `go test` only proves the harness works.
package bench
