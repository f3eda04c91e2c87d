// Package aspire reads the Aspire dashboard's HTTP telemetry API (GET /api/telemetry/spans and
// /logs, OTLP JSON inside {"data", "totalCount", "returnedCount"}) as a telemetry.Backend.
//
// The API filters by resource, trace, error status and minimum severity, but has no time range
// and caps every query at 10,000 items, newest first. So the backend pulls what the dashboard
// holds in as few calls as it can — one spans call and, when an answer needs them, one logs
// call per snapshot — and answers every scan from that pull, filtering with
// telemetry.MatchSpan and MatchLog. A pull the dashboard cut makes every scan that reaches past
// its oldest item say Limited, so a tool's scan.limited tells the truth. It holds no semantics:
// the engine computes every answer from its scans.
package aspire

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// Kind is the source kind the backend reports.
const Kind = "aspire"

// MaxItems is the most items the dashboard returns for one query.
const MaxItems = 10_000

// Defaults of Options.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxBytes  = 64 << 20
	DefaultFresh     = time.Second
	DefaultAPIKeyEnv = "ASPIRE_API_KEY"
)

// Options configure a Backend.
type Options struct {
	// Endpoint is the dashboard's http(s)://host:port; Fallback, when set, is tried if Endpoint
	// does not answer on first contact (the https form of a discovered port).
	Endpoint, Fallback string
	// APIKey is sent as X-API-Key; APIKeyEnv names the variable it came from, for messages.
	APIKey, APIKeyEnv string
	// Token is a dashboard login token, exchanged for an API key when no key is set (or the key
	// is refused); TokenEnv names its variable, for messages.
	Token, TokenEnv string
	// Timeout bounds every call (default 10 s); MaxBytes bounds every answer (default 64 MiB).
	Timeout  time.Duration
	MaxBytes int64
	// Fresh is how long one pull answers scans that do not pin a snapshot (default 1 s): the
	// scans of one tool call share a pull, and a call a moment later does not pull again.
	Fresh time.Duration
	// TrustDevCerts trusts the ASP.NET development certificates for https on loopback;
	// DevCertDirs replaces the folders searched (nil: the user's ~/.aspnet folders).
	TrustDevCerts bool
	DevCertDirs   []string
	// Client replaces the HTTP client (tests); its redirects are never followed.
	Client *http.Client
	Logger *slog.Logger
	// Now replaces the clock (tests).
	Now func() time.Time
}

// Backend is the Aspire dashboard as a telemetry.Backend.
type Backend struct {
	o Options
	c *client

	// mu serialises pulls: concurrent scans wait for one pull and share it, rather than asking
	// a shared dashboard the same question twice.
	mu   sync.Mutex
	snap *snapshot
	seq  int64
}

var _ telemetry.Backend = (*Backend)(nil)

// New returns the backend for o.
func New(o Options) *Backend {
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	o.Fresh = cmp.Or(o.Fresh, DefaultFresh)
	o.APIKeyEnv = cmp.Or(o.APIKeyEnv, DefaultAPIKeyEnv)
	o.TokenEnv = cmp.Or(o.TokenEnv, "the variable telemetry.tokenEnv names")
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Backend{o: o, c: newClient(o)}
}

// snapshot is one pull of the dashboard: its spans, and its logs once a scan needed them.
type snapshot struct {
	seq   int64
	taken time.Time
	rows  *memory.Backend
	spans pull
	logs  *pull // nil until pulled
	id    string
}

// pull says what one query returned: whether the dashboard cut it, and the oldest item kept.
type pull struct {
	cut      bool
	oldestNs int64
	count    int
}

// reaches reports whether a scan of window w may miss items a cut pull left out: the dashboard
// keeps the newest, so a window that starts after the oldest item kept lost nothing.
func (p pull) reaches(w telemetry.Window) bool {
	return p.cut && (w == (telemetry.Window{}) || w.StartMs*1e6 <= p.oldestNs)
}

// current returns the snapshot that answers a scan pinned to asOf (0: the latest), pulling
// when none is fresh; withLogs pulls the logs too.
func (b *Backend) current(ctx context.Context, asOf int64, withLogs bool) (*snapshot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.snap
	pinned := s != nil && asOf != 0 && asOf == s.seq
	if s == nil || (!pinned && b.o.Now().Sub(s.taken) > b.o.Fresh) {
		ns, err := b.pullSpans(ctx)
		if err != nil {
			return nil, err
		}
		b.seq++
		ns.seq = b.seq
		b.snap, s = ns, ns
	}
	if withLogs && s.logs == nil {
		if err := b.pullLogs(ctx, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// query is the query of a bulk pull: every item the dashboard will return for one call.
func query() url.Values {
	return url.Values{"limit": {itoa(MaxItems)}}
}

func (b *Backend) pullSpans(ctx context.Context) (*snapshot, error) {
	body, err := b.c.get(ctx, PathSpans, query())
	if err != nil {
		return nil, err
	}
	td, total, returned, err := decodeSpans(body)
	if err != nil {
		return nil, b.c.unreachable(b.c.o.Endpoint, "sent spans that are not OTLP JSON ("+err.Error()+")",
			"Check that the address is the Aspire dashboard's and that its version serves /api/telemetry.")
	}
	s := &snapshot{taken: b.o.Now(), rows: &memory.Backend{Info: telemetry.SourceInfo{Kind: Kind}}}
	s.rows.AddTraces(td)
	s.spans = pullOf(total, returned, oldestSpan(td))
	s.spans.count = td.SpanCount()
	b.o.Logger.Debug("aspire spans pulled", "returned", returned, "total", total, "cut", s.spans.cut)
	return s, nil
}

func (b *Backend) pullLogs(ctx context.Context, s *snapshot) error {
	body, err := b.c.get(ctx, PathLogs, query())
	if err != nil {
		return err
	}
	ld, total, returned, err := decodeLogs(body)
	if err != nil {
		return b.c.unreachable(b.c.o.Endpoint, "sent logs that are not OTLP JSON ("+err.Error()+")",
			"Check that the address is the Aspire dashboard's and that its version serves /api/telemetry.")
	}
	s.rows.AddLogs(ld)
	p := pullOf(total, returned, oldestLog(ld))
	p.count = ld.LogRecordCount()
	s.logs = &p
	b.o.Logger.Debug("aspire logs pulled", "returned", returned, "total", total, "cut", p.cut)
	return nil
}

// pullOf says whether a pull was cut: fewer returned than matched, or as many as the cap (the
// dashboard counts within its own cap, so a full answer may hide more).
func pullOf(total, returned int, oldestNs int64) pull {
	return pull{cut: returned < total || returned >= MaxItems, oldestNs: oldestNs}
}

// ScanSpans implements telemetry.Backend.
func (b *Backend) ScanSpans(ctx context.Context, s telemetry.SpanScan) (telemetry.SpanBatch, error) {
	snap, err := b.current(ctx, s.AsOf, false)
	if err != nil {
		return telemetry.SpanBatch{}, err
	}
	q := s
	q.AsOf = 0
	batch, err := snap.rows.ScanSpans(ctx, q)
	if err != nil {
		return telemetry.SpanBatch{}, err
	}
	if snap.spans.reaches(s.Window) {
		batch.Limited, batch.Matched = true, -1
	}
	return batch, nil
}

// ScanLogs implements telemetry.Backend.
func (b *Backend) ScanLogs(ctx context.Context, s telemetry.LogScan) (telemetry.LogBatch, error) {
	snap, err := b.current(ctx, s.AsOf, true)
	if err != nil {
		return telemetry.LogBatch{}, err
	}
	q := s
	q.AsOf = 0
	batch, err := snap.rows.ScanLogs(ctx, q)
	if err != nil {
		return telemetry.LogBatch{}, err
	}
	if snap.logs.reaches(s.Window) {
		batch.Limited, batch.Matched = true, -1
	}
	return batch, nil
}

// Services implements telemetry.Backend.
func (b *Backend) Services(ctx context.Context, limit int) ([]string, error) {
	snap, err := b.current(ctx, 0, false)
	if err != nil {
		return nil, err
	}
	return snap.rows.Services(ctx, limit)
}

// Fingerprint implements telemetry.Backend: a digest of what the pull holds, so two pulls of
// unchanged data give one id (cursors hold across calls) and any change gives another.
func (b *Backend) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	snap, err := b.current(ctx, 0, true)
	if err != nil {
		return telemetry.Snapshot{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if snap.id == "" {
		snap.id = digest(ctx, snap)
	}
	return telemetry.Snapshot{ID: snap.id, AsOf: snap.seq}, nil
}

// Describe implements telemetry.Backend.
func (b *Backend) Describe(ctx context.Context) telemetry.SourceInfo {
	snap, err := b.current(ctx, 0, true)
	info := telemetry.SourceInfo{Kind: Kind, Endpoint: shown(cmp.Or(b.c.chosen(), b.o.Endpoint))}
	if err != nil {
		info.Problem = err
		return info
	}
	info.Reachable = true
	info.NewestDataMs = snap.rows.Describe(ctx).NewestDataMs
	return info
}
