package store

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkIngest is B5 at the store boundary: 512-span batches from 4 concurrent senders,
// each call returning after its batch committed.
func BenchmarkIngest(b *testing.B) {
	const senders, batchSpans = 4, 512
	s := openTestStore(b, Options{})
	ctx := context.Background()
	start := time.Now().Add(-2 * time.Hour)
	batches := make(chan uint64)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range batches {
				td := makeTraces("checkout", n, batchSpans, start)
				if _, _, err := s.IngestTraces(ctx, td); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		batches <- uint64(i)
	}
	close(batches)
	wg.Wait()
	b.StopTimer()
	cpu := cpuTime() - cpu0
	spans := float64(b.N * batchSpans)
	b.ReportMetric(spans/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(cpu.Microseconds())/spans, "cpu-µs/span")
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
