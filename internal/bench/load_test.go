package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestLoadReport is B11 (BENCHMARKS.md), the load benchmark: one `runlens collect` ingesting
// protobuf batches of 512 spans from 4 senders while 8 `runlens serve` sessions call the
// telemetry tools against the same store, in two phases of RUNLENS_BENCH_LOAD_SECONDS each
// (default 120): agent-paced, then a closed loop (loadThinkTimes). It prints, per phase, each
// tool's latency, the sessions' peak RSS, the ingest rate meanwhile and the largest size the
// write-ahead log reached:
//
//	RUNLENS_BENCH=1 go test -run '^TestLoadReport$' -v -timeout 30m ./internal/bench
//
// Like TestReport it asserts that everything answered, not a target: a shared machine's
// timings are no verdict.
func TestLoadReport(t *testing.T) {
	if os.Getenv(envBench) != "1" {
		t.Skipf("set %s=1 to run the benchmarks (make bench)", envBench)
	}
	seconds := 120
	if v, err := strconv.Atoi(os.Getenv("RUNLENS_BENCH_LOAD_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	const sessions, senders, batchSpans = 8, 4, 512
	// The preload gives the tools a store with history before the sessions start:
	// RUNLENS_BENCH_LOAD_PRELOAD batches of 512 spans (default 2,000: about a million spans).
	preload := 2000
	if v, err := strconv.Atoi(os.Getenv("RUNLENS_BENCH_LOAD_PRELOAD")); err == nil && v >= 0 {
		preload = v
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins, err := Build(ctx, root, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "project")
	if err := WriteProject(project); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	collector := exec.Command(bins.Runlens, "collect", "--project-root", project, "--listen", addr, "--listen-grpc", "off")
	collector.Env = cleanEnv(os.Environ())
	var collectorErr tailBuffer
	collectorErr.max = 4 << 10
	collector.Stderr = &collectorErr
	if err := collector.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = collector.Process.Signal(syscall.SIGTERM)
		_ = collector.Wait()
	}()
	url := "http://" + addr + "/v1/traces"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}, Timeout: time.Minute}
	send := func(body []byte) error {
		resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	// The collector is up once a batch is acknowledged.
	start := time.Now().Add(-50 * time.Minute)
	// The preload is history, 50 minutes old; the batches sent while the sessions call carry the
	// time they are sent at, as an app's spans do, so the sessions' windows end in the live
	// bucket.
	var batch atomic.Uint64
	var live atomic.Bool
	next := func() (uint64, []byte) {
		n := batch.Add(1) - 1
		at := start.Add(time.Duration(n) * time.Millisecond)
		if live.Load() {
			at = time.Now()
		}
		return n, loadBatch(t, n, batchSpans, at)
	}
	// acked is the newest acknowledged batch: get_run asks for its first trace, as an agent asks
	// for a run it has just seen (the oldest batches are pruned once the store reaches its
	// size limit).
	var acked atomic.Uint64
	ack := func(n uint64) {
		for old := acked.Load(); n > old && !acked.CompareAndSwap(old, n); old = acked.Load() {
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	_, first := next() // batch 0
	for {
		err := send(first)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector never acknowledged a batch: %v\n%s", err, collectorErr.String())
		}
		time.Sleep(50 * time.Millisecond) // polling the collector's start-up with a deadline
	}
	for range preload {
		n, body := next()
		if err := send(body); err != nil {
			t.Fatal(err)
		}
		ack(n)
	}
	live.Store(true)

	serve := Target{Name: "runlens", Path: bins.Runlens, Dir: project,
		Args: []string{"serve", "--project-root", project, "--receiver", "off"}}
	var open []*Session
	defer func() {
		for _, s := range open {
			s.Close()
		}
	}()
	for range sessions {
		s, err := Open(serve)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, s)
	}

	storePath := filepath.Join(project, ".runlens", "telemetry.db")
	var out strings.Builder
	fmt.Fprintf(&out, "%d s per phase, %d serve sessions, collector with %d senders × %d-span batches, %d batches preloaded\n",
		seconds, sessions, senders, batchSpans, preload)
	for _, think := range loadThinkTimes() {
		r := runLoadPhase(t, loadPhase{seconds: seconds, think: think, senders: senders, batchSpans: batchSpans,
			sessions: open, send: send, next: next, ack: ack, acked: acked.Load, storePath: storePath})
		r.write(&out, t)
	}
	collectorMem, _ := ReadMemory(collector.Process.Pid)
	fmt.Fprintf(&out, "\ncollector peak RSS %s\n", mib(collectorMem.HWM))
	t.Log("\n" + out.String())
}

// loadThinkTimes are the phases' pauses between one session's answer and its next call: an
// agent-paced phase (one call a second per session — an agent's turn takes seconds, so this is
// several agents' worth) and a closed loop (every session calls again at once: on 2 cores this
// measures saturation, where the collector gets what the scheduler leaves it).
// RUNLENS_BENCH_LOAD_THINK_MS runs one phase with that pause instead.
func loadThinkTimes() []time.Duration {
	if v, err := strconv.Atoi(os.Getenv("RUNLENS_BENCH_LOAD_THINK_MS")); err == nil && v >= 0 {
		return []time.Duration{time.Duration(v) * time.Millisecond}
	}
	return []time.Duration{time.Second, 0}
}

// loadPhase is one measured period of the load benchmark.
type loadPhase struct {
	seconds             int
	think               time.Duration
	senders, batchSpans int
	sessions            []*Session
	send                func([]byte) error
	next                func() (uint64, []byte)
	ack                 func(batch uint64)
	acked               func() uint64
	storePath           string
}

// loadResult is what one phase measured.
type loadResult struct {
	think     time.Duration
	lat       map[string][]time.Duration
	peak      []int64
	spansPerS float64
	maxWAL    int64
	storeSize int64
	sendErrs  int64
	callErrs  []error
}

func runLoadPhase(t *testing.T, p loadPhase) loadResult {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ingested atomic.Int64
	var sendErrs atomic.Int64
	ingestStart := time.Now()
	for range p.senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, body := p.next()
				if err := p.send(body); err != nil {
					sendErrs.Add(1)
					continue
				}
				p.ack(n)
				ingested.Add(int64(p.batchSpans))
			}
		}()
	}
	// The write-ahead log's size, sampled: readers that never let go of their snapshots would
	// keep SQLite from restarting it, and every page a reader looks up would cost more.
	var maxWAL atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			if fi, err := os.Stat(p.storePath + "-wal"); err == nil && fi.Size() > maxWAL.Load() {
				maxWAL.Store(fi.Size())
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	calls := loadCalls()
	n := len(p.sessions)
	lat := make([]map[string][]time.Duration, n)
	peak := make([]int64, n)
	callErrs := make([]error, n)
	var sessWG sync.WaitGroup
	for i, s := range p.sessions {
		lat[i] = map[string][]time.Duration{}
		sessWG.Add(1)
		go func() {
			defer sessWG.Done()
			pause := time.NewTimer(0)
			defer pause.Stop()
			for k := i; ; k++ {
				select {
				case <-stop:
					return
				case <-pause.C:
				}
				c := calls[k%len(calls)]
				req := c.req
				if c.run != nil {
					req = c.run(p.acked(), p.batchSpans)
				}
				sum, err := s.RoundTrips(req, 0, 1)
				if err != nil {
					callErrs[i] = fmt.Errorf("%s: %w", c.name, err)
					return
				}
				lat[i][c.name] = append(lat[i][c.name], sum.Median)
				if m, err := ReadMemory(s.Pid()); err == nil {
					peak[i] = max(peak[i], m.HWM)
				}
				pause.Reset(p.think)
			}
		}()
	}
	time.Sleep(time.Duration(p.seconds) * time.Second) // the measured period itself, not a synchronisation
	close(stop)
	sessWG.Wait()
	wg.Wait()
	elapsed := time.Since(ingestStart)
	r := loadResult{think: p.think, lat: map[string][]time.Duration{}, peak: peak, maxWAL: maxWAL.Load(),
		spansPerS: float64(ingested.Load()) / elapsed.Seconds(), sendErrs: sendErrs.Load(), callErrs: callErrs}
	for i := range lat {
		for name, d := range lat[i] {
			r.lat[name] = append(r.lat[name], d...)
		}
	}
	if fi, err := os.Stat(p.storePath); err == nil {
		r.storeSize = fi.Size()
	}
	return r
}

// write reports the phase as a table and fails t on any error of the phase.
func (r loadResult) write(out *strings.Builder, t *testing.T) {
	for i, err := range r.callErrs {
		if err != nil {
			t.Errorf("think %s, session %d: %v", r.think, i, err)
		}
	}
	if r.sendErrs > 0 {
		t.Errorf("think %s: %d batches were not acknowledged", r.think, r.sendErrs)
	}
	pacing := "closed loop (each session calls again as soon as it has its answer)"
	if r.think > 0 {
		pacing = fmt.Sprintf("agent-paced (each session waits %s after each answer)", r.think)
	}
	fmt.Fprintf(out, "\n%s\n\n| tool | calls | p50 ms | p95 ms | max ms |\n|---|---:|---:|---:|---:|\n", pacing)
	worst := time.Duration(0)
	for _, c := range loadCalls() {
		all := r.lat[c.name]
		if len(all) == 0 {
			t.Errorf("think %s: %s was never answered", r.think, c.name)
			continue
		}
		slices.Sort(all)
		p95 := all[(len(all)*95+99)/100-1]
		worst = max(worst, p95)
		fmt.Fprintf(out, "| %s | %d | %.1f | %.1f | %.1f |\n", c.name, len(all), msf(all[len(all)/2]), msf(p95), msf(all[len(all)-1]))
	}
	peak := slices.Clone(r.peak)
	slices.Sort(peak)
	fmt.Fprintf(out, "\nworst tool p95 %.1f ms; serve peak RSS so far %s … %s; collector %.0f spans/s meanwhile; "+
		"largest write-ahead log %s; store %s\n",
		msf(worst), mib(peak[0]), mib(peak[len(peak)-1]), r.spansPerS, mib(r.maxWAL), mib(r.storeSize))
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadCall is one telemetry tool call of the sessions' rotation.
type loadCall struct {
	name string
	req  Request
	// run, when set, builds the request from the newest acknowledged batch instead.
	run func(batch uint64, batchSpans int) Request
}

// loadCalls are the seven telemetry tools over the last hour, as an agent asks them.
func loadCalls() []loadCall {
	c := func(tool, args string) loadCall { return loadCall{name: tool, req: CallRequest(tool, args)} }
	return []loadCall{
		c("get_app_status", `{"window":"1h"}`),
		c("list_runs", `{"window":"1h"}`),
		{name: "get_run", run: func(batch uint64, batchSpans int) Request {
			tr := batch * uint64(batchSpans/8) // the batch's first trace (loadBatch)
			return CallRequest("get_run", `{"id":"`+hex16(mix(tr))+hex16(mix(^tr))+`"}`)
		}},
		c("get_recent_errors", `{"window":"1h"}`),
		c("get_last_job_result", `{"window":"1h"}`),
		c("analyze_service_performance", `{"service":"checkout","window":"1h"}`),
		c("analyze_db_bottlenecks", `{"window":"1h"}`),
	}
}

func hex16(v uint64) string { return fmt.Sprintf("%016x", v) }

// loadServices are the senders' services; every batch comes from one of them.
var loadServices = []string{"checkout", "payments", "inventory", "search", "billing", "worker"}

// loadBatch is one batch of n spans from one service: traces of 8 spans (a server root, a
// database call per child, every 64th trace failing in a database child, every 16th trace a
// job), with trace ids mix(t) + mix(^t) for trace t of the run.
func loadBatch(t *testing.T, batch uint64, n int, start time.Time) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	service := loadServices[batch%uint64(len(loadServices))]
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutStr("service.version", "1.4.2")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
	spans := ss.Spans()
	spans.EnsureCapacity(n)
	for i := range n {
		sp := spans.AppendEmpty()
		tr := batch*uint64(n/8) + uint64(i/8)
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[:8], mix(tr))
		binary.BigEndian.PutUint64(tid[8:], mix(^tr))
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID(binary.BigEndian.AppendUint64(nil, mix(batch<<16|uint64(i)))))
		ts := start.Add(time.Duration(i) * 10 * time.Microsecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(ts))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(ts.Add(time.Duration(100+(i*37)%900) * time.Microsecond)))
		a := sp.Attributes()
		if i%8 == 0 {
			sp.SetName("GET /orders/{id}")
			sp.SetKind(ptrace.SpanKindServer)
			a.PutStr("http.request.method", "GET")
			a.PutStr("http.route", "/orders/{id}")
			a.PutInt("http.response.status_code", 200)
			if tr%16 == 0 {
				a.PutStr("job.id", "job-"+strconv.FormatUint(tr, 10))
				a.PutStr("job.name", "nightly-report")
			}
			continue
		}
		sp.SetParentSpanID(pcommon.SpanID(binary.BigEndian.AppendUint64(nil, mix(batch<<16|uint64(i-i%8)))))
		sp.SetName("SELECT orders")
		sp.SetKind(ptrace.SpanKindClient)
		a.PutStr("db.system.name", "postgresql")
		a.PutStr("db.query.text", "SELECT * FROM orders WHERE id = $"+strconv.Itoa(i%4))
		a.PutStr("db.collection.name", "orders")
		if tr%64 == 0 && i%8 == 7 {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("deadlock detected")
		}
	}
	var m ptrace.ProtoMarshaler
	body, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// mix is splitmix64's finalizer: distinct inputs give distinct, random-looking outputs.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// freeAddr returns a loopback address with a port nothing listens on right now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
