package goapp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Service names, as each service's resource carries them.
const (
	ServiceFrontend  = "frontend"
	ServiceCheckout  = "checkout"
	ServiceInventory = "inventory"
	ServiceLegacy    = "legacy"
)

// Cause is why something went wrong in a request, named by the app where it happened.
type Cause string

const (
	// CauseAddressInvalid: legacy's validator refused the shipping address and answered 500;
	// the reason is only in its span event. The request fails with 500.
	CauseAddressInvalid Cause = "address-invalid"
	// CauseQtyLimit: inventory's INSERT broke the table's CHECK constraint (MariaDB error
	// 4025) and inventory answered 500. The request fails with 500.
	CauseQtyLimit Cause = "qty-limit"
	// CauseCacheTimeout: checkout's cart read from Redis timed out and was retried. Handled:
	// on its own it never fails a request.
	CauseCacheTimeout Cause = "cache-timeout"
)

// Origins says in which service each cause starts, and Phrases a text its message carries.
var (
	Origins = map[Cause]string{CauseAddressInvalid: ServiceLegacy, CauseQtyLimit: ServiceInventory, CauseCacheTimeout: ServiceCheckout}
	Phrases = map[Cause]string{CauseAddressInvalid: addressInvalidPhrase, CauseQtyLimit: "qty_limit", CauseCacheTimeout: "i/o timeout"}
)

// Systems of the statements.
const (
	SystemMySQL = "mysql"
	SystemRedis = "redis"
)

// The statements whose place in analyze_db_bottlenecks the test checks.
const (
	// SlowStatement is run by inventory's stock audit (through otelsql) and by legacy's
	// address verification (an OpenTracing "SQL SELECT" span with sql.query): the slowest.
	SlowStatement = "SELECT SLEEP(0.05)"
	// LockedStatement is inventory's stock update, which waits on the service's database lock
	// before it runs: the requests wait on it, but the statement itself is fast.
	LockedStatement = "UPDATE stock SET qty = qty - ? WHERE sku = ?"
	// ZipStatement is legacy's zip lookup, reported through OpenTracing only.
	ZipStatement = "SELECT zone FROM zips WHERE zip = ?"
)

// Request is one request the workload sent, as it ended.
type Request struct {
	TraceID string
	Status  int
	// Causes are the distinct causes recorded in the request, in a fixed order.
	Causes []Cause
	// CacheTimeouts is how many cart reads timed out and were retried.
	CacheTimeouts int
}

// Failed reports whether the request ended as a server error.
func (r Request) Failed() bool { return r.Status >= 500 }

// Statement is one statement text as the services ran it, measured around the driver call.
type Statement struct {
	System   string
	Text     string
	Services []string
	// ByService is how many times each service ran it.
	ByService map[string]int
	Count     int
	Errors    int
	Total     time.Duration
}

// Truth is the workload's own record.
type Truth struct {
	Requests      []Request
	Statements    map[string]*Statement // by system + " " + text
	Spans, Logs   map[string]int        // per service, as the SDKs emitted them
	SpansPerTrace map[string]int
	LogsPerTrace  map[string]int
	Protocols     map[string]Protocol
	// LockWaitNotices and RetryNotices count legacy's span-event notices.
	LockWaitNotices, RetryNotices int
	digests                       map[string][]SpanDigest
	logDigests                    map[string][]string
}

// StatementKey is the key of a statement in Truth.Statements.
func StatementKey(system, text string) string { return system + " " + text }

// FailedTraceIDs are the traces of the requests that failed with a 5xx, sorted.
func (t *Truth) FailedTraceIDs() []string {
	var out []string
	for _, r := range t.Requests {
		if r.Failed() {
			out = append(out, r.TraceID)
		}
	}
	slices.Sort(out)
	return out
}

// StatusCount is how many requests ended with the status class (2, 4 or 5).
func (t *Truth) StatusCount(class int) int {
	n := 0
	for _, r := range t.Requests {
		if r.Status/100 == class {
			n++
		}
	}
	return n
}

// RunsWith are the requests in which the cause happened at least once.
func (t *Truth) RunsWith(c Cause) []Request {
	var out []Request
	for _, r := range t.Requests {
		if slices.Contains(r.Causes, c) {
			out = append(out, r)
		}
	}
	return out
}

// Occurrences is one per cause per run.
func (t *Truth) Occurrences() int {
	n := 0
	for _, r := range t.Requests {
		n += len(r.Causes)
	}
	return n
}

// HandledOccurrences are the occurrences in runs that did not fail.
func (t *Truth) HandledOccurrences() int {
	n := 0
	for _, r := range t.Requests {
		if !r.Failed() {
			n += len(r.Causes)
		}
	}
	return n
}

// CacheTimeouts is how many cart reads timed out in all.
func (t *Truth) CacheTimeouts() int {
	n := 0
	for _, r := range t.Requests {
		n += r.CacheTimeouts
	}
	return n
}

// OKWithTimeout is a request that returned 200 after a retried cache timeout.
func (t *Truth) OKWithTimeout() (Request, bool) {
	for _, r := range t.Requests {
		if r.Status == 200 && r.CacheTimeouts > 0 {
			return r, true
		}
	}
	return Request{}, false
}

// Slowest is the statement with the most total time.
func (t *Truth) Slowest() *Statement {
	var best *Statement
	for _, k := range slices.Sorted(maps.Keys(t.Statements)) {
		if s := t.Statements[k]; best == nil || s.Total > best.Total {
			best = s
		}
	}
	return best
}

// StatementsOf are the statements of a system.
func (t *Truth) StatementsOf(system string) []*Statement {
	var out []*Statement
	for _, k := range slices.Sorted(maps.Keys(t.Statements)) {
		if s := t.Statements[k]; s.System == system {
			out = append(out, s)
		}
	}
	return out
}

// Services are the services that emitted spans, sorted.
func (t *Truth) Services() []string { return slices.Sorted(maps.Keys(t.Spans)) }

// Digest describes what the SDKs emitted for a trace, one span a line.
func (t *Truth) Digest(traceID string) string {
	var b []byte
	for _, d := range t.digests[traceID] {
		b = fmt.Appendf(b, "    %s\n", d)
	}
	for _, d := range t.logDigests[traceID] {
		b = fmt.Appendf(b, "    %s\n", d)
	}
	return string(b)
}

// Check is the record's own consistency: a record that fails it cannot judge runlens.
func (t *Truth) Check() []string {
	var bad []string
	if len(t.Requests) != planRequests {
		bad = append(bad, fmt.Sprintf("%d requests recorded, %d planned", len(t.Requests), planRequests))
	}
	seen := map[string]bool{}
	for _, r := range t.Requests {
		if len(r.TraceID) != 32 || seen[r.TraceID] {
			bad = append(bad, fmt.Sprintf("request trace id %q is not a new trace id", r.TraceID))
		}
		seen[r.TraceID] = true
		failCauses := 0
		for _, c := range r.Causes {
			if c != CauseCacheTimeout {
				failCauses++
			}
		}
		if r.Failed() != (failCauses == 1) || failCauses > 1 {
			bad = append(bad, fmt.Sprintf("request %s ended %d with causes %v", r.TraceID, r.Status, r.Causes))
		}
		if (r.CacheTimeouts > 0) != slices.Contains(r.Causes, CauseCacheTimeout) {
			bad = append(bad, fmt.Sprintf("request %s: %d cache timeouts, causes %v", r.TraceID, r.CacheTimeouts, r.Causes))
		}
	}
	if got := t.StatusCount(5); got != planAddressInvalid+planQtyLimit {
		bad = append(bad, fmt.Sprintf("%d requests failed, %d planned", got, planAddressInvalid+planQtyLimit))
	}
	if got := t.StatusCount(4); got != planRejected {
		bad = append(bad, fmt.Sprintf("%d requests rejected, %d planned", got, planRejected))
	}
	if n := len(t.RunsWith(CauseCacheTimeout)); n < planSlowCart*9/10 {
		bad = append(bad, fmt.Sprintf("only %d requests had a cache timeout, %d planned", n, planSlowCart))
	}
	if _, ok := t.OKWithTimeout(); !ok {
		bad = append(bad, "no request returned 200 after a cache timeout")
	}
	slow := t.Statements[StatementKey(SystemMySQL, SlowStatement)]
	if slow == nil || t.Slowest() != slow {
		bad = append(bad, fmt.Sprintf("the slow statement is not the slowest: slowest is %+v", t.Slowest()))
	} else {
		for _, s := range t.Statements {
			if s != slow && s.Total*3/2 > slow.Total {
				bad = append(bad, fmt.Sprintf("%q (%v) is within 1.5× of the slow statement (%v): too close to rank", s.Text, s.Total, slow.Total))
			}
		}
		if len(slow.Services) != 2 {
			bad = append(bad, fmt.Sprintf("the slow statement ran in %v, want inventory and legacy", slow.Services))
		}
	}
	return bad
}

// ledger is where the services and the driver record what happened, keyed by trace.
type ledger struct {
	mu         sync.Mutex
	requests   []Request
	causes     map[string]map[Cause]bool
	timeouts   map[string]int
	statements map[string]*Statement
	lockWaits  int
	retries    int
	// timedOut is closed, per order, when a cart read of it first times out.
	timedOut map[int64]chan struct{}
}

// firstTimeout is closed when a cart read of order first times out.
func (l *ledger) firstTimeout(order int64) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := l.timedOut[order]
	if ch == nil {
		ch = make(chan struct{})
		l.timedOut[order] = ch
	}
	return ch
}

func newLedger() *ledger {
	return &ledger{causes: map[string]map[Cause]bool{}, timeouts: map[string]int{}, statements: map[string]*Statement{},
		timedOut: map[int64]chan struct{}{}}
}

func traceOf(ctx context.Context) string {
	return trace.SpanContextFromContext(ctx).TraceID().String()
}

func (l *ledger) cause(ctx context.Context, c Cause) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := traceOf(ctx)
	if l.causes[id] == nil {
		l.causes[id] = map[Cause]bool{}
	}
	l.causes[id][c] = true
}

func (l *ledger) cacheTimeout(ctx context.Context, order int64) {
	l.cause(ctx, CauseCacheTimeout)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timeouts[traceOf(ctx)]++
	if ch := l.timedOut[order]; ch == nil {
		ch = make(chan struct{})
		close(ch)
		l.timedOut[order] = ch
	} else {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

func (l *ledger) statement(service, system, text string, d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := StatementKey(system, text)
	s := l.statements[k]
	if s == nil {
		s = &Statement{System: system, Text: text, ByService: map[string]int{}}
		l.statements[k] = s
	}
	if !slices.Contains(s.Services, service) {
		s.Services = append(s.Services, service)
		sort.Strings(s.Services)
	}
	s.Count++
	s.ByService[service]++
	s.Total += d
	if err != nil {
		s.Errors++
	}
}

func (l *ledger) notice(lockWait bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lockWait {
		l.lockWaits++
	} else {
		l.retries++
	}
}

func (l *ledger) driven(traceID string, status int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, Request{TraceID: traceID, Status: status})
}

func (l *ledger) finish(t *tally) *Truth {
	l.mu.Lock()
	defer l.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := &Truth{Statements: l.statements, Spans: maps.Clone(t.spans), Logs: maps.Clone(t.logs),
		SpansPerTrace: map[string]int{}, LogsPerTrace: map[string]int{}, digests: map[string][]SpanDigest{},
		logDigests: map[string][]string{}, LockWaitNotices: l.lockWaits, RetryNotices: l.retries}
	for id, n := range t.spansPerTrace {
		tr.SpansPerTrace[id.String()] = n
	}
	for id, n := range t.logsPerTrace {
		tr.LogsPerTrace[id.String()] = n
	}
	for id, d := range t.digests {
		tr.digests[id.String()] = d
	}
	for id, d := range t.logDigests {
		tr.logDigests[id.String()] = d
	}
	for _, r := range l.requests {
		for _, c := range []Cause{CauseAddressInvalid, CauseQtyLimit, CauseCacheTimeout} {
			if l.causes[r.TraceID][c] {
				r.Causes = append(r.Causes, c)
			}
		}
		r.CacheTimeouts = l.timeouts[r.TraceID]
		tr.Requests = append(tr.Requests, r)
	}
	return tr
}
