// Package memory is a telemetry Backend over rows held in memory. It has no capabilities of
// its own, so the engine computes every answer from its scans: the reference the conformance
// suite holds the other backends to, and the base of sources that pull bounded pages from a
// remote API.
package memory

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/flatten"
)

// Backend holds spans and log records. The zero value is empty and ready to use.
//
// It holds one span per trace and span id, the first that arrived: an exporter that retries a
// batch sends its spans again, and a span sent twice is one span. Deciding it as spans arrive,
// rather than per scan, keeps a copy that differs (corrupt instrumentation reusing an id) from
// counting in one answer and not in another — and it is what a backend that aggregates, such
// as the embedded store, can do too.
type Backend struct {
	mu    sync.RWMutex
	spans []row[telemetry.SpanRow]
	ids   map[[2]string]bool // trace and span ids held
	logs  []row[telemetry.LogRow]
	seq   int64
	// Info is what Describe answers; Kind defaults to "memory".
	Info telemetry.SourceInfo
}

var _ telemetry.Backend = (*Backend)(nil)

type row[T any] struct {
	seq int64
	v   T
}

// AddTraces stores the spans of td; it returns how many were rejected for empty ids.
func (b *Backend) AddTraces(td ptrace.Traces) int {
	rows, rejected := flatten.Spans(td)
	b.AddSpans(rows...)
	return rejected
}

// AddLogs stores the records of ld.
func (b *Backend) AddLogs(ld plog.Logs) { b.AddLogRows(flatten.Logs(ld, time.Now())...) }

// AddSpans stores span rows; a row whose trace and span id are held already is dropped.
func (b *Backend) AddSpans(rows ...telemetry.SpanRow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ids == nil {
		b.ids = map[[2]string]bool{}
	}
	for _, r := range rows {
		k := [2]string{r.TraceID, r.SpanID}
		if b.ids[k] {
			continue
		}
		b.ids[k] = true
		b.seq++
		b.spans = append(b.spans, row[telemetry.SpanRow]{b.seq, r})
	}
}

// AddLogRows stores log rows.
func (b *Backend) AddLogRows(rows ...telemetry.LogRow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range rows {
		b.seq++
		b.logs = append(b.logs, row[telemetry.LogRow]{b.seq, r})
	}
}

// ScanSpans implements telemetry.Backend.
func (b *Backend) ScanSpans(ctx context.Context, s telemetry.SpanScan) (telemetry.SpanBatch, error) {
	if err := ctx.Err(); err != nil {
		return telemetry.SpanBatch{}, err
	}
	b.mu.RLock()
	var out []telemetry.SpanRow
	var scanned int64
	for i := range b.spans {
		r := &b.spans[i]
		if s.AsOf > 0 && r.seq > s.AsOf {
			continue
		}
		scanned++
		if telemetry.MatchSpan(&s, &r.v) {
			out = append(out, r.v)
		}
	}
	b.mu.RUnlock()
	return telemetry.BoundSpans(&s, out, scanned, false), nil
}

// ScanLogs implements telemetry.Backend.
func (b *Backend) ScanLogs(ctx context.Context, s telemetry.LogScan) (telemetry.LogBatch, error) {
	if err := ctx.Err(); err != nil {
		return telemetry.LogBatch{}, err
	}
	b.mu.RLock()
	var out []telemetry.LogRow
	var scanned int64
	for i := range b.logs {
		r := &b.logs[i]
		if s.AsOf > 0 && r.seq > s.AsOf {
			continue
		}
		scanned++
		if telemetry.MatchLog(&s, &r.v) {
			out = append(out, r.v)
		}
	}
	b.mu.RUnlock()
	return telemetry.BoundLogs(&s, out, scanned, false), nil
}

// Services implements telemetry.Backend.
func (b *Backend) Services(ctx context.Context, limit int) ([]string, error) {
	b.mu.RLock()
	seen := map[string]bool{}
	for _, r := range b.spans {
		seen[telemetry.ServiceOf(r.v.Service)] = true
	}
	b.mu.RUnlock()
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Fingerprint implements telemetry.Backend: the number of rows added so far.
func (b *Backend) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return telemetry.Snapshot{ID: "memory:" + strconv.FormatInt(b.seq, 10), AsOf: b.seq}, nil
}

// Describe implements telemetry.Backend.
func (b *Backend) Describe(ctx context.Context) telemetry.SourceInfo {
	info := b.Info
	info.Kind = cmp.Or(info.Kind, "memory")
	info.Reachable = true
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, r := range b.spans {
		info.NewestDataMs = max(info.NewestDataMs, r.v.StartNs/1e6)
	}
	for _, r := range b.logs {
		info.NewestDataMs = max(info.NewestDataMs, r.v.TimeNs/1e6)
	}
	return info
}
