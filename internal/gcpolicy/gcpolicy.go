// Package gcpolicy sets the Go garbage collector's targets for runlens's long-running
// processes, unless the user set GOGC or GOMEMLIMIT, which always win.
//
// Both processes keep a small live heap and allocate in short bursts (a telemetry call's rows,
// a batch's decoded spans): the default target (GOGC=100) collects after every few batches or
// calls. A higher target spends a few MiB of memory for far fewer collections, and a soft
// memory limit bounds what that can cost: past it the collector runs earlier again.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

const (
	// Percent is the collection target both processes use (GOGC).
	Percent = 400
	// ServeLimit is a serve process's soft memory limit: with SQLite's page caches and the
	// binary it keeps the process within B11's 64 MiB.
	ServeLimit = 40 << 20
	// IngestLimit is a collect process's: B5's batches in flight (4 senders × 512 spans, each
	// decoded and its rows built) are tens of MiB at a time, and B5's budget is 200 MB of RSS.
	IngestLimit = 128 << 20
)

// Serve applies the serve process's targets.
func Serve() { apply(ServeLimit) }

// Ingest applies the collect process's targets.
func Ingest() { apply(IngestLimit) }

func apply(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
