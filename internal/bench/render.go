package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The targets of BENCHMARKS.md that this package measures.
const (
	targetB1P95    = 15 * time.Millisecond
	targetB1Ratio  = 0.5
	targetB2Median = 60 * time.Microsecond
	targetB2P99    = 400 * time.Microsecond
	targetB3       = 20000.0
	targetB4       = 10 << 20
	// B8: in the full profile, what hosts hand the model, and the output schemas; the compact
	// profile's whole tools/list.
	targetB8ModelVisible = 6 << 10
	targetB8Output       = 16 << 10
	targetB8Compact      = 4 << 10
)

// Write prints the report as tables, each figure beside its target.
func (r *Report) Write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	c := r.Config
	fmt.Fprintf(tw, "B1 start-up + discovery (spawn → initialize %s → initialized → tools/list read); %d series × %d runs, interleaved;\n", protocolVersion, c.StartupSeries, c.StartupRuns)
	fmt.Fprintf(tw, "   floor = a bare stdio loop (no tools): what spawning a Go process and one exchange cost on this machine now\n")
	fmt.Fprintln(tw, "target\tseries\tmedian\tp95\tp99\tmax\tcycle median\tcycle p95\ttools\t")
	for _, s := range r.Startup {
		series := "all"
		if s.Index > 0 {
			series = fmt.Sprint(s.Index)
		}
		d := s.Discovery
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", s.Target, series, ms(d.Median), ms(d.P95), ms(d.P99), ms(d.Max), ms(s.Cycle.Median), ms(s.Cycle.P95), s.Tools)
	}
	tw.Flush()
	for i := 1; i <= c.StartupSeries; i++ {
		rl, peer := r.series(runlensName, i), r.series(peerName, i)
		floor := r.series(floorName, i)
		fmt.Fprintf(w, "series %d: runlens p95 %s (target ≤ %s); runlens p95 / go-sdk p95 = %.2f (target ≤ %.1f); median ratio %.2f; above the floor: runlens %s, go-sdk %s (medians)\n",
			i, ms(rl.Discovery.P95), ms(targetB1P95), ratio(rl.Discovery.P95, peer.Discovery.P95), targetB1Ratio, ratio(rl.Discovery.Median, peer.Discovery.Median),
			ms(rl.Discovery.Median-floor.Discovery.Median), ms(peer.Discovery.Median-floor.Discovery.Median))
	}

	fmt.Fprintf(tw, "\nB2 warm tools/call list_docs round trip, %d sequential calls after %d warm-up (target median ≤ %s, p99 ≤ %s)\n", c.RoundTrips, c.Warmup, us(targetB2Median), us(targetB2P99))
	fmt.Fprintln(tw, "target\tround\tmin\tmedian\tp95\tp99\tmax\t")
	for _, l := range r.RoundTrip {
		s := l.Summary
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", l.Target, l.Round, us(s.Min), us(s.Median), us(s.P95), us(s.P99), us(s.Max))
	}

	fmt.Fprintf(tw, "\nB3 pipelined throughput, %d calls with %d in flight (target ≥ %.0f calls/s)\n", c.Pipelined, c.Depth, targetB3)
	fmt.Fprintln(tw, "target\tround\trequest\tcalls/s\t")
	for _, t := range r.Throughput {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t\n", t.Target, t.Round, t.Request, t.CallsPerSecond)
	}

	fmt.Fprintf(tw, "\nB4 memory (target idle VmRSS ≤ %s); idle = median of %d spawns after initialize + tools/list; warm = after B2 and B3;\n   idle VmRSS = own (RssAnon: heap, stacks) + mapped files (RssFile: mostly the executable's pages, shared and clean)\n", mib(targetB4), c.MemoryRuns)
	fmt.Fprintln(tw, "target\tidle VmRSS\town\tmapped files\tidle VmHWM\twarm VmRSS\twarm VmHWM\tbinary\t")
	for _, f := range r.Idle {
		warm := r.footprint(r.Warm, f.Target)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", f.Target, mib(f.Memory.RSS), mib(f.Memory.Anon), mib(f.Memory.ByFiles), mib(f.Memory.HWM), mib(warm.RSS), mib(warm.HWM), mib(r.binarySize(f.Target)))
	}

	fmt.Fprintf(tw, "\nB8 bootstrap: compact JSON bytes of tools/list; model-visible = name, title, description, inputSchema, annotations\n")
	fmt.Fprintf(tw, "   (targets: full profile model-visible ≤ %d and output schemas ≤ %d; compact profile whole ≤ %d)\n", targetB8ModelVisible, targetB8Output, targetB8Compact)
	fmt.Fprintln(tw, "target\ttool\twhole\tmodel-visible\toutput schemas\t")
	for _, b := range r.Bootstrap {
		fmt.Fprintf(tw, "%s\t(all %d tools)\t%d\t%d\t%d\t\n", b.Label, len(b.Tools), b.Bytes, b.ModelVisible, b.Output)
		if b.Label == peerName {
			continue // the peer's per-tool sizes repeat runlens's schemas
		}
		for _, t := range b.Tools {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t\n", b.Label, t.Name, t.Bytes, t.ModelVisible, t.Output)
		}
	}
}

// ResultsRow is the run as a row of BENCHMARKS.md's Results table; the columns this package
// does not measure (B5–B7, B9) are dashes. Each figure is the worst of the run's series or
// rounds, so the row never flatters.
func (r *Report) ResultsRow(commit string) string {
	var worstRl, worstPeer Series
	for i := 1; i <= r.Config.StartupSeries; i++ {
		if s := r.series(runlensName, i); s.Discovery.P95 >= worstRl.Discovery.P95 {
			worstRl, worstPeer = s, r.series(peerName, i)
		}
	}
	var b2 Summary
	for _, l := range r.RoundTrip {
		if l.Target == runlensName && l.Summary.P99 >= b2.P99 {
			b2 = l.Summary
		}
	}
	b3 := map[string]float64{}
	for _, t := range r.Throughput {
		if t.Target == runlensName && (b3[t.Request] == 0 || t.CallsPerSecond < b3[t.Request]) {
			b3[t.Request] = t.CallsPerSecond
		}
	}
	idle := r.footprint(r.Idle, runlensName)
	cells := []string{
		r.Started.UTC().Format("2006-01-02"),
		commit,
		fmt.Sprintf("%s (%s)", ms(worstRl.Discovery.P95), ms(worstPeer.Discovery.P95)),
		fmt.Sprintf("%s / %s", us(b2.Median), us(b2.P99)),
		fmt.Sprintf("%.0f calls/s list_docs, %.0f ping", b3["list_docs"], b3["ping"]),
		fmt.Sprintf("%s (HWM %s; own %s)", mib(idle.RSS), mib(idle.HWM), mib(idle.Anon)),
		"—", "—", "—",
		fmt.Sprintf("%d B + %d B / %d B", r.bootstrap(runlensName).ModelVisible, r.bootstrap(runlensName).Output, r.bootstrap(runlensCompactName).Bytes),
		"—",
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// series finds one target's series (index 0: pooled).
func (r *Report) series(target string, index int) Series {
	for _, s := range r.Startup {
		if s.Target == target && s.Index == index {
			return s
		}
	}
	return Series{}
}

// footprint finds one target's entry in fs.
func (r *Report) footprint(fs []Footprint, target string) Memory {
	for _, f := range fs {
		if f.Target == target {
			return f.Memory
		}
	}
	return Memory{}
}

// binarySize is the size of one target's executable.
func (r *Report) binarySize(target string) int64 {
	for _, f := range r.Binaries {
		if f.Target == target {
			return f.Bytes
		}
	}
	return 0
}

// bootstrap finds one label's bootstrap size.
func (r *Report) bootstrap(label string) Bootstrap {
	for _, b := range r.Bootstrap {
		if b.Label == label {
			return b
		}
	}
	return Bootstrap{}
}

// ratio is a/b, or 0 when b is zero.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
