package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// IndexDurations implements telemetry.DurationIndexer: the service's entry spans (IsEntry) in
// the window — or, with an operation, its spans of that name — read from a covering index as
// one text of name, duration and error flag per span (passing a row per span through
// database/sql costs several times SQLite's own work), then telemetry.DurationsOf; or, for
// entry spans over whole buckets, from the entry span rollup's sketches (sketchedDurations).
func (b *Backend) IndexDurations(ctx context.Context, q telemetry.DurationQuery, ask telemetry.Ask) (telemetry.Durations, bool, error) {
	var d telemetry.Durations
	handled, err := b.snapshot(ctx, ask.Conv, func(tx *sql.Tx) error {
		if q.Operation == "" {
			var done bool
			var err error
			if d, done, err = sketchedDurations(ctx, tx, q); err != nil || done {
				return err
			}
		}
		samples, span, err := performanceSamples(ctx, tx, q, q.Operation == "")
		if err != nil {
			return err
		}
		d = telemetry.DurationsOf(samples)
		if len(samples) > 0 {
			d.FirstMs, d.LastMs = span.ms()
		}
		d.Scan = windowScan(q.Window, int64(len(samples)))
		return nil
	})
	return d, handled, err
}

// sketchedDurations computes the facts of the service's entry spans from the entry span rollup
// when the window has whole buckets and holds more than sketchExactMax entry spans: counts,
// totals and sketches of the whole buckets, plus the exact durations of the edges (at most ten
// minutes of rows); done is false when the exact path answers instead.
func sketchedDurations(ctx context.Context, tx *sql.Tx, q telemetry.DurationQuery) (telemetry.Durations, bool, error) {
	sp, err := liveSplit(ctx, tx, q.Window)
	if err != nil || sp.lo >= sp.hi {
		return telemetry.Durations{}, false, err
	}
	type op struct {
		count, sum, errors int64
		sk                 sketch
	}
	ops := map[string]*op{}
	at := func(name string) *op {
		o := ops[name]
		if o == nil {
			o = &op{sk: sketch{}}
			ops[name] = o
		}
		return o
	}
	var f filter
	f.service("ServiceName", q.Service)
	f.add("Bucket >= ? AND Bucket < ?", sp.lo, sp.hi)
	err = eachRow(ctx, tx, `SELECT SpanName, SUM(Spans), SUM(Duration), SUM(Errors), `+sketchSumFunc+`(Sketch) FROM `+
		EntryActivityTable+f.where()+` GROUP BY SpanName`, f.args,
		func(scan func(...any) error) error {
			var name string
			var c, sum, errs int64
			var blob []byte
			if err := scan(&name, &c, &sum, &errs, &blob); err != nil {
				return err
			}
			o := at(name)
			o.count += c
			o.sum += sum
			o.errors += errs
			return o.sk.mergeBlob(blob)
		})
	if err != nil {
		return telemetry.Durations{}, false, fmt.Errorf("read entry span rollup: %w", err)
	}
	for _, e := range sp.edges {
		var f filter
		f.add("IsEntry = 1")
		f.service("ServiceName", q.Service)
		f.add("Timestamp >= ? AND Timestamp < ?", e[0], e[1])
		err := eachRow(ctx, tx, `SELECT SpanName, Duration, IsError FROM `+TracesTable+` INDEXED BY otel_traces_entries`+f.where(), f.args,
			func(scan func(...any) error) error {
				var name string
				var d, isErr int64
				if err := scan(&name, &d, &isErr); err != nil {
					return err
				}
				o := at(name)
				o.count++
				o.sum += d
				o.errors += isErr
				o.sk.add(d, 1)
				return nil
			})
		if err != nil {
			return telemetry.Durations{}, false, fmt.Errorf("read service spans: %w", err)
		}
	}
	d := telemetry.Durations{PercentileError: SketchRelativeError}
	all := sketch{}
	for name, o := range ops {
		if o.count == 0 {
			continue
		}
		all.merge(o.sk)
		d.All.SumNs += o.sum
		d.All.Count += o.count
		d.All.Errors += o.errors
		d.Operations = append(d.Operations, telemetry.DurationFacts{Name: name, Count: o.count, Errors: o.errors, SumNs: o.sum,
			P50Ns: o.sk.quantile(0.5), P95Ns: o.sk.quantile(0.95), P99Ns: o.sk.quantile(0.99)})
	}
	if d.All.Count <= sketchExactMax {
		return telemetry.Durations{}, false, nil
	}
	span, err := entryTraffic(ctx, tx, q)
	if err != nil {
		return telemetry.Durations{}, false, err
	}
	d.FirstMs, d.LastMs = span.ms()
	d.Scan = windowScan(q.Window, d.All.Count)
	d.All.P50Ns, d.All.P95Ns, d.All.P99Ns = all.quantile(0.5), all.quantile(0.95), all.quantile(0.99)
	return d, true, nil
}

// traffic is the start times (ns) of the first and the last sample: the span of time over which
// throughput is a rate (restates docs/semantics.md R17: telemetry.DurationsOf takes them from
// the samples, which the store reads without their start times).
type traffic struct{ first, last int64 }

// ms is the span in unix milliseconds, as telemetry.Performance holds it.
func (t traffic) ms() (int64, int64) { return t.first / 1e6, t.last / 1e6 }

// entryTraffic is the traffic span of the service's entry spans in the window: two probes of the
// entry index, which is ordered by service and start time.
func entryTraffic(ctx context.Context, tx *sql.Tx, q telemetry.DurationQuery) (traffic, error) {
	var f filter
	f.add("IsEntry = 1")
	f.service("ServiceName", q.Service)
	f.window(q.Window)
	from := ` FROM ` + TracesTable + ` INDEXED BY otel_traces_entries` + f.where()
	var t traffic
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT MIN(Timestamp)`+from+`), 0), COALESCE((SELECT MAX(Timestamp)`+from+`), 0)`,
		append(slices.Clip(f.args), f.args...)...).Scan(&t.first, &t.last); err != nil {
		return traffic{}, fmt.Errorf("read the traffic span: %w", err)
	}
	return t, nil
}

// performanceSamples reads the service's entry spans in the window (entries), or its spans
// named q.Operation: name, duration and status only, and the span of their start times.
func performanceSamples(ctx context.Context, tx *sql.Tx, q telemetry.DurationQuery, entries bool) ([]telemetry.SpanRow, traffic, error) {
	var f filter
	index := "otel_traces_service"
	if entries {
		index = "otel_traces_entries"
		f.add("IsEntry = 1")
	}
	f.service("ServiceName", q.Service)
	f.window(q.Window)
	if !entries {
		f.add("SpanName = ?", q.Operation)
	}
	from := ` FROM ` + TracesTable + ` INDEXED BY ` + index + f.where()
	var n int
	var text string
	var t traffic
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MIN(Timestamp), 0), COALESCE(MAX(Timestamp), 0),
		COALESCE(group_concat(SpanName || char(31) || Duration || char(31) || IsError, char(30)), '')`+from, f.args...).Scan(&n, &t.first, &t.last, &text)
	if err != nil {
		return nil, traffic{}, fmt.Errorf("read service spans: %w", err)
	}
	out, err := parseSamples(text, n)
	if errors.Is(err, errSeparatorInName) {
		out, err = samplesByRow(ctx, tx, from, f.args)
	}
	return out, t, err
}

// parseSamples reads performanceSamples' text of n records.
func parseSamples(text string, n int) ([]telemetry.SpanRow, error) {
	ops, err := parseOperations(text, n)
	if err != nil {
		return nil, err
	}
	out := make([]telemetry.SpanRow, 0, n)
	for _, o := range ops {
		for i, d := range o.ds {
			r := telemetry.SpanRow{Name: o.name, DurationNs: d, StatusCode: telemetry.CodeUnset}
			if o.errFlags[i] {
				r.StatusCode = telemetry.CodeError
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// samplesByRow reads the samples a row at a time: for span names holding the text's
// separators.
func samplesByRow(ctx context.Context, tx *sql.Tx, from string, args []any) ([]telemetry.SpanRow, error) {
	var out []telemetry.SpanRow
	err := eachRow(ctx, tx, `SELECT SpanName, Duration, IsError`+from, args, func(scan func(...any) error) error {
		r := telemetry.SpanRow{StatusCode: telemetry.CodeUnset}
		var isErr bool
		if err := scan(&r.Name, &r.DurationNs, &isErr); err != nil {
			return err
		}
		if isErr {
			r.StatusCode = telemetry.CodeError
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read service spans: %w", err)
	}
	return slices.Clip(out), nil
}
