package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
)

// Derived columns computed with other conventions than the store's (a changed configuration,
// another preset, a build whose derivation changed, or a file from before derived columns
// existed) are recomputed in the background rather than at Open: a day of telemetry takes
// tens of seconds to recompute, and `runlens serve` opens the store on the first tool call.
// Meanwhile ingest computes new rows with the new conventions and the capabilities decline, so
// the engine answers from scans (correct, slower); once every row is done, meta records the new
// fingerprint and the capabilities answer again.
//
// Progress lives in meta('derived_recompute') as "<fingerprint> <done> <end>": every row with
// Seq <= done is recomputed; rows with Seq > end were ingested with the new conventions. A
// restarted process with the same conventions resumes; one with other conventions starts over.

const (
	metaDerivedConventions = "derived_conventions"
	metaDerivedRecompute   = "derived_recompute"
)

// recomputeChunk is how many spans one recomputation transaction reads, so that an ingest batch
// queued behind it waits for milliseconds, not seconds. A variable so tests can take many
// small steps.
var recomputeChunk = 2000

// recomputeState is the parsed meta('derived_recompute').
type recomputeState struct {
	fingerprint string
	done, end   int64
}

func (r recomputeState) String() string {
	return r.fingerprint + " " + strconv.FormatInt(r.done, 10) + " " + strconv.FormatInt(r.end, 10)
}

func parseRecomputeState(v string) (recomputeState, bool) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return recomputeState{}, false
	}
	done, err1 := strconv.ParseInt(f[1], 10, 64)
	end, err2 := strconv.ParseInt(f[2], 10, 64)
	return recomputeState{f[0], done, end}, err1 == nil && err2 == nil
}

// metaValue reads a meta key; ok is false when it is absent.
func metaValue(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, key string) (v string, ok bool, err error) {
	err = q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read meta %s: %w", key, err)
	}
	return v, true, nil
}

// planRecompute runs in Open's migration transaction: it decides whether the rows' derived
// columns need recomputing for the conventions fingerprint fp, records the plan, and reports
// whether a recomputation is pending.
func planRecompute(ctx context.Context, tx *sql.Tx, fp string) (bool, error) {
	stored, _, err := metaValue(ctx, tx, metaDerivedConventions)
	if err != nil {
		return false, err
	}
	if stored == fp {
		return false, nil
	}
	if v, ok, err := metaValue(ctx, tx, metaDerivedRecompute); err != nil {
		return false, err
	} else if st, parsed := parseRecomputeState(v); ok && parsed && st.fingerprint == fp {
		return true, nil // resume
	}
	hwText, _, err := metaValue(ctx, tx, metaHighWater)
	if err != nil {
		return false, err
	}
	hw, _ := strconv.ParseInt(hwText, 10, 64)
	if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key IN (?, ?)`, metaDerivedConventions, metaDerivedRecompute); err != nil {
		return false, fmt.Errorf("plan recomputation: %w", err)
	}
	if hw == 0 { // nothing stored yet: every row will be computed at ingest
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)`, metaDerivedConventions, fp)
		if err != nil {
			return false, fmt.Errorf("plan recomputation: %w", err)
		}
		return false, nil
	}
	st := recomputeState{fingerprint: fp, done: 0, end: hw}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)`, metaDerivedRecompute, st.String()); err != nil {
		return false, fmt.Errorf("plan recomputation: %w", err)
	}
	return true, nil
}

// startRecompute recomputes chunk after chunk in the background until done, the store closes,
// or a chunk fails (logged; the next Open resumes).
func (s *Store) startRecompute() {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.stopBG:
				cancel()
			case <-ctx.Done():
			}
		}()
		for {
			var done bool
			err := s.writer.submit(ctx, 0, true, func(ctx context.Context, tx *sql.Tx, st *statements, _ *int64) error {
				var err error
				done, err = recomputeChunkTx(ctx, tx, st, s.convFP)
				return err
			})
			switch {
			case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ErrClosed)):
				return
			case err != nil:
				s.logger().Warn("telemetry store: recomputing derived columns failed; the next start resumes", "err", err)
				return
			case done:
				s.logger().Debug("telemetry store: derived columns recomputed")
				return
			}
		}
	}()
}

// recomputeChunkTx recomputes the next chunk of rows inside the writer's transaction and
// records the progress; done is true when nothing is left (or another process took over with
// other conventions).
func recomputeChunkTx(ctx context.Context, tx *sql.Tx, st *statements, fp string) (done bool, err error) {
	v, ok, err := metaValue(ctx, tx, metaDerivedRecompute)
	if err != nil {
		return false, err
	}
	state, parsed := parseRecomputeState(v)
	if !ok || !parsed || state.fingerprint != fp {
		return true, nil
	}
	bound, err := recomputeSpans(ctx, tx, st, state)
	if err != nil {
		return false, err
	}
	if err := recomputeLogs(ctx, tx, st, state.done, bound); err != nil {
		return false, err
	}
	if bound >= state.end {
		_, err = tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, metaDerivedRecompute)
		if err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, metaDerivedConventions, fp)
		}
		if err != nil {
			return false, fmt.Errorf("finish recomputation: %w", err)
		}
		return true, nil
	}
	state.done = bound
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = ?`, state.String(), metaDerivedRecompute); err != nil {
		return false, fmt.Errorf("record recomputation progress: %w", err)
	}
	return false, nil
}

// recomputedSpan is a stored span with its derived columns as read for recomputation.
type recomputedSpan struct {
	seq                              int64
	row                              telemetry.SpanRow
	d                                spanDerived
	verdict                          sql.NullInt64
	isEntry, revisable, traceErrored bool
	runErr                           int64
}

// recomputeSpans recomputes up to recomputeChunk spans after state.done — their own derived
// columns, entry flags and run status — queues the occurrences of their failing traces, and
// returns the Seq bound it covered. Every change moves its rollup count.
func recomputeSpans(ctx context.Context, tx *sql.Tx, st *statements, state recomputeState) (int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+spanColumns+`, SpanAttributes, RunVerdict, IsEntry, EntryRevisable,
		TraceErrored, RunErrored, `+coalesced("RunId", "Domain", "JobId", "JobName", "DbKey", "DbSystem")+`
		FROM `+TracesTable+` WHERE Seq > ? AND Seq <= ? ORDER BY Seq LIMIT ?`, state.done, state.end, recomputeChunk)
	if err != nil {
		return 0, fmt.Errorf("read spans to recompute: %w", err)
	}
	var spans []recomputedSpan
	for rows.Next() {
		var r recomputedSpan
		var attrs string
		if err := rows.Scan(&r.seq, &r.row.TraceID, &r.row.SpanID, &r.row.ParentSpanID, &r.row.Name, &r.row.Kind, &r.row.Service,
			&r.row.StartNs, &r.row.DurationNs, &r.row.StatusCode, &r.row.StatusMessage, &attrs, &r.verdict, &r.isEntry,
			&r.revisable, &r.traceErrored, &r.runErr, &r.d.RunID, &r.d.Domain, &r.d.JobID, &r.d.JobName, &r.d.DBKey,
			&r.d.DBSystem); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read spans to recompute: %w", err)
		}
		r.row.Attributes = decodeAttrs(attrs)
		if r.verdict.Valid {
			r.d.Verdict = r.verdict.Int64
		}
		spans = append(spans, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read spans to recompute: %w", err)
	}
	bound := state.end
	if len(spans) == recomputeChunk {
		bound = spans[len(spans)-1].seq
	}
	need := map[spanKey]bool{}
	var traces []string
	seen := map[string]bool{}
	for _, r := range spans {
		if r.row.ParentSpanID != "" {
			need[spanKey{r.row.TraceID, r.row.ParentSpanID}] = true
		}
		if !seen[r.row.TraceID] {
			seen[r.row.TraceID] = true
			traces = append(traces, r.row.TraceID)
		}
	}
	parents, err := spansByID(ctx, tx, need)
	if err != nil {
		return 0, err
	}
	failing, err := storedErrorTraces(ctx, tx, st, traces)
	if err != nil {
		return 0, err
	}
	roll := &st.roll
	for i := range spans {
		r := &spans[i]
		d := st.dv.deriveSpan(&r.row)
		entry := entryGiven(r.row, parents[spanKey{r.row.TraceID, r.row.ParentSpanID}])
		canChange := revisable(r.row, entry)
		isRoot := r.row.IsRoot()
		errored := isRoot && failing[r.row.TraceID]
		var runErr int64
		verdict := sql.NullInt64{}
		if isRoot {
			runErr = runErrored(d.Verdict, errored)
			verdict = sql.NullInt64{Int64: d.Verdict, Valid: true}
		}
		if d == r.d && verdict == r.verdict && entry == r.isEntry && canChange == r.revisable &&
			errored == r.traceErrored && runErr == r.runErr {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+TracesTable+` SET RunId = ?, Domain = ?, RunVerdict = ?, JobId = ?, JobName = ?,
			DbKey = ?, DbSystem = ?, IsEntry = ?, EntryRevisable = ?, TraceErrored = ?, RunErrored = ? WHERE Seq = ?`,
			nullIfEmpty(d.RunID), nullIfEmpty(d.Domain), verdict, nullIfEmpty(d.JobID), nullIfEmpty(d.JobName),
			nullIfEmpty(d.DBKey), nullIfEmpty(d.DBSystem), boolInt(entry), boolInt(canChange), boolInt(errored), runErr,
			r.seq); err != nil {
			return 0, fmt.Errorf("recompute span: %w", err)
		}
		if isRoot && (d.Domain != r.d.Domain || runErr != r.runErr) {
			roll.addRun(r.row.StartNs, r.row.Service, r.d.Domain, -1, -r.runErr)
			roll.addRun(r.row.StartNs, r.row.Service, d.Domain, 1, runErr)
		}
		if entry != r.isEntry {
			roll.addEntry(r.row.StartNs, r.row.Service, r.row.Name, r.row.DurationNs, boolInt(r.row.IsError()), boolInt(entry)-boolInt(r.isEntry))
		}
		if d.DBKey != r.d.DBKey || d.DBSystem != r.d.DBSystem {
			isErr := boolInt(r.row.IsError())
			if r.d.DBKey != "" {
				roll.addDB(r.row.StartNs, r.d.DBKey, r.row.Service, r.d.DBSystem, r.row.DurationNs, isErr, -1)
			}
			if d.DBKey != "" {
				roll.addDB(r.row.StartNs, d.DBKey, r.row.Service, d.DBSystem, r.row.DurationNs, isErr, 1)
			}
		}
	}
	for _, t := range traces {
		if failing[t] {
			st.reshape[t] = true
		}
	}
	return bound, nil
}

// recomputeLogs recomputes the records with Seq in (after, bound]: the error flag, whether
// their trace fails, and their own occurrence.
func recomputeLogs(ctx context.Context, tx *sql.Tx, st *statements, after, bound int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+logColumns+`, LogAttributes, IsError, TraceFailing, `+
		coalesced("ErrorMessage", "ExceptionType", "Fingerprint")+` FROM `+LogsTable+` WHERE Seq > ? AND Seq <= ?`, after, bound)
	if err != nil {
		return fmt.Errorf("read log records to recompute: %w", err)
	}
	type record struct {
		seq              int64
		row              telemetry.LogRow
		isError, failing bool
		d                logDerived
	}
	var recs []record
	var traces []string
	seen := map[string]bool{}
	for rows.Next() {
		var r record
		var attrs string
		if err := rows.Scan(&r.seq, &r.row.TimeNs, &r.row.TraceID, &r.row.SpanID, &r.row.Service, &r.row.SeverityNumber,
			&r.row.SeverityText, &r.row.Body, &attrs, &r.isError, &r.failing, &r.d.ErrorMessage, &r.d.ExceptionType,
			&r.d.Fingerprint); err != nil {
			rows.Close()
			return fmt.Errorf("read log records to recompute: %w", err)
		}
		if r.row.IsError() || r.isError {
			r.row.Attributes = decodeAttrs(attrs)
			if t := r.row.TraceID; t != "" && !seen[t] {
				seen[t] = true
				traces = append(traces, t)
			}
			recs = append(recs, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read log records to recompute: %w", err)
	}
	failing, err := storedErrorTraces(ctx, tx, st, traces)
	if err != nil {
		return err
	}
	for _, r := range recs {
		isError := r.row.IsError()
		var d logDerived
		if isError {
			d = st.dv.deriveLog(&r.row)
		}
		folds := isError && r.row.TraceID != "" && failing[r.row.TraceID]
		if folds {
			st.reshape[r.row.TraceID] = true
		}
		if isError == r.isError && folds == r.failing && d == r.d {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+LogsTable+` SET IsError = ?, TraceFailing = ?, ErrorMessage = ?, ExceptionType = ?,
			Fingerprint = ? WHERE Seq = ?`, boolInt(isError), boolInt(folds), nullIfEmpty(d.ErrorMessage), nullIfEmpty(d.ExceptionType),
			nullIfEmpty(d.Fingerprint), r.seq); err != nil {
			return fmt.Errorf("recompute log record: %w", err)
		}
		was, now := boolInt(r.isError && !r.failing), boolInt(isError && !folds)
		st.roll.addLoneLog(r.row.TimeNs, r.row.Service, now-was)
	}
	return nil
}

// derivedCurrent reports whether the derived columns were all computed with the conventions
// of fingerprint fp.
func (s *Store) derivedCurrent(ctx context.Context, fp string) (bool, error) {
	v, ok, err := metaValue(ctx, s.readers, metaDerivedConventions)
	if err != nil {
		return false, err
	}
	return ok && v == fp, nil
}
