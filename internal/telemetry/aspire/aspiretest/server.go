// Package aspiretest is an Aspire dashboard telemetry API for tests, written from the API's
// documented behaviour: GET /api/telemetry/resources, /spans, /logs, /traces and
// /traces/{traceId} filtered by resource (repeatable; an unknown one is 404), traceId,
// hasError, severity (a minimum level) and limit (the newest items; at most 10,000 per query),
// OTLP JSON inside {"data", "totalCount", "returnedCount"} with every attribute value a string
// and unset statuses left out; X-API-Key enforced (401 without it) when a key is set; and
// POST /api/telemetry/validateToken exchanging a login token for the key. It counts the
// requests of each path, so tests and benchmarks can say what a tool costs the dashboard.
package aspiretest

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// MaxItems is the most items one query returns, as the dashboard caps it.
const MaxItems = 10_000

// Default limits when a query gives none.
const (
	DefaultLimit      = 200
	DefaultTraceLimit = 100
)

// Options configure a Server.
type Options struct {
	// APIKey, when set, must arrive as X-API-Key on every telemetry call.
	APIKey string
	// Token is the login token validateToken exchanges for APIKey ("" refuses every token).
	Token string
}

// Server is a test dashboard. Its zero value is not usable: call New.
type Server struct {
	*httptest.Server
	o Options

	mu        sync.RWMutex
	resources []resource
	spans     []spanRec // oldest first
	logs      []logRec  // oldest first

	counts sync.Map // path -> *atomic.Int64
	fault  atomic.Pointer[func(http.ResponseWriter, *http.Request) bool]
}

type resource struct {
	name  string
	attrs resourceJSON
	key   string
}

type spanRec struct {
	res     int
	scope   string
	startNs int64
	traceID string
	isError bool
	j       spanJSON
}

type logRec struct {
	res     int
	scope   string
	timeNs  int64
	traceID string
	level   int
	j       logJSON
}

// New starts a server on loopback; the caller closes it.
func New(o Options) *Server {
	s := &Server{o: o}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewTLS starts the server over https with httptest's certificate.
func NewTLS(o Options) *Server {
	s := &Server{o: o}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// A client that tries http first on this port is expected; its handshake errors are noise.
	s.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Server.StartTLS()
	return s
}

// SetFault makes f answer requests before the API does; f returns false to let the API answer.
// nil removes it.
func (s *Server) SetFault(f func(w http.ResponseWriter, r *http.Request) bool) {
	if f == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}

// Requests returns the number of requests per path since the last Reset
// ("/api/telemetry/traces/{traceId}" for a trace's).
func (s *Server) Requests() map[string]int {
	out := map[string]int{}
	s.counts.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n > 0 {
			out[k.(string)] = int(n)
		}
		return true
	})
	return out
}

// Total is the number of requests since the last Reset.
func (s *Server) Total() int {
	n := 0
	for _, v := range s.Requests() {
		n += v
	}
	return n
}

// Reset zeroes the request counts.
func (s *Server) Reset() {
	s.counts.Range(func(k, v any) bool { v.(*atomic.Int64).Store(0); return true })
}

func (s *Server) count(path string) {
	v, _ := s.counts.LoadOrStore(path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Load adds traces and logs as the dashboard would store them when received over OTLP.
func (s *Server) Load(td ptrace.Traces, ld plog.Logs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := s.resourceOf(rs.Resource().Attributes())
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				s.spans = append(s.spans, spanRec{
					res: res, scope: ss.Scope().Name(), startNs: int64(sp.StartTimestamp()),
					traceID: sp.TraceID().String(), isError: sp.Status().Code() == ptrace.StatusCodeError, j: spanOf(sp),
				})
			}
		}
	}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := s.resourceOf(rl.Resource().Attributes())
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				r := sl.LogRecords().At(k)
				j := logOf(r)
				t, _ := strconv.ParseInt(j.TimeUnixNano, 10, 64)
				s.logs = append(s.logs, logRec{res: res, scope: sl.Scope().Name(), timeNs: t, traceID: j.TraceID, level: level(int(r.SeverityNumber())), j: j})
			}
		}
	}
	slices.SortStableFunc(s.spans, func(a, b spanRec) int { return cmp.Compare(a.startNs, b.startNs) })
	slices.SortStableFunc(s.logs, func(a, b logRec) int { return cmp.Compare(a.timeNs, b.timeNs) })
}

// resourceOf returns the index of the resource with these attributes, adding it if new. A
// resource is named by its service.name ("unknown_service" without one).
func (s *Server) resourceOf(m pcommon.Map) int {
	attrs := textAttrs(m)
	slices.SortFunc(attrs, func(a, b keyValue) int { return cmp.Compare(a.Key, b.Key) })
	b, _ := json.Marshal(attrs)
	key := string(b)
	for i, r := range s.resources {
		if r.key == key {
			return i
		}
	}
	name := "unknown_service"
	if v, ok := m.Get("service.name"); ok && v.AsString() != "" {
		name = v.AsString()
	}
	s.resources = append(s.resources, resource{name: name, attrs: resourceJSON{Attributes: attrs}, key: key})
	return len(s.resources) - 1
}

// The dashboard's log levels, lowest first, and the OTLP severity numbers they cover.
var levels = []string{"trace", "debug", "information", "warning", "error", "critical"}

func level(severityNumber int) int {
	if severityNumber <= 0 {
		return 2 // a record without a severity is shown as Information
	}
	return min((severityNumber-1)/4, len(levels)-1)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	counted := path
	if strings.HasPrefix(path, pathTraces+"/") {
		counted = pathTraces + "/{traceId}"
	}
	s.count(counted)
	if f := s.fault.Load(); f != nil && (*f)(w, r) {
		return
	}
	if path == pathValidateToken {
		s.validateToken(w, r)
		return
	}
	if !strings.HasPrefix(path, "/api/telemetry/") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if s.o.APIKey != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-Key")), []byte(s.o.APIKey)) != 1 {
		w.Header().Set("WWW-Authenticate", "ApiKey")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	limit, ok := parseLimit(q.Get("limit"), DefaultLimit)
	if !ok {
		http.Error(w, "limit must be a positive integer", http.StatusBadRequest)
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case path == pathResources:
		s.listResources(w)
	case path == pathSpans:
		s.listSpans(w, q["resource"], q.Get("traceId"), q.Get("hasError"), limit)
	case path == pathLogs:
		s.listLogs(w, q["resource"], q.Get("traceId"), q.Get("severity"), limit)
	case path == pathTraces:
		tl, _ := parseLimit(q.Get("limit"), DefaultTraceLimit)
		s.listTraces(w, q["resource"], q.Get("hasError"), tl)
	case strings.HasPrefix(path, pathTraces+"/"):
		s.oneTrace(w, strings.TrimPrefix(path, pathTraces+"/"))
	default:
		http.NotFound(w, r)
	}
}

const (
	pathResources     = "/api/telemetry/resources"
	pathSpans         = "/api/telemetry/spans"
	pathLogs          = "/api/telemetry/logs"
	pathTraces        = "/api/telemetry/traces"
	pathValidateToken = "/api/telemetry/validateToken"
)

func parseLimit(v string, def int) (int, bool) {
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0
}

func (s *Server) validateToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var in struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&in); err != nil {
		http.Error(w, "expected {\"token\": …}", http.StatusBadRequest)
		return
	}
	if s.o.Token == "" || subtle.ConstantTimeCompare([]byte(in.Token), []byte(s.o.Token)) != 1 {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	writeJSON(w, map[string]string{"apiKey": s.o.APIKey})
}

func (s *Server) listResources(w http.ResponseWriter) {
	type info struct {
		Name        string `json:"name"`
		InstanceID  string `json:"instanceId,omitempty"`
		DisplayName string `json:"displayName"`
		HasLogs     bool   `json:"hasLogs"`
		HasTraces   bool   `json:"hasTraces"`
		HasMetrics  bool   `json:"hasMetrics"`
	}
	out := make([]info, len(s.resources))
	for i, r := range s.resources {
		out[i] = info{Name: r.name, DisplayName: r.name}
	}
	for _, sp := range s.spans {
		out[sp.res].HasTraces = true
	}
	for _, l := range s.logs {
		out[l.res].HasLogs = true
	}
	writeJSON(w, out)
}

// resolve maps resource names to indexes; ok is false when one is unknown (a 404).
func (s *Server) resolve(names []string) (map[int]bool, bool) {
	if len(names) == 0 {
		return nil, true
	}
	out := map[int]bool{}
	for _, n := range names {
		found := false
		for i, r := range s.resources {
			if strings.EqualFold(r.name, n) {
				out[i], found = true, true
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// matchID compares a full id, or the shortened prefix the dashboard shows.
func matchID(id, want string) bool {
	return want == "" || strings.EqualFold(id, want) || (len(want) >= 7 && strings.HasPrefix(id, strings.ToLower(want)))
}

func (s *Server) listSpans(w http.ResponseWriter, resNames []string, traceID, hasError string, limit int) {
	res, ok := s.resolve(resNames)
	if !ok {
		http.Error(w, "unknown resource", http.StatusNotFound)
		return
	}
	var match []spanRec
	for _, sp := range s.spans {
		if (res == nil || res[sp.res]) && matchID(sp.traceID, traceID) && errorMatches(sp.isError, hasError) {
			match = append(match, sp)
		}
	}
	kept := newest(match, min(limit, MaxItems))
	writeJSON(w, envelope{Data: s.spanData(kept), TotalCount: len(match), ReturnedCount: len(kept)})
}

func (s *Server) listLogs(w http.ResponseWriter, resNames []string, traceID, severity string, limit int) {
	res, ok := s.resolve(resNames)
	if !ok {
		http.Error(w, "unknown resource", http.StatusNotFound)
		return
	}
	minLevel := 0
	if severity != "" {
		minLevel = slices.Index(levels, strings.ToLower(severity))
		if minLevel < 0 {
			http.Error(w, "unknown severity", http.StatusBadRequest)
			return
		}
	}
	var match []logRec
	for _, l := range s.logs {
		if (res == nil || res[l.res]) && (traceID == "" || strings.Contains(l.traceID, strings.ToLower(traceID))) && l.level >= minLevel {
			match = append(match, l)
		}
	}
	kept := newest(match, min(limit, MaxItems))
	writeJSON(w, envelope{Data: s.logData(kept), TotalCount: len(match), ReturnedCount: len(kept)})
}

func (s *Server) listTraces(w http.ResponseWriter, resNames []string, hasError string, limit int) {
	res, ok := s.resolve(resNames)
	if !ok {
		http.Error(w, "unknown resource", http.StatusNotFound)
		return
	}
	// Traces in the order their first span arrived; a trace involves a resource when one of
	// its spans came from it.
	var order []string
	byTrace := map[string][]spanRec{}
	involved, failed := map[string]bool{}, map[string]bool{}
	for _, sp := range s.spans {
		if _, seen := byTrace[sp.traceID]; !seen {
			order = append(order, sp.traceID)
		}
		byTrace[sp.traceID] = append(byTrace[sp.traceID], sp)
		involved[sp.traceID] = involved[sp.traceID] || res == nil || res[sp.res]
		failed[sp.traceID] = failed[sp.traceID] || sp.isError
	}
	var match []string
	for _, id := range order {
		if involved[id] && errorMatches(failed[id], hasError) {
			match = append(match, id)
		}
	}
	kept := newest(match, min(limit, MaxItems))
	var spans []spanRec
	for _, id := range kept {
		spans = append(spans, byTrace[id]...)
	}
	writeJSON(w, envelope{Data: s.spanData(spans), TotalCount: len(match), ReturnedCount: len(kept)})
}

func (s *Server) oneTrace(w http.ResponseWriter, traceID string) {
	var spans []spanRec
	for _, sp := range s.spans {
		if strings.EqualFold(sp.traceID, traceID) {
			spans = append(spans, sp)
		}
	}
	if len(spans) == 0 {
		http.Error(w, "trace not found", http.StatusNotFound)
		return
	}
	writeJSON(w, envelope{Data: s.spanData(spans), TotalCount: len(spans), ReturnedCount: len(spans)})
}

func errorMatches(isError bool, hasError string) bool {
	switch strings.ToLower(hasError) {
	case "true":
		return isError
	case "false":
		return !isError
	}
	return true
}

// newest keeps the last n items (the list is oldest first).
func newest[T any](items []T, n int) []T {
	if len(items) > n {
		return items[len(items)-n:]
	}
	return items
}

func (s *Server) spanData(spans []spanRec) map[string]any {
	var out []resourceSpansJSON
	idx := map[[2]string]int{}
	for _, sp := range spans {
		k := [2]string{strconv.Itoa(sp.res), sp.scope}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, resourceSpansJSON{Resource: s.resources[sp.res].attrs, ScopeSpans: []scopeSpansJSON{{Scope: scopeJSON{Name: sp.scope}}}})
		}
		out[i].ScopeSpans[0].Spans = append(out[i].ScopeSpans[0].Spans, sp.j)
	}
	if out == nil {
		out = []resourceSpansJSON{}
	}
	return map[string]any{"resourceSpans": out}
}

func (s *Server) logData(logs []logRec) map[string]any {
	var out []resourceLogsJSON
	idx := map[[2]string]int{}
	for _, l := range logs {
		k := [2]string{strconv.Itoa(l.res), l.scope}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, resourceLogsJSON{Resource: s.resources[l.res].attrs, ScopeLogs: []scopeLogsJSON{{Scope: scopeJSON{Name: l.scope}}}})
		}
		out[i].ScopeLogs[0].LogRecords = append(out[i].ScopeLogs[0].LogRecords, l.j)
	}
	if out == nil {
		out = []resourceLogsJSON{}
	}
	return map[string]any{"resourceLogs": out}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}
