package telemetry

import (
	"fmt"
	"testing"
)

// BenchmarkGroupOccurrences groups a day's error occurrences at B10's scale (40,000 of them,
// from 50 services, 20 messages each), for every service and for one.
func BenchmarkGroupOccurrences(b *testing.B) {
	list := make([]Occurrence, 40_000)
	for i := range list {
		svc := fmt.Sprintf("svc-%d", i%50)
		list[i] = Occurrence{
			TimeNs: int64(i) * 2_160_000_000, Service: svc, Domain: "http", RunID: fmt.Sprintf("%032x", i),
			TraceID: fmt.Sprintf("%032x", i), OriginSpanID: fmt.Sprintf("%016x", i), Message: fmt.Sprintf("order %d failed: timeout", i%20),
			Fingerprint: fmt.Sprintf("fp-%d", i%20),
		}
	}
	for _, svc := range []string{"", "svc-7"} {
		b.Run("service="+svc, func(b *testing.B) {
			for b.Loop() {
				if rep := GroupOccurrences(list, svc, ""); rep.Events == 0 {
					b.Fatal("no occurrence grouped")
				}
			}
		})
	}
}
