package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// AggregatePerformance implements telemetry.PerformanceAggregator: the service's entry spans
// (IsEntry) in the window — or, with an operation, its spans of that name — read from a
// covering index as one text of name, duration and error flag per span (passing a row per span
// through database/sql costs several times SQLite's own work), then SummarizePerformance.
func (b *Backend) AggregatePerformance(ctx context.Context, q telemetry.PerformanceQuery, conv *conventions.Conventions) (telemetry.Performance, bool, error) {
	var p telemetry.Performance
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		var samples, entries []telemetry.SpanRow
		var err error
		if q.Operation != "" {
			if samples, err = performanceSamples(ctx, tx, q, false); err != nil {
				return err
			}
		}
		if q.Operation == "" || len(samples) == 0 {
			if entries, err = performanceSamples(ctx, tx, q, true); err != nil {
				return err
			}
			if q.Operation == "" {
				samples = entries
			}
		}
		p = telemetry.SummarizePerformance(q, samples)
		p.Scan = windowScan(q.Window, int64(len(samples)+len(entries)))
		if q.Operation != "" && len(samples) == 0 {
			names := map[string]bool{}
			for _, s := range entries {
				names[s.Name] = true
			}
			p.KnownOperations = boundedSorted(keys(names), telemetry.DefaultLimits.MaxHints)
		}
		return nil
	})
	return p, handled, err
}

// performanceSamples reads the service's entry spans in the window (entries), or its spans
// named q.Operation: name, duration and status only.
func performanceSamples(ctx context.Context, tx *sql.Tx, q telemetry.PerformanceQuery, entries bool) ([]telemetry.SpanRow, error) {
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
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(group_concat(SpanName || char(31) || Duration || char(31) || IsError,
		char(30)), '')`+from, f.args...).Scan(&n, &text)
	if err != nil {
		return nil, fmt.Errorf("read service spans: %w", err)
	}
	out, err := parseSamples(text, n)
	if errors.Is(err, errSeparatorInName) {
		return samplesByRow(ctx, tx, from, f.args)
	}
	return out, err
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
