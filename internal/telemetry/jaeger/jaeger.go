// Package jaeger is a telemetry Backend over Jaeger's /api/v3 HTTP query API (the Jaeger v2
// query service, default port 16686). It only reads, and it carries no semantics: it pulls
// bounded pages of whole traces, flattens them like every other OTLP source (package flatten)
// and applies each scan's filters itself (telemetry.MatchSpan), because the API filters by
// service, operation, start time and duration only. The engine does the rest.
//
// What the API imposes, and how the backend stays honest about it:
//   - a search needs a service name and a trace count (query.num_traces): a scan without a
//     service searches every service Jaeger lists, one request each;
//   - a search answers at most num_traces traces: a search that comes back full is split into
//     four parts of its time range and asked again, up to a request budget per scan; what the
//     budget cannot cover makes the batch Limited (the answer's scan.limited);
//   - Jaeger stores no logs: log scans are empty, and Describe says so (SourceInfo.Note);
//   - there is no high-water mark: the snapshot is the service list, so a cursor survives new
//     traces of known services (see Fingerprint).
package jaeger

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/flatten"
)

// Kind is the source kind Describe reports.
const Kind = "jaeger"

// Note is what this source cannot answer, for get_app_status and the doctor.
const Note = "Jaeger stores traces only: log counts are 0, get_run lists no logs, and failures reported only by an error log are not counted."

// CoverageNote implements telemetry.Coverage: every telemetry answer says that logs are missing.
func (b *Backend) CoverageNote() string { return Note }

// Options bound what the backend asks of Jaeger. Zero fields take the defaults.
type Options struct {
	// Timeout bounds each HTTP request (default 10 s).
	Timeout time.Duration
	// MaxBodyBytes bounds each answer read (default 64 MiB); a search whose answer is larger
	// is split like a full one, a single trace that large is an error.
	MaxBodyBytes int64
	// TracesPerSearch is query.num_traces (default 1000); it must not exceed the storage's
	// own cap (the in-memory storage's max_traces).
	TracesPerSearch int
	// MaxRequests bounds the requests of one scan (default 256).
	MaxRequests int
	// Parallel bounds concurrent trace fetches of one scan (default 4).
	Parallel int
	// CacheTTL is how long a trace read is reused by scans of trace ids (default 5 s; the
	// engine reads the traces a window scan has just returned). Negative disables it.
	CacheTTL time.Duration
	// Transport carries the requests (default http.DefaultTransport).
	Transport http.RoundTripper
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, 64<<20)
	o.TracesPerSearch = cmp.Or(o.TracesPerSearch, 1000)
	o.MaxRequests = cmp.Or(o.MaxRequests, 256)
	o.Parallel = cmp.Or(o.Parallel, 4)
	o.CacheTTL = cmp.Or(o.CacheTTL, 5*time.Second)
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Backend reads one Jaeger query service.
type Backend struct {
	base     string // scheme://host[:port][/prefix], no trailing slash
	endpoint string // base without credentials, for answers
	opts     Options
	client   *http.Client
	cache    traceCache
}

var _ telemetry.Backend = (*Backend)(nil)

// New returns the backend of the query service at endpoint (http or https; a path is a base
// path the API is served under).
func New(endpoint string, o Options) (*Backend, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("jaeger endpoint %q: want http(s)://host:port", redact(endpoint))
	}
	o = o.withDefaults()
	base := strings.TrimRight(u.String(), "/")
	return &Backend{
		base:     base,
		endpoint: redact(base),
		opts:     o,
		client:   &http.Client{Transport: o.Transport, Timeout: o.Timeout + time.Second}, // the request context times out first
		cache:    traceCache{ttl: o.CacheTTL, now: o.Now},
	}, nil
}

// redact drops credentials, parameters and a fragment (each could hold a secret) from a URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid address)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// Jaeger's storage writer gives a resource without a usable service.name one of these names;
// the backend reads them back as no service.name, as every other source stores it.
var placeholderServices = []string{"missing-service-name", "empty-service-name"}

// serviceName maps Jaeger's placeholder back to an absent service.name.
func serviceName(s string) string {
	if slices.Contains(placeholderServices, s) {
		return ""
	}
	return s
}

// jaegerServices are the Jaeger service names a scan of service svc (as the tools name it)
// must search.
func jaegerServices(svc string) []string {
	if svc == telemetry.UnknownService {
		return append([]string{telemetry.UnknownService}, placeholderServices...)
	}
	return []string{svc}
}

// ScanSpans implements telemetry.Backend.
func (b *Backend) ScanSpans(ctx context.Context, s telemetry.SpanScan) (telemetry.SpanBatch, error) {
	budget := &budget{left: b.opts.MaxRequests}
	var rows []telemetry.SpanRow
	limited := false
	if len(s.TraceIDs) > 0 {
		r, lim, err := b.traces(ctx, s.TraceIDs, budget)
		if err != nil {
			return telemetry.SpanBatch{}, err
		}
		rows, limited = r, lim
	} else {
		services := jaegerServices(s.Service)
		if s.Service == "" {
			all, err := b.services(ctx)
			if err != nil {
				return telemetry.SpanBatch{}, err
			}
			services = all
		}
		lo, hi := b.searchRange(s.Window)
		op := ""
		if len(s.Names) == 1 {
			op = s.Names[0]
		}
		for _, svc := range services {
			r, lim, err := b.cachedSearch(ctx, svc, op, lo, hi, budget)
			if err != nil {
				return telemetry.SpanBatch{}, err
			}
			rows = append(rows, r...)
			limited = limited || lim
		}
	}
	return b.batch(s, rows, limited), nil
}

// searchRange is the inclusive start-time range (Unix ns) of a window; a zero window is all
// time up to a day from now (clocks drift).
func (b *Backend) searchRange(w telemetry.Window) (lo, hi int64) {
	if w == (telemetry.Window{}) {
		return 0, b.opts.Now().Add(24 * time.Hour).Truncate(time.Minute).UnixNano() // one key for the cache
	}
	return max(w.StartMs, 0) * 1e6, w.EndMs*1e6 - 1
}

// batch filters, deduplicates, orders and bounds rows as the scan asks.
func (b *Backend) batch(s telemetry.SpanScan, rows []telemetry.SpanRow, limited bool) telemetry.SpanBatch {
	seen := make(map[[2]string]bool, len(rows))
	out := rows[:0:0]
	for i := range rows {
		r := &rows[i]
		k := [2]string{r.TraceID, r.SpanID}
		if seen[k] {
			continue
		}
		seen[k] = true
		if telemetry.MatchSpan(&s, r) {
			out = append(out, *r)
		}
	}
	return telemetry.BoundSpans(&s, out, int64(len(seen)), limited)
}

// budget is the requests a scan may still make.
type budget struct {
	mu   sync.Mutex
	left int
}

func (b *budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left <= 0 {
		return false
	}
	b.left--
	return true
}

// cachedSearch is search, answered from the cache when the same search ran within the TTL.
func (b *Backend) cachedSearch(ctx context.Context, svc, op string, lo, hi int64, bud *budget) ([]telemetry.SpanRow, bool, error) {
	key := strings.Join([]string{svc, op, strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)}, "\x00")
	if rows, limited, ok := b.cache.getSearch(key); ok {
		return rows, limited, nil
	}
	rows, limited, err := b.search(ctx, svc, op, lo, hi, bud)
	if err != nil {
		return nil, false, err
	}
	b.cache.putSearch(key, rows, limited)
	return rows, limited, nil
}

// search returns the spans of the traces of service svc (and operation op) with a span
// starting in [lo, hi] ns. A full answer (num_traces traces, or too large to read) is split
// into parts of the range; limited reports what the budget or a range too short to split left
// uncovered.
func (b *Backend) search(ctx context.Context, svc, op string, lo, hi int64, bud *budget) ([]telemetry.SpanRow, bool, error) {
	if !bud.take() {
		return nil, true, nil
	}
	q := url.Values{
		"query.service_name":   {svc},
		"query.start_time_min": {time.Unix(0, lo).UTC().Format(time.RFC3339Nano)},
		"query.start_time_max": {time.Unix(0, hi).UTC().Format(time.RFC3339Nano)},
		"query.num_traces":     {strconv.Itoa(b.opts.TracesPerSearch)},
		"query.raw_traces":     {"true"},
	}
	if op != "" {
		q.Set("query.operation_name", op)
	}
	body, err := b.get(ctx, "/api/v3/traces", q)
	var rows []telemetry.SpanRow
	full := false
	switch {
	case errors.Is(err, errNotFound):
		return nil, false, nil
	case errors.Is(err, errTooLarge):
		full = true
	case err != nil:
		return nil, false, err
	default:
		td, err := decodeTraces(body)
		if err != nil {
			return nil, false, err
		}
		var traces int
		rows, traces = b.rows(td)
		full = traces >= b.opts.TracesPerSearch
	}
	if !full {
		return rows, false, nil
	}
	if hi-lo < splitParts {
		return rows, true, nil
	}
	// A full answer says only that at least num_traces matched; halves of twice that many
	// would come back full again, so the range is split in more parts than two.
	var all []telemetry.SpanRow
	limited := false
	step := (hi - lo) / splitParts
	for i := range int64(splitParts) {
		from, to := lo+i*step, lo+(i+1)*step-1
		if i == splitParts-1 {
			to = hi
		}
		part, lim, err := b.search(ctx, svc, op, from, to, bud)
		if err != nil {
			return nil, false, err
		}
		all = append(all, part...)
		limited = limited || lim
	}
	if limited {
		// The parts did not cover everything: keep what the full answer had too.
		return append(all, rows...), true, nil
	}
	return all, false, nil
}

// splitParts is how many parts a full search's time range is split into.
const splitParts = 4

// traces returns the spans of the traces named, from the cache when read recently, else one
// request per trace (at most Parallel at once); an unknown trace has no spans.
func (b *Backend) traces(ctx context.Context, ids []string, bud *budget) ([]telemetry.SpanRow, bool, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var (
		mu      sync.Mutex
		out     []telemetry.SpanRow
		limited bool
		first   error
	)
	var missing []string
	for _, id := range ids {
		if rows, ok := b.cache.get(id); ok {
			out = append(out, rows...)
			continue
		}
		missing = append(missing, id)
	}
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(b.opts.Parallel, len(missing)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				rows, lim, err := b.trace(ctx, id, bud)
				mu.Lock()
				out = append(out, rows...)
				limited = limited || lim
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, id := range missing {
		select {
		case work <- id:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	if first != nil {
		return nil, false, first
	}
	return out, limited, nil
}

// trace reads one trace by id; an id that is not 32 hex digits cannot be in Jaeger.
func (b *Backend) trace(ctx context.Context, id string, bud *budget) ([]telemetry.SpanRow, bool, error) {
	if len(id) != 32 || !isHex(id) {
		return nil, false, nil
	}
	if !bud.take() {
		return nil, true, nil
	}
	body, err := b.get(ctx, "/api/v3/traces/"+id, rawTraces)
	if errors.Is(err, errNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	td, err := decodeTraces(body)
	if err != nil {
		return nil, false, err
	}
	rows, _ := b.rows(td)
	return rows, false, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// rows flattens an answer, undoes what Jaeger's storage writer changed (placeholder service
// names, the end it gives a span that ended before it started), caches each trace, and counts
// the traces.
func (b *Backend) rows(td ptrace.Traces) ([]telemetry.SpanRow, int) {
	rows, _ := flatten.Spans(td)
	byTrace := map[string][]telemetry.SpanRow{}
	for i := range rows {
		r := &rows[i]
		r.Service = serviceName(r.Service)
		if r.Resource != nil && serviceName(r.Resource[flatten.ServiceNameKey]) == "" {
			delete(r.Resource, flatten.ServiceNameKey)
		}
		unsanitize(r)
		byTrace[r.TraceID] = append(byTrace[r.TraceID], *r)
	}
	b.cache.put(byTrace)
	return rows, len(byTrace)
}

// rawTraces asks for traces as stored: the query service's adjusters (clock-skew correction,
// attribute moves, span deduplication) would change what the app sent.
var rawTraces = url.Values{"raw_traces": {"true"}}

// warningsKey is the span attribute Jaeger adds its warnings to.
const warningsKey = "@jaeger@warnings"

// unsanitize restores a span Jaeger's negative-duration sanitizer changed: it moved an end at
// or before the start to 1 ns after it and said so in a warning; every source stores that span
// with a zero duration.
func unsanitize(r *telemetry.SpanRow) {
	w, ok := r.Attributes[warningsKey]
	if !ok || !strings.Contains(w, "Negative duration detected") {
		return
	}
	r.DurationNs = 0
	delete(r.Attributes, warningsKey)
}

// ScanLogs implements telemetry.Backend: Jaeger stores no log records.
func (b *Backend) ScanLogs(ctx context.Context, s telemetry.LogScan) (telemetry.LogBatch, error) {
	if err := ctx.Err(); err != nil {
		return telemetry.LogBatch{}, err
	}
	return telemetry.LogBatch{}, nil
}

// services lists Jaeger's service names as it stores them.
func (b *Backend) services(ctx context.Context) ([]string, error) {
	body, err := b.get(ctx, "/api/v3/services", nil)
	if err != nil {
		return nil, err
	}
	return decodeServices(body)
}

// Services implements telemetry.Backend.
func (b *Backend) Services(ctx context.Context, limit int) ([]string, error) {
	raw, err := b.services(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		out = append(out, telemetry.ServiceOf(serviceName(s)))
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Fingerprint implements telemetry.Backend. Jaeger has no high-water mark and no way to pin a
// snapshot, so the snapshot is the endpoint and its service list: a new service invalidates
// cursors, new traces of known services do not (a page may then shift).
func (b *Backend) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	raw, err := b.services(ctx)
	if err != nil {
		return telemetry.Snapshot{}, fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
	}
	slices.Sort(raw)
	h := sha256.Sum256([]byte(b.endpoint + "\x00" + strings.Join(raw, "\x00")))
	return telemetry.Snapshot{ID: "jaeger:" + hex.EncodeToString(h[:8])}, nil
}

// describeServices and describeTraces bound the reads of Describe's newest-data probe.
const (
	describeServices = 20
	describeTraces   = 20
)

// Describe implements telemetry.Backend: reachable when the service list answers; the newest
// data is the newest span start among the traces each service's search returns first (the
// in-memory storage returns the most recently stored), so it is a lower bound.
func (b *Backend) Describe(ctx context.Context) telemetry.SourceInfo {
	info := telemetry.SourceInfo{Kind: Kind, Endpoint: b.endpoint, Note: Note}
	raw, err := b.services(ctx)
	if err != nil {
		info.Problem = &telemetry.SourceError{Kind: telemetry.ErrUnreachable,
			Message: fmt.Sprintf("The Jaeger query service at %s does not answer: %s", b.endpoint, err),
			Hint:    "Start Jaeger's query service, or check the jaeger+http://HOST:16686 address: runlens reads its /api/v3 API."}
		return info
	}
	info.Reachable = true
	hi := b.opts.Now().Add(24 * time.Hour).UnixNano()
	for _, svc := range raw[:min(len(raw), describeServices)] {
		q := url.Values{
			"query.service_name":   {svc},
			"query.start_time_min": {time.Unix(0, 0).UTC().Format(time.RFC3339Nano)},
			"query.start_time_max": {time.Unix(0, hi).UTC().Format(time.RFC3339Nano)},
			"query.num_traces":     {strconv.Itoa(min(describeTraces, b.opts.TracesPerSearch))},
		}
		body, err := b.get(ctx, "/api/v3/traces", q)
		if err != nil {
			continue
		}
		td, err := decodeTraces(body)
		if err != nil {
			continue
		}
		rows, _ := flatten.Spans(td)
		for _, r := range rows {
			info.NewestDataMs = max(info.NewestDataMs, r.StartNs/1e6)
		}
	}
	return info
}

// Check probes the API for the doctor: the service list, then one search, so an address that
// answers but is not Jaeger's query API (a login page, another server) fails with the reason.
func (b *Backend) Check(ctx context.Context) error {
	raw, err := b.services(ctx)
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return nil
	}
	now := b.opts.Now()
	_, err = b.get(ctx, "/api/v3/traces", url.Values{
		"query.service_name":   {raw[0]},
		"query.start_time_min": {now.Add(-time.Minute).UTC().Format(time.RFC3339Nano)},
		"query.start_time_max": {now.UTC().Format(time.RFC3339Nano)},
		"query.num_traces":     {"1"},
	})
	if errors.Is(err, errNotFound) {
		return nil
	}
	return err
}
