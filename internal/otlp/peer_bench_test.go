package otlp

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/jaeger/jaegertest"
)

// BenchmarkIngestSideBySide is B5 against its peer in one run: the same batches from the same
// senders (4 goroutines, 512 spans a batch, protobuf), over OTLP/HTTP and OTLP/gRPC, to
// runlens's receiver process and to a Jaeger v2 (the binary .ci/install-jaeger builds, found
// through RUNLENS_JAEGER) with in-memory and with Badger storage. It logs each rate and
// runlens's ratio to each Jaeger; the results are in BENCHMARKS.md (B5).
//
// What an answer means differs. runlens answers once the batch is committed to its SQLite
// store (WAL, synchronous=NORMAL: it survives the process, not the machine). Jaeger runs
// without its batch processor and with its storage exporter's queue off (its default), so its
// receiver answers once the storage's write returned: into memory (gone with the process), or
// into Badger (ephemeral: false, no fsync per write, Badger's default). Jaeger's own span
// counters then confirm that every span reached its storage and none failed.
func BenchmarkIngestSideBySide(b *testing.B) {
	type peer struct {
		name string
		run  func(b *testing.B, open func(b *testing.B, a helperAddrs) func(body []byte) error) float64
	}
	peers := []peer{
		{"runlens", func(b *testing.B, open func(b *testing.B, a helperAddrs) func(body []byte) error) float64 {
			return benchmarkIngest(b, nil, open)
		}},
		{"jaeger-memory", func(b *testing.B, open func(b *testing.B, a helperAddrs) func(body []byte) error) float64 {
			return benchmarkIngestJaeger(b, false, open)
		}},
		{"jaeger-badger", func(b *testing.B, open func(b *testing.B, a helperAddrs) func(body []byte) error) float64 {
			return benchmarkIngestJaeger(b, true, open)
		}},
	}
	protocols := []struct {
		name string
		open func(b *testing.B, a helperAddrs) func(body []byte) error
	}{{"http", httpSender}, {"grpc", grpcSender}}
	// The last run of each sub-benchmark is the one the benchmark reports.
	rates := map[string]float64{}
	for _, proto := range protocols {
		for _, p := range peers {
			name := p.name + "-" + proto.name
			b.Run(name, func(b *testing.B) { rates[name] = p.run(b, proto.open) })
		}
	}
	for _, proto := range protocols {
		own := rates["runlens-"+proto.name]
		for _, p := range peers[1:] {
			if other := rates[p.name+"-"+proto.name]; own > 0 && other > 0 {
				b.Logf("B5 %s: runlens %.0f spans/s, %s %.0f spans/s, ratio %.2f", proto.name, own, p.name, other, own/other)
			}
		}
	}
}

// benchmarkIngestJaeger runs B5 against a fresh Jaeger, with Badger storage or in memory, and
// reports what benchmarkIngest reports of runlens but the store's size.
func benchmarkIngestJaeger(b *testing.B, badger bool, open func(b *testing.B, a helperAddrs) func(body []byte) error) float64 {
	srv := jaegertest.Start(b, jaegertest.Options{NoSelfTracing: true, Badger: badger, Unbatched: true, Metrics: true})
	if want := b.N * benchBatchSpans / 8; !badger && want > jaegertest.MaxTraces {
		b.Fatalf("%d traces overflow Jaeger's in-memory storage of %d", want, jaegertest.MaxTraces)
	}
	bodies := benchBodies(b, nil)
	cpuBefore, err := processCPU(srv.Pid())
	if err != nil {
		b.Fatal(err)
	}
	rate := sendBatches(b, bodies, open(b, helperAddrs{http: strings.TrimPrefix(srv.OTLPURL, "http://"), grpc: srv.OTLPGRPC}))
	cpu, err := processCPU(srv.Pid())
	if err != nil {
		b.Fatal(err)
	}
	spans := b.N * benchBatchSpans
	// Every answer came after the storage's write, so the counters hold every span already.
	counts, err := jaegerSpanCounts(srv.MetricsURL)
	if err != nil {
		b.Fatal(err)
	}
	if counts.accepted != spans || counts.stored != spans || counts.failed != 0 {
		b.Fatalf("Jaeger accepted %d spans, stored %d, failed to store %d; %d were sent", counts.accepted, counts.stored, counts.failed, spans)
	}
	peak, err := peakRSS(srv.Pid())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(peak)/(1<<20), "receiver-peak-RSS-MB")
	// Jaeger's CPU time while the senders ran: its start-up is not counted, unlike runlens's.
	b.ReportMetric(float64((cpu-cpuBefore).Microseconds())/float64(spans), "receiver-cpu-µs/span")
	return rate
}

// spanCounts are Jaeger's own counters of the spans its OTLP receiver accepted and its storage
// exporter stored or failed to store.
type spanCounts struct{ accepted, stored, failed int }

// jaegerSpanCounts reads spanCounts from Jaeger's metrics in the Prometheus text format.
func jaegerSpanCounts(url string) (spanCounts, error) {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return spanCounts{}, fmt.Errorf("read Jaeger's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return spanCounts{}, fmt.Errorf("read Jaeger's metrics: %s", resp.Status)
	}
	var c spanCounts
	seen := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into *int
		switch {
		case strings.HasPrefix(line, "otelcol_receiver_accepted_spans"):
			into = &c.accepted
		case strings.HasPrefix(line, "otelcol_exporter_sent_spans"):
			into = &c.stored
		case strings.HasPrefix(line, "otelcol_exporter_send_failed_spans"):
			into = &c.failed
		default:
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return spanCounts{}, fmt.Errorf("parse Jaeger's metric line %q: %w", line, err)
		}
		*into += int(v)
		seen++
	}
	if err := sc.Err(); err != nil {
		return spanCounts{}, fmt.Errorf("read Jaeger's metrics: %w", err)
	}
	if seen == 0 {
		return spanCounts{}, fmt.Errorf("no span counters in the metrics at %s", url)
	}
	return c, nil
}

// processCPU is the user and system CPU time a running process has used so far, all its
// threads together (/proc/<pid>/stat, in clock ticks of 10 ms).
func processCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the receiver's CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces; the fields after its closing parenthesis
	// start at field 3, so utime and stime (fields 14 and 15) are the 12th and 13th of them.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat: %q", pid, s)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
