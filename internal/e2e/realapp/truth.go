package realapp

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// Service names, as the resources say them.
const (
	ServiceShop     = "shop-api"
	ServicePayments = "payments"
	ServiceWorker   = "shop-worker"
)

// Kind is one kind of failure the workload produces on purpose.
type Kind string

// The failure kinds; each is one error group in a correct answer.
const (
	// KindOrderNotFound: GET /orders/{id} of an id that does not exist, 404, raised by the
	// shop's handler span.
	KindOrderNotFound Kind = "order not found"
	// KindPaymentDeclined: POST /checkout with a card the processor declines; raised in the
	// payments service (its card.authorize span), answered 402 by both services.
	KindPaymentDeclined Kind = "payment declined"
	// KindPanic: GET /reports/{day} of a day past the table, an index-out-of-range panic that
	// the shop's recover middleware turns into a 500.
	KindPanic Kind = "panic"
	// KindJobFailed: the last run of the nightly-export job.
	KindJobFailed Kind = "job failed"
	// KindLoneLog: an error log of the shop emitted outside any trace.
	KindLoneLog Kind = "lone error log"
)

// JobName is the background job's name.
const JobName = "nightly-export"

// The statements runlens must tell apart.
const (
	// SlowStatement is the deliberately slow query, as the services send it.
	SlowStatement = sqlSearchOrders
	// FastStatement is the primary-key read on the same table.
	FastStatement = sqlOrderByID
)

// Request is one HTTP request the driver sent to the shop, as both ends saw it.
type Request struct {
	// Route is the pattern that served it, e.g. "GET /orders/{id}"; the server span's name.
	Route string
	// Status is the HTTP status the driver received.
	Status  int
	TraceID string
	// Failure is the kind of failure the shop produced, "" when it succeeded.
	Failure Kind
	// Inner and Outer bracket the shop's server span: Inner ≤ span duration ≤ Outer.
	Inner, Outer time.Duration
	// Began is when the outer timer started: the server span started within [Began, Began+Outer].
	Began time.Time
}

// Failure is one failure as the code that raised it counted it.
type Failure struct {
	Kind    Kind
	Service string
	// TraceID is empty for the lone log.
	TraceID string
	Message string
}

// JobRun is one run of the background job.
type JobRun struct {
	ID, Name string
	// Status is the app's own word, as sent in job.status.
	Status string
	// ExitCode is the number the job sent as the string job.exit_code.
	ExitCode   int
	TraceID    string
	Start, End time.Time
	Error      string
}

// Query is one statement a service ran, as the traced driver saw it.
type Query struct {
	Service, SQL, TraceID, SpanID, ParentSpanID string
	Duration                                    time.Duration
	Failed                                      bool
}

// Truth is what the workload did, counted by the workload as it ran.
type Truth struct {
	Requests []Request
	Failures []Failure
	Jobs     []JobRun
	Queries  []Query
	// PoolSpans counts the connect and pool-acquire spans the traced driver created; they are
	// database spans that run no statement.
	PoolSpans map[string]int
	// Prepares counts prepare spans; the services prepare nothing.
	Prepares int
	// ChargeRequests is how many requests the payments service served.
	ChargeRequests int
	// CriticalPaths maps the trace id of each declined checkout to its chain of span ids from
	// the root to the span that ended last at every level: the shop's server span, its three
	// middleware spans and checkout.create, the CLIENT span of the call to payments, the
	// payments server span, its middleware and charges.create, and the fraud-review query (the
	// slow statement), which ends after card.authorize raised the decline.
	CriticalPaths map[string][]string
	// Spans and Logs count what each service's SDK emitted; SpansPerTrace and LogsPerTrace
	// per trace id.
	Spans, Logs                 map[string]int
	SpansPerTrace, LogsPerTrace map[string]int
	// ErrorLogsInTrace and ErrorLogsOutside count error log records by whether they carry a
	// trace id.
	ErrorLogsInTrace, ErrorLogsOutside int

	problems []string
}

// Services lists the services whose SDKs emitted telemetry.
func (t *Truth) Services() []string {
	var out []string
	for _, m := range []map[string]int{t.Spans, t.Logs} {
		for svc := range m {
			if !slices.Contains(out, svc) {
				out = append(out, svc)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Occurrences is the number of failures: one per failed request, failed job run and lone
// error log, however many spans and logs reported each.
func (t *Truth) Occurrences() int { return len(t.Failures) }

// FailuresOf returns the failures of one kind.
func (t *Truth) FailuresOf(k Kind) []Failure {
	var out []Failure
	for _, f := range t.Failures {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

// FailedRequests counts the requests that failed.
func (t *Truth) FailedRequests() int {
	n := 0
	for _, r := range t.Requests {
		if r.Failure != "" {
			n++
		}
	}
	return n
}

// FailedRunTraceIDs is the trace id of every run that failed: failed requests and job runs.
func (t *Truth) FailedRunTraceIDs() []string {
	var out []string
	for _, r := range t.Requests {
		if r.Failure != "" {
			out = append(out, r.TraceID)
		}
	}
	for _, j := range t.Jobs {
		if j.Error != "" {
			out = append(out, j.TraceID)
		}
	}
	slices.Sort(out)
	return out
}

// Runs is the number of runs: every request is a trace of its own, and so is every job run.
func (t *Truth) Runs() int { return len(t.Requests) + len(t.Jobs) }

// RouteStats is what the driver and the shop counted for one route.
type RouteStats struct {
	Count, Errors int
}

// Routes counts requests and failures per route.
func (t *Truth) Routes() map[string]RouteStats {
	out := map[string]RouteStats{}
	for _, r := range t.Requests {
		s := out[r.Route]
		s.Count++
		if r.Failure != "" {
			s.Errors++
		}
		out[r.Route] = s
	}
	return out
}

// Bracket is the range a nearest-rank percentile of the shop's server spans must lie in: the
// same percentile of the inner and of the outer measurements.
func (t *Truth) Bracket(p float64) (lo, hi time.Duration) {
	inner := make([]time.Duration, len(t.Requests))
	outer := make([]time.Duration, len(t.Requests))
	for i, r := range t.Requests {
		inner[i], outer[i] = r.Inner, r.Outer
	}
	return nearestRank(inner, p), nearestRank(outer, p)
}

// TrafficBracket is where the first and the last server span of the shop started: the first
// in [first.lo, first.hi], the last in [last.lo, last.hi] (unix ms, widened to whole ms).
func (t *Truth) TrafficBracket() (first, last [2]int64) {
	first = [2]int64{math.MaxInt64, math.MaxInt64}
	last = [2]int64{math.MinInt64, math.MinInt64}
	for _, r := range t.Requests {
		lo, hi := r.Began.UnixMilli(), r.Began.Add(r.Outer).UnixMilli()+1
		first = [2]int64{min(first[0], lo), min(first[1], hi)}
		last = [2]int64{max(last[0], lo), max(last[1], hi)}
	}
	return first, last
}

// AverageBracket is the range of the mean server-span duration.
func (t *Truth) AverageBracket() (lo, hi time.Duration) {
	var in, out time.Duration
	for _, r := range t.Requests {
		in += r.Inner
		out += r.Outer
	}
	n := time.Duration(max(len(t.Requests), 1))
	return in / n, out / n
}

// nearestRank is element ceil(p·n)−1 of the sorted values.
func nearestRank(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// StatementStats is what the workload measured for one statement text.
type StatementStats struct {
	Count int
	Total time.Duration
	// Services lists who ran it.
	Services []string
}

// Statements groups the queries by their exact text.
func (t *Truth) Statements() map[string]StatementStats {
	out := map[string]StatementStats{}
	for _, q := range t.Queries {
		s := out[q.SQL]
		s.Count++
		s.Total += q.Duration
		if !slices.Contains(s.Services, q.Service) {
			s.Services = append(s.Services, q.Service)
			slices.Sort(s.Services)
		}
		out[q.SQL] = s
	}
	return out
}

// LastJob is the newest job run.
func (t *Truth) LastJob() JobRun { return t.Jobs[len(t.Jobs)-1] }

// Check lists what would make this truth unfit to judge runlens by: the driver and the
// services disagreeing, or the database not behaving as designed. A test fails on these
// before it asks runlens anything.
func (t *Truth) Check() []string {
	bad := slices.Clone(t.problems)
	kinds := map[Kind]int{}
	for _, r := range t.Requests {
		if r.TraceID == "" {
			bad = append(bad, fmt.Sprintf("a %s request came back without a trace id", r.Route))
		}
		if r.Failure != "" {
			kinds[r.Failure]++
		}
		if !(r.Inner > 0 && r.Inner <= r.Outer) {
			bad = append(bad, fmt.Sprintf("request %s: inner %v, outer %v", r.TraceID, r.Inner, r.Outer))
		}
	}
	for _, k := range []Kind{KindOrderNotFound, KindPaymentDeclined, KindPanic} {
		if raised := len(t.FailuresOf(k)); raised != kinds[k] || raised == 0 {
			bad = append(bad, fmt.Sprintf("%s: the services raised %d, the driver saw %d failed requests", k, raised, kinds[k]))
		}
	}
	if n := len(t.FailuresOf(KindJobFailed)); n != 1 || t.LastJob().Error == "" {
		bad = append(bad, fmt.Sprintf("want exactly the last job run failed, got %d failed runs", n))
	}
	if t.ErrorLogsOutside != len(t.FailuresOf(KindLoneLog)) || t.ErrorLogsOutside != 1 {
		bad = append(bad, fmt.Sprintf("want one error log outside any trace, the SDK emitted %d", t.ErrorLogsOutside))
	}
	if t.Prepares != 0 {
		bad = append(bad, fmt.Sprintf("%d prepare spans: the services should run statements in exec mode", t.Prepares))
	}
	if t.PoolSpans["connect"] == 0 || t.PoolSpans["pool.acquire"] == 0 {
		bad = append(bad, fmt.Sprintf("want connect and pool.acquire spans, got %v", t.PoolSpans))
	}
	if len(t.CriticalPaths) != len(t.FailuresOf(KindPaymentDeclined)) {
		bad = append(bad, fmt.Sprintf("%d critical paths for %d declined checkouts", len(t.CriticalPaths), len(t.FailuresOf(KindPaymentDeclined))))
	}
	st := t.Statements()
	slow := st[SlowStatement]
	for sql, s := range st {
		if sql != SlowStatement && 2*s.Total > slow.Total {
			bad = append(bad, fmt.Sprintf("the slow statement took %v in all, not well above %v of %q", slow.Total, s.Total, sql))
		}
	}
	if st[FastStatement].Count == 0 || slow.Count == 0 {
		bad = append(bad, "the slow or the fast statement never ran")
	}
	return bad
}

// ledger collects the truth from the goroutines of the workload.
type ledger struct {
	mu       sync.Mutex
	truth    Truth
	shopSeen map[string]*served
	paySeen  map[string]*served
	declined map[string]bool
	results  []Request
}

func newLedger() *ledger {
	return &ledger{truth: Truth{PoolSpans: map[string]int{}}, shopSeen: map[string]*served{}, paySeen: map[string]*served{}, declined: map[string]bool{}}
}

func (l *ledger) fail(k Kind, service, traceID, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.truth.Failures = append(l.truth.Failures, Failure{Kind: k, Service: service, TraceID: traceID, Message: msg})
	if k == KindPaymentDeclined {
		l.declined[traceID] = true
	}
}

func (l *ledger) addQuery(q Query) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.truth.Queries = append(l.truth.Queries, q)
}

func (l *ledger) addPoolSpan(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.truth.PoolSpans[name]++
}

func (l *ledger) addPrepare() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.truth.Prepares++
}

func (l *ledger) shopServed(s *served) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shopSeen[s.traceID] = s
}

func (l *ledger) paymentServed(s *served) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paySeen[s.traceID] = s
	l.truth.ChargeRequests++
}

func (l *ledger) addJob(j JobRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.truth.Jobs = append(l.truth.Jobs, j)
}

// driven notes what the driver got back; finish joins it with what the shop's server side
// knew, once the servers have stopped.
func (l *ledger) driven(route string, status int, traceID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.results = append(l.results, Request{Route: route, Status: status, TraceID: traceID})
}

// finish assembles the critical paths and hands the truth over.
func (l *ledger) finish(t *tally) *Truth {
	l.mu.Lock()
	defer l.mu.Unlock()
	tr := l.truth
	failed := map[string]Kind{}
	for _, f := range tr.Failures {
		if f.TraceID != "" {
			failed[f.TraceID] = f.Kind
		}
	}
	for _, r := range l.results {
		s, ok := l.shopSeen[r.TraceID]
		if !ok {
			tr.problems = append(tr.problems, fmt.Sprintf("%s answered %d with trace id %q that the shop never served", r.Route, r.Status, r.TraceID))
			continue
		}
		r.Inner, r.Outer, r.Began, r.Failure = s.inner, s.outer, s.began, failed[r.TraceID]
		tr.Requests = append(tr.Requests, r)
	}
	tr.CriticalPaths = map[string][]string{}
	for traceID := range l.declined {
		shop, pay := l.shopSeen[traceID], l.paySeen[traceID]
		if shop == nil || pay == nil {
			continue
		}
		var review string
		for _, q := range tr.Queries {
			if q.TraceID == traceID && q.Service == ServicePayments && q.SQL == SlowStatement {
				review = q.SpanID
			}
		}
		if review == "" {
			continue
		}
		path := append(slices.Clone(shop.chain), pay.clientParent.String())
		path = append(append(path, pay.chain...), review)
		tr.CriticalPaths[traceID] = path
	}
	sort.Slice(tr.Requests, func(i, j int) bool { return tr.Requests[i].TraceID < tr.Requests[j].TraceID })
	t.mu.Lock()
	defer t.mu.Unlock()
	tr.Spans, tr.Logs, tr.SpansPerTrace, tr.LogsPerTrace = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	for k, v := range t.spans {
		tr.Spans[k] = v
	}
	for k, v := range t.logs {
		tr.Logs[k] = v
	}
	for k, v := range t.spansPerTrace {
		tr.SpansPerTrace[k.String()] = v
	}
	for k, v := range t.logsPerTrace {
		tr.LogsPerTrace[k.String()] = v
	}
	tr.ErrorLogsInTrace, tr.ErrorLogsOutside = t.errorLogsInTrace, t.errorLogsOutside
	return &tr
}
