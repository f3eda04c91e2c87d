package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// IndexJobs implements telemetry.JobIndexer: the first job span in LastJob's order (start
// descending, then span id, ties in scan order) matching the query, and the next one after it
// with the same job name, each found with an index seek for the newest start and a look at the
// spans starting at that instant (read with JobFromSpan for its name and status).
func (b *Backend) IndexJobs(ctx context.Context, q telemetry.JobQuery, ask telemetry.Ask) (telemetry.JobFacts, bool, error) {
	conv := ask.Conv
	var res telemetry.JobFacts
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		var err error
		res, err = lastJob(ctx, tx, q, conv, ask.Limits.MaxHints)
		return err
	})
	return res, handled, err
}

func lastJob(ctx context.Context, tx *sql.Tx, q telemetry.JobQuery, conv *conventions.Conventions, hints int) (telemetry.JobFacts, error) {
	if len(conv.JobKeys.IDKeys) == 0 {
		return telemetry.JobFacts{}, nil
	}
	// jobs selects the job spans starting in [lo, hi) ns of the query's service, of name when
	// set, of the query's job id when byID: one time range, so it drives the index.
	jobs := func(name string, byID bool) spansIn {
		return func(lo, hi int64) filter {
			var f filter
			f.add("JobId != ''")
			f.add("Timestamp >= ? AND Timestamp < ?", lo, hi)
			f.service("ServiceName", q.Service)
			if byID && q.JobID != "" {
				f.add("JobId = ?", q.JobID)
			}
			if name != "" {
				f.add("JobName = ?", name)
			}
			return f
		}
	}
	lo, hi := q.Window.StartMs*1e6, q.Window.EndMs*1e6
	found, pos, ok, err := firstJob(ctx, tx, jobs(q.JobName, true), lo, hi)
	if err != nil {
		return telemetry.JobFacts{}, err
	}
	if !ok {
		res := telemetry.JobFacts{}
		if q.JobID != "" || q.JobName != "" {
			f := jobs("", false)(lo, hi)
			err := eachRow(ctx, tx, `SELECT DISTINCT JobName FROM `+TracesTable+f.where()+` ORDER BY JobName LIMIT ?`,
				append(f.args, hints), func(scan func(...any) error) error {
					var n string
					err := scan(&n)
					res.Names = append(res.Names, n)
					return err
				})
			if err != nil {
				return res, fmt.Errorf("list jobs: %w", err)
			}
		}
		return res, nil
	}
	job, _ := telemetry.JobFromSpan(conv, &found)
	// The execution before it: the next span of the same job name in the order, whatever its
	// id — later among those starting at the same instant, else the first of an older one.
	sameName := jobs(job.JobName, false)
	same := sameName(pos.ns, pos.ns+1)
	same.add("(SpanId > ? OR (SpanId = ? AND Seq > ?))", pos.span, pos.span, pos.seq)
	prev, _, ok, err := firstAt(ctx, tx, same)
	if err == nil && !ok {
		prev, _, ok, err = firstJob(ctx, tx, sameName, lo, min(hi, pos.ns))
	}
	if err != nil {
		return telemetry.JobFacts{}, err
	}
	f := telemetry.JobFacts{Newest: &found}
	if ok {
		p, _ := telemetry.JobFromSpan(conv, &prev)
		f.HasPrevious, f.PreviousStatus, f.PreviousStartMs = true, p.Status, p.StartMs
	}
	return f, nil
}

// spansIn builds the filter of the spans starting in [lo, hi) ns.
type spansIn func(lo, hi int64) filter

// jobPos is where a job span stands in LastJob's order.
type jobPos struct {
	ns, seq int64
	span    string
}

// firstJob returns the first job span of in(lo, hi) in LastJob's order: of those starting at
// the newest instant, the first in firstAt's order.
func firstJob(ctx context.Context, tx *sql.Tx, in spansIn, lo, hi int64) (telemetry.SpanRow, jobPos, bool, error) {
	if lo >= hi {
		return telemetry.SpanRow{}, jobPos{}, false, nil
	}
	f := in(lo, hi)
	var newest int64
	// The newest first, through the index: one seek where MAX over a range would read it all.
	err := tx.QueryRowContext(ctx, `SELECT Timestamp FROM `+TracesTable+f.where()+` ORDER BY Timestamp DESC LIMIT 1`, f.args...).
		Scan(&newest)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return telemetry.SpanRow{}, jobPos{}, false, nil
	case err != nil:
		return telemetry.SpanRow{}, jobPos{}, false, fmt.Errorf("find job: %w", err)
	}
	return firstAt(ctx, tx, in(newest, newest+1))
}

// firstAt returns the first job span passing f (all starting at one instant) by span id, then
// scan order.
func firstAt(ctx context.Context, tx *sql.Tx, f filter) (telemetry.SpanRow, jobPos, bool, error) {
	fields := telemetry.FieldAttributes | telemetry.FieldEvents
	rows, err := tx.QueryContext(ctx, `SELECT `+spanColumns+fieldColumns(fields, TracesTable, "SpanAttributes", "EventsJSON")+` FROM `+
		TracesTable+f.where()+` ORDER BY SpanId, Seq LIMIT 1`, f.args...)
	if err != nil {
		return telemetry.SpanRow{}, jobPos{}, false, fmt.Errorf("find job: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return telemetry.SpanRow{}, jobPos{}, false, fmt.Errorf("find job: %w", err)
		}
		return telemetry.SpanRow{}, jobPos{}, false, nil
	}
	r, seq, err := scanSpanRow(rows, fields)
	if err != nil {
		return telemetry.SpanRow{}, jobPos{}, false, fmt.Errorf("find job: %w", err)
	}
	return r, jobPos{ns: r.StartNs, seq: seq, span: r.SpanID}, true, nil
}
