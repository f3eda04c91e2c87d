package app

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/otlp"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// IngestStats counts what the receivers of a process stored; safe for concurrent use.
type IngestStats struct {
	spans, logs atomic.Int64
	lastMs      atomic.Int64
}

// Spans, Logs and Last are the records stored and when the last batch was.
func (s *IngestStats) Spans() int64 { return s.spans.Load() }
func (s *IngestStats) Logs() int64  { return s.logs.Load() }
func (s *IngestStats) Last() time.Time {
	if ms := s.lastMs.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

func (s *IngestStats) add(spans, logs int) {
	if spans+logs == 0 {
		return // a probe's empty export (ProbeGRPC) is not telemetry
	}
	s.spans.Add(int64(spans))
	s.logs.Add(int64(logs))
	s.lastMs.Store(time.Now().UnixMilli())
}

// SetIngestStats makes the receivers of this App count into s, so a process that opens the
// App again (a store recreated after it was deleted) keeps one count.
func (a *App) SetIngestStats(s *IngestStats) { a.ingest = s }

// IngestStats is what the receivers of this App stored.
func (a *App) IngestStats() *IngestStats { return a.ingest }

// errStoreGone answers a batch sent after the store's file was deleted or replaced: storing
// it would acknowledge records into a file nobody can read any more. The receiver answers
// 503 (gRPC UNAVAILABLE), so the exporter sends it again.
var errStoreGone = errors.New("the store file was deleted or replaced while the receiver ran")

// storeGuard remembers which file the store opened and tells when its path no longer names it.
type storeGuard struct {
	mu   sync.Mutex
	path string
	file os.FileInfo
	once sync.Once
	gone chan struct{}
}

func (g *storeGuard) init() { g.gone = make(chan struct{}) }

// watch records the file at path as the store's.
func (g *storeGuard) watch(path string) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	g.mu.Lock()
	g.path, g.file = path, fi
	g.mu.Unlock()
}

// intact stats the path (a few microseconds, nothing beside a commit) and reports whether it
// still names the store's file; the first time it does not, gone is closed.
func (g *storeGuard) intact() bool {
	g.mu.Lock()
	path, file := g.path, g.file
	g.mu.Unlock()
	if file == nil {
		return true
	}
	fi, err := os.Stat(path)
	if err == nil && os.SameFile(fi, file) {
		return true
	}
	g.once.Do(func() { close(g.gone) })
	return false
}

// StoreIntact reports whether the store's file is still the one the receivers write.
func (a *App) StoreIntact() bool { return a.guard.intact() }

// StoreGone is closed once the receivers found the store's file deleted or replaced.
func (a *App) StoreGone() <-chan struct{} { return a.guard.gone }

// guardedSink is the store as the receivers see it: every batch first checks that the store's
// file is still there, and what was stored is counted.
type guardedSink struct {
	st *store.Store
	a  *App
}

var _ otlp.Sink = guardedSink{}

func (a *App) sink(st *store.Store) otlp.Sink { return guardedSink{st: st, a: a} }

func (s guardedSink) IngestTraces(ctx context.Context, td ptrace.Traces) (int, int, error) {
	if !s.a.guard.intact() {
		s.a.storeGoneOnce.Do(func() {
			s.a.Logger.Error("the store file was deleted or replaced; refusing telemetry", "store", s.st.Path())
		})
		return 0, 0, errStoreGone
	}
	acc, rej, err := s.st.IngestTraces(ctx, td)
	if err == nil {
		s.a.ingest.add(acc, 0)
	}
	return acc, rej, err
}

func (s guardedSink) IngestLogs(ctx context.Context, ld plog.Logs) (int, int, error) {
	if !s.a.guard.intact() {
		s.a.storeGoneOnce.Do(func() {
			s.a.Logger.Error("the store file was deleted or replaced; refusing telemetry", "store", s.st.Path())
		})
		return 0, 0, errStoreGone
	}
	acc, rej, err := s.st.IngestLogs(ctx, ld)
	if err == nil {
		s.a.ingest.add(0, acc)
	}
	return acc, rej, err
}
