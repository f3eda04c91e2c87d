package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Derived columns computed with other conventions than the store's (a changed configuration,
// another preset, a build whose derivation changed, or a file from before derived columns
// existed) are recomputed in the background rather than at Open: a day of telemetry takes
// tens of seconds to recompute, and `runlens serve` opens the store on the first tool call.
// Meanwhile ingest computes new rows with the new conventions and the queries decode
// attributes row by row (correct, slower); once every row is done, meta records the new
// fingerprint and the queries read the derived columns again.
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
				done, err = recomputeChunkTx(ctx, tx, st, s.derive, s.convFP)
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
func recomputeChunkTx(ctx context.Context, tx *sql.Tx, st *statements, dv *deriver, fp string) (done bool, err error) {
	v, ok, err := metaValue(ctx, tx, metaDerivedRecompute)
	if err != nil {
		return false, err
	}
	state, parsed := parseRecomputeState(v)
	if !ok || !parsed || state.fingerprint != fp {
		return true, nil
	}
	bound, err := recomputeSpans(ctx, tx, dv, state, &st.roll)
	if err != nil {
		return false, err
	}
	if err := recomputeLogs(ctx, tx, state.done, bound); err != nil {
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

// storedSpan is a stored span with its derived columns as read for recomputation.
type storedSpan struct {
	seq, ns, duration         int64
	name, service             string
	isRoot, isError           bool
	statusMessage, eventsJSON string
	attrs                     string
	traceErrored              int64
	d                         spanDerived
}

// recomputeSpans recomputes up to recomputeChunk spans after state.done and returns the Seq
// bound it covered. A root whose domain changes moves its count between rollup domains.
func recomputeSpans(ctx context.Context, tx *sql.Tx, dv *deriver, state recomputeState, roll *rollup) (int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT Seq, Timestamp, Duration, SpanName, ServiceName, IsRoot, IsError, StatusMessage,
		EventsJSON, SpanAttributes, TraceErrored, `+coalesced("RunId", "Domain", "JobId", "JobName", "JobStatus",
		"DbLabel", "DbSystem", "ErrorMessage", "ExceptionType", "Fingerprint")+`
		FROM `+TracesTable+` WHERE Seq > ? AND Seq <= ? ORDER BY Seq LIMIT ?`, state.done, state.end, recomputeChunk)
	if err != nil {
		return 0, fmt.Errorf("read spans to recompute: %w", err)
	}
	var spans []storedSpan
	for rows.Next() {
		var r storedSpan
		if err := rows.Scan(&r.seq, &r.ns, &r.duration, &r.name, &r.service, &r.isRoot, &r.isError, &r.statusMessage, &r.eventsJSON,
			&r.attrs, &r.traceErrored, &r.d.RunID, &r.d.Domain, &r.d.JobID, &r.d.JobName, &r.d.JobStatus,
			&r.d.DBLabel, &r.d.DBSystem, &r.d.ErrorMessage, &r.d.ExceptionType, &r.d.Fingerprint); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read spans to recompute: %w", err)
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
	for _, r := range spans {
		f := spanFacts{name: r.name, isRoot: r.isRoot, isError: r.isError, statusMessage: r.statusMessage}
		if r.isError {
			f.exceptionMessage, f.exceptionType = exceptionOf(r.eventsJSON)
		}
		d := dv.deriveSpan(f, decodeAttrs(r.attrs))
		if d == r.d {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+TracesTable+` SET RunId = ?, Domain = ?, JobId = ?, JobName = ?,
			JobStatus = ?, DbLabel = ?, DbSystem = ?, ErrorMessage = ?, ExceptionType = ?, Fingerprint = ? WHERE Seq = ?`,
			nullIfEmpty(d.RunID), nullIfEmpty(d.Domain), nullIfEmpty(d.JobID), nullIfEmpty(d.JobName),
			nullIfEmpty(d.JobStatus), nullIfEmpty(d.DBLabel), nullIfEmpty(d.DBSystem), nullIfEmpty(d.ErrorMessage),
			nullIfEmpty(d.ExceptionType), nullIfEmpty(d.Fingerprint), r.seq); err != nil {
			return 0, fmt.Errorf("recompute span: %w", err)
		}
		if r.isRoot && d.Domain != r.d.Domain {
			roll.addRun(r.ns, r.service, r.d.Domain, -1, -r.traceErrored)
			roll.addRun(r.ns, r.service, d.Domain, 1, r.traceErrored)
		}
		if d.DBLabel != r.d.DBLabel || d.DBSystem != r.d.DBSystem {
			isErr := boolInt(r.isError)
			if r.d.DBLabel != "" {
				roll.addDB(r.ns, r.d.DBLabel, r.service, r.d.DBSystem, r.duration, isErr, -1)
			}
			if d.DBLabel != "" {
				roll.addDB(r.ns, d.DBLabel, r.service, d.DBSystem, r.duration, isErr, 1)
			}
		}
	}
	return bound, nil
}

// recomputeLogs recomputes the error records with Seq in (after, bound]. Their derived columns
// do not depend on the conventions; only files from before they existed need this.
func recomputeLogs(ctx context.Context, tx *sql.Tx, after, bound int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT Seq, Body, LogAttributes, `+
		coalesced("ErrorMessage", "ExceptionType", "Fingerprint")+` FROM `+LogsTable+` WHERE Seq > ? AND Seq <= ? AND IsError = 1`, after, bound)
	if err != nil {
		return fmt.Errorf("read log records to recompute: %w", err)
	}
	type change struct {
		seq int64
		d   logDerived
	}
	var changes []change
	for rows.Next() {
		var seq int64
		var body, attrs string
		var cur logDerived
		if err := rows.Scan(&seq, &body, &attrs, &cur.ErrorMessage, &cur.ExceptionType, &cur.Fingerprint); err != nil {
			rows.Close()
			return fmt.Errorf("read log records to recompute: %w", err)
		}
		if d := deriveLog(body, decodeAttrs(attrs)); d != cur {
			changes = append(changes, change{seq, d})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read log records to recompute: %w", err)
	}
	for _, c := range changes {
		if _, err := tx.ExecContext(ctx, `UPDATE `+LogsTable+` SET ErrorMessage = ?, ExceptionType = ?, Fingerprint = ?
			WHERE Seq = ?`, nullIfEmpty(c.d.ErrorMessage), nullIfEmpty(c.d.ExceptionType), nullIfEmpty(c.d.Fingerprint),
			c.seq); err != nil {
			return fmt.Errorf("recompute log record: %w", err)
		}
	}
	return nil
}

// coalesced lists derived text columns for a SELECT, NULL read as the empty string.
func coalesced(columns ...string) string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = "COALESCE(" + c + ", '')"
	}
	return strings.Join(out, ", ")
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
