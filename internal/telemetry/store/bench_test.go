package store

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Driver choice, measured with this benchmark (B5 at the store boundary, 600 batches of 512
// spans, 4 senders; the same store code built against each driver, runs interleaved on the
// shared 2-core machine, 2026-11-30). CPU-µs/span is the process's CPU time per span, the
// steadier number on a busy machine; wall rates varied with other engineers' load.
//
//	                                      CPU-µs/span          spans/s      peak RSS   binary
//	modernc.org/sqlite v1.62.0            10.8  11.3  11.3     74–101 k     152–163 MB  12.3 MB
//	github.com/ncruces/go-sqlite3 v0.37.0 10.6  10.6  10.5     87–98 k       94 MB      15.6 MB
//	(an earlier round with synchronous=FULL: modernc 12.6–13.1, ncruces 10.9–11.8)
//
// modernc.org/sqlite is used. The CPU difference (2–10%) is within what schema and statement
// choices move; it is already the module's decided dependency; its binary is 3.3 MB smaller.
// Its RSS here was driven by a 64 MiB page cache, since cut to 16 MiB (the receiver process
// then peaks at about 68 MB under B5, see the otlp benchmark) with no measurable CPU cost.

// BenchmarkIngest is B5 at the store boundary: 512-span batches from 4 concurrent senders,
// each call returning after its batch committed. Its numbers before and after the derived
// columns and rollups are in BENCH.md.
func BenchmarkIngest(b *testing.B) {
	s := openTestStore(b, Options{})
	start := time.Now().Add(-2 * time.Hour)
	b.ResetTimer()
	cpu0 := cpuTime()
	send, wait := benchSenders(b, s, start)
	for i := 0; i < b.N; i++ {
		send <- uint64(i)
	}
	close(send)
	wait()
	b.StopTimer()
	reportIngest(b, cpuTime()-cpu0)
}

// b5BatchSpans and b5Senders are B5's shape at the store boundary.
const b5BatchSpans, b5Senders = 512, 4

// benchSenders starts B5's senders: each batch number sent is one makeTraces batch, ingested
// by one of four goroutines. wait returns once the channel is closed and every batch committed.
func benchSenders(b *testing.B, s *Store, start time.Time) (send chan<- uint64, wait func()) {
	batches := make(chan uint64)
	var wg sync.WaitGroup
	for range b5Senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range batches {
				if _, _, err := s.IngestTraces(context.Background(), makeTraces("checkout", n, b5BatchSpans, start)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	return batches, wg.Wait
}

// reportIngest reports the rate and the process's CPU time per span of b.N batches.
func reportIngest(b *testing.B, cpu time.Duration) {
	spans := float64(b.N * b5BatchSpans)
	b.ReportMetric(spans/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(cpu.Microseconds())/spans, "cpu-µs/span")
}

// BenchmarkIngestAtLimit is B5's shape on a store at its size limit, as B11's collector runs
// once its store is full: the store is first filled past MaxBytes (64 MiB), then each batch
// committed is matched by pruning the oldest rows (Prune after every fourth batch, standing
// for the background retention loop), so every span written is also a span deleted from
// every index and subtracted from the rollups.
func BenchmarkIngestAtLimit(b *testing.B) {
	const limit = 64 << 20
	s := openTestStore(b, Options{MaxBytes: limit})
	ctx := context.Background()
	start := time.Now().Add(-2 * time.Hour)
	var n uint64
	for {
		if _, _, err := s.IngestTraces(ctx, makeTraces("checkout", n, b5BatchSpans, start)); err != nil {
			b.Fatal(err)
		}
		n++
		if used, err := s.usedBytes(ctx); err != nil {
			b.Fatal(err)
		} else if used > limit {
			break
		}
	}
	if pruned, err := s.Prune(ctx); err != nil || pruned == 0 {
		b.Fatalf("the filled store must prune: %d rows, %v", pruned, err)
	}
	var pruned int64
	b.ResetTimer()
	cpu0 := cpuTime()
	send, wait := benchSenders(b, s, start)
	for i := 0; i < b.N; i++ {
		send <- n + uint64(i)
		if i%4 == 3 {
			d, err := s.Prune(ctx)
			if err != nil {
				b.Fatal(err)
			}
			pruned += d
		}
	}
	close(send)
	wait()
	b.StopTimer()
	reportIngest(b, cpuTime()-cpu0)
	b.ReportMetric(float64(pruned)/float64(b.N*b5BatchSpans), "pruned/span")
}

// cpuTime is the process's user plus system CPU time: on a shared machine it varies far less
// than wall time, so it is the number to compare between runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
