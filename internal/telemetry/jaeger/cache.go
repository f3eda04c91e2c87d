package jaeger

import (
	"sync"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
)

// maxCachedTraces bounds the cache; past it, the cache starts over.
const maxCachedTraces = 20_000

// traceCache holds the traces read in the last ttl, whole, by trace id, and the answers of the
// searches that read them. The engine answers one question with several scans of the same
// window (all spans, error spans, roots) and then scans of the trace ids it found; Jaeger's
// searches return whole traces, so none of those needs a request of its own. Entries expire
// quickly so an answer never rests on data older than ttl.
type traceCache struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	entries  map[string]cachedTrace
	searches map[string]cachedSearch
}

type cachedSearch struct {
	at      time.Time
	rows    []telemetry.SpanRow
	limited bool
}

// maxCachedSearches bounds the search answers kept; past it, they start over.
const maxCachedSearches = 64

func (c *traceCache) getSearch(key string) ([]telemetry.SpanRow, bool, bool) {
	if c.ttl < 0 {
		return nil, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.searches[key]
	if !ok || c.now().Sub(e.at) > c.ttl {
		return nil, false, false
	}
	return e.rows, e.limited, true
}

func (c *traceCache) putSearch(key string, rows []telemetry.SpanRow, limited bool) {
	if c.ttl < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.searches == nil || len(c.searches) >= maxCachedSearches {
		c.searches = make(map[string]cachedSearch)
	}
	c.searches[key] = cachedSearch{at: c.now(), rows: rows, limited: limited}
}

type cachedTrace struct {
	at   time.Time
	rows []telemetry.SpanRow
}

func (c *traceCache) get(id string) ([]telemetry.SpanRow, bool) {
	if c.ttl < 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || c.now().Sub(e.at) > c.ttl {
		return nil, false
	}
	return e.rows, true
}

func (c *traceCache) put(traces map[string][]telemetry.SpanRow) {
	if c.ttl < 0 || len(traces) == 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries)+len(traces) > maxCachedTraces {
		c.entries = make(map[string]cachedTrace, len(traces))
	}
	for id, rows := range traces {
		c.entries[id] = cachedTrace{at: now, rows: rows}
	}
}
