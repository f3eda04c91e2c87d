package bench

import (
	"fmt"
	"time"
)

// StartupRun is one host start-up: spawn the server, initialize, initialized, tools/list.
type StartupRun struct {
	// Discovery runs from spawn until the tools/list answer is read: what a host waits for.
	Discovery time.Duration
	// Cycle adds closing stdin and waiting for the process to exit.
	Cycle time.Duration
	// Tools is the number of tools listed.
	Tools int
}

// MeasureStartup spawns t once and times its start-up and shutdown.
func MeasureStartup(t Target) (StartupRun, error) {
	start := time.Now()
	p, err := Start(t)
	if err != nil {
		return StartupRun{}, err
	}
	d, err := discover(p)
	discovered := time.Since(start)
	if err != nil {
		p.Close()
		return StartupRun{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	if err := p.Close(); err != nil {
		return StartupRun{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	cycle := time.Since(start)
	names, err := toolNames(d.ToolsList)
	if err != nil {
		return StartupRun{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	return StartupRun{Discovery: discovered, Cycle: cycle, Tools: len(names)}, nil
}

// Series is one target's start-up statistics over one series of runs (Index counts from 1), or
// over every series pooled (Index 0).
type Series struct {
	Target           string
	Index            int
	Discovery, Cycle Summary
	Tools            int
}

// startupWarmups are discarded runs per target before measuring, so the first measured spawn
// does not pay for reading the executable from disk.
const startupWarmups = 3

// MeasureStartups runs `series` series of `runs` start-ups per target, interleaved run by run
// (the order alternates so that neither target always follows the other), and returns every
// series followed by the pooled statistics of each target.
func MeasureStartups(targets []Target, runs, series int) ([]Series, error) {
	for _, t := range targets {
		for range startupWarmups {
			if _, err := MeasureStartup(t); err != nil {
				return nil, err
			}
		}
	}
	type samples struct{ disc, cycle []time.Duration }
	all := make([]samples, len(targets))
	var out []Series
	tools := make([]int, len(targets))
	for s := range series {
		cur := make([]samples, len(targets))
		for i := range runs {
			for k := range targets {
				j := (k + i + s) % len(targets)
				r, err := MeasureStartup(targets[j])
				if err != nil {
					return nil, err
				}
				cur[j].disc = append(cur[j].disc, r.Discovery)
				cur[j].cycle = append(cur[j].cycle, r.Cycle)
				tools[j] = r.Tools
			}
		}
		for j, t := range targets {
			out = append(out, Series{Target: t.Name, Index: s + 1, Discovery: Summarize(cur[j].disc), Cycle: Summarize(cur[j].cycle), Tools: tools[j]})
			all[j].disc = append(all[j].disc, cur[j].disc...)
			all[j].cycle = append(all[j].cycle, cur[j].cycle...)
		}
	}
	for j, t := range targets {
		out = append(out, Series{Target: t.Name, Discovery: Summarize(all[j].disc), Cycle: Summarize(all[j].cycle), Tools: tools[j]})
	}
	return out, nil
}
