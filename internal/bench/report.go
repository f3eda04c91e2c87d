package bench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Config sizes a benchmark run.
type Config struct {
	Binaries Binaries
	// Project is the folder runlens serves (see WriteProject).
	Project string
	// StartupRuns start-ups per target per series; StartupSeries series (B1).
	StartupRuns, StartupSeries int
	// RoundTrips sequential calls measured after Warmup unmeasured ones (B2).
	RoundTrips, Warmup int
	// Pipelined calls per request kind, Depth of them in flight (B3).
	Pipelined, Depth int
	// Rounds of B2 and B3 per target, alternating which target goes first.
	Rounds int
	// MemoryRuns spawns per target whose idle memory is read (B4).
	MemoryRuns int
	// Log receives one progress line per step; nil discards them.
	Log io.Writer
}

// DefaultConfig is the size of `make bench`: the targets' own run counts, under a minute on a
// quiet two-core machine.
func DefaultConfig(b Binaries, project string) Config {
	return Config{
		Binaries:    b,
		Project:     project,
		StartupRuns: 50, StartupSeries: 2,
		RoundTrips: 1000, Warmup: 200,
		Pipelined: 20000, Depth: 64,
		Rounds:     2,
		MemoryRuns: 5,
	}
}

// The names of the targets in results.
const (
	runlensName        = "runlens"
	runlensCompactName = "runlens (compact)"
	peerName           = "go-sdk"
	floorName          = "floor"
)

// Targets are the servers of a run: runlens in each profile, the go-sdk peer and the floor.
type Targets struct {
	Runlens, RunlensCompact, Peer, Floor Target
}

// NewTargets spawns runlens on project with the receiver off, so that runs do not contend for
// the OTLP port, and the peer and the floor in the same folder.
func NewTargets(b Binaries, project string) Targets {
	serve := func(profile string) []string {
		return []string{"serve", "--project-root", project, "--receiver", "off", "--profile", profile}
	}
	return Targets{
		Runlens:        Target{Name: runlensName, Path: b.Runlens, Args: serve("full"), Dir: project},
		RunlensCompact: Target{Name: runlensCompactName, Path: b.Runlens, Args: serve("compact"), Dir: project},
		Peer:           Target{Name: peerName, Path: b.Peer, Dir: project},
		Floor:          Target{Name: floorName, Path: b.Floor, Dir: project},
	}
}

// Latency is one round of B2 for one target.
type Latency struct {
	Target  string
	Round   int
	Summary Summary
}

// Rate is one round of B3 for one target and request kind.
type Rate struct {
	Target, Request string
	Round           int
	CallsPerSecond  float64
}

// Footprint is a target's memory at one moment.
type Footprint struct {
	Target string
	Memory Memory
}

// Report is everything one run measured.
type Report struct {
	Started    time.Time
	Config     Config
	Startup    []Series
	RoundTrip  []Latency
	Throughput []Rate
	Idle       []Footprint
	// Warm is the memory after the round trips and pipelined calls of the last round.
	Warm      []Footprint
	Bootstrap []Bootstrap
	Binaries  []FileSize
}

// FileSize is the size of a target's executable.
type FileSize struct {
	Target string
	Bytes  int64
}

// Run measures B8, B1, B2, B3 and B4, in that order.
func Run(cfg Config) (*Report, error) {
	r := &Report{Started: time.Now(), Config: cfg}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	ts := NewTargets(cfg.Binaries, cfg.Project)
	// The floor runs beside the servers in every measure, so each figure can be read against
	// what the machine gives a process that does nothing at that moment.
	all := []Target{ts.Runlens, ts.Peer, ts.Floor}

	for _, t := range []Target{ts.Runlens, ts.RunlensCompact, ts.Peer} {
		s, err := Open(t)
		if err != nil {
			return nil, err
		}
		err = s.Close()
		if err != nil {
			return nil, err
		}
		b, err := MeasureBootstrap(t.Name, s.Discovery.ToolsList)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		r.Bootstrap = append(r.Bootstrap, b)
		fmt.Fprintf(log, "B8 %s: tools/list %d bytes, %d tools\n", t.Name, b.Bytes, len(b.Tools))
	}
	for _, t := range all {
		fi, err := os.Stat(t.Path)
		if err != nil {
			return nil, fmt.Errorf("binary size: %w", err)
		}
		r.Binaries = append(r.Binaries, FileSize{Target: t.Name, Bytes: fi.Size()})
	}

	series, err := MeasureStartups(all, cfg.StartupRuns, cfg.StartupSeries)
	if err != nil {
		return nil, err
	}
	r.Startup = series
	for _, s := range series {
		fmt.Fprintf(log, "B1 %s series %d: %s\n", s.Target, s.Index, s.Discovery)
	}

	listDocs := CallRequest("list_docs", "{}")
	for round := 1; round <= cfg.Rounds; round++ {
		order := all
		if round%2 == 0 {
			order = slices.Clone(all)
			slices.Reverse(order)
		}
		for _, t := range order {
			if err := r.calls(t, round, listDocs, log); err != nil {
				return nil, err
			}
		}
	}

	for _, t := range all {
		m, err := IdleMemory(t, cfg.MemoryRuns)
		if err != nil {
			return nil, err
		}
		r.Idle = append(r.Idle, Footprint{Target: t.Name, Memory: m})
		fmt.Fprintf(log, "B4 %s: VmRSS %s, VmHWM %s\n", t.Name, mib(m.RSS), mib(m.HWM))
	}
	return r, nil
}

// calls runs one round of B2 and B3 on one session of t.
func (r *Report) calls(t Target, round int, listDocs Request, log io.Writer) error {
	cfg := r.Config
	s, err := Open(t)
	if err != nil {
		return err
	}
	defer s.Close()
	lat, err := s.RoundTrips(listDocs, cfg.Warmup, cfg.RoundTrips)
	if err != nil {
		return fmt.Errorf("%s round trips: %w", t.Name, err)
	}
	r.RoundTrip = append(r.RoundTrip, Latency{Target: t.Name, Round: round, Summary: lat})
	fmt.Fprintf(log, "B2 %s round %d: %s\n", t.Name, round, lat)
	for _, k := range []struct {
		name string
		req  Request
	}{{"ping", PingRequest()}, {"list_docs", listDocs}} {
		rate, err := s.Pipelined(k.req, cfg.Pipelined, cfg.Depth)
		if err != nil {
			return fmt.Errorf("%s pipelined %s: %w", t.Name, k.name, err)
		}
		r.Throughput = append(r.Throughput, Rate{Target: t.Name, Request: k.name, Round: round, CallsPerSecond: rate})
		fmt.Fprintf(log, "B3 %s round %d %s: %.0f calls/s\n", t.Name, round, k.name, rate)
	}
	if round == cfg.Rounds {
		m, err := ReadMemory(s.Pid())
		if err != nil {
			return err
		}
		r.Warm = append(r.Warm, Footprint{Target: t.Name, Memory: m})
	}
	return nil
}
