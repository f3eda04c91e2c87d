package store

import (
	"context"
	"database/sql"
	"fmt"
)

// writeSpans inserts a batch inside the writer's transaction and keeps what depends on other
// batches exact (shape.go): each span's entry flag given the stored spans of its trace and the
// stored spans it settles, TraceErrored and RunErrored of the trace's roots, TraceFailing of
// its stored error records, and the occurrences of every failing trace it touches (recomputed
// once per transaction, before it commits). The rollups count every row.
//
// A span whose trace and span id are stored already (a retried export) is not stored again:
// the insert skips it, and the batch is written again without it, so nothing counts it.
func writeSpans(ctx context.Context, tx *sql.Tx, st *statements, b spanBatch, next *int64) error {
	first := *next
	for {
		copies, err := writeSpansOnce(ctx, tx, st, b, next)
		if err != nil || len(copies) == 0 {
			return err
		}
		b = b.without(copies)
		*next = first
	}
}

// writeSpansOnce writes b and returns nil copies, or, when some of its spans are copies of
// stored spans, writes nothing and returns them (indexes of b.recs).
func writeSpansOnce(ctx context.Context, tx *sql.Tx, st *statements, b spanBatch, next *int64) (map[int]bool, error) {
	storedErr, err := storedErrorTraces(ctx, tx, st, b.traces)
	if err != nil {
		return nil, err
	}
	entry := make([]bool, len(b.recs))
	for i := range b.recs {
		entry[i] = b.recs[i].entry
	}
	settled, err := settleEntries(ctx, tx, st, &b, entry)
	if err != nil {
		return nil, err
	}
	resIDs, err := resolveResources(ctx, tx, st, b.resources.list)
	if err != nil {
		return nil, err
	}
	// Sequence numbers follow the batch's order whatever shape each row is inserted in.
	first := *next
	runErr := make([]int64, len(b.recs))
	for i := range b.recs {
		r := &b.recs[i]
		args := b.args[r.shape]
		args[r.at+colSeq] = *next
		args[r.at+colResource] = resIDs[r.res]
		*next++
		if r.shape == shapeEntry || r.shape == shapeFull {
			args[r.at+colIsEntry] = boolInt(entry[i])
			args[r.at+colRevisable] = boolInt(revisable(r.row, entry[i]))
		}
		if r.shape == shapeFull {
			if r.row.IsRoot() {
				errored := b.failing[r.row.TraceID] || storedErr[r.row.TraceID]
				runErr[i] = runErrored(r.d.Verdict, errored)
				args[r.at+colTraceErrored] = boolInt(errored)
				args[r.at+colRunErrored] = runErr[i]
			}
		}
	}
	// Everything this job writes besides the rows comes after them: when the insert skipped a
	// copy of a stored span, deleting the rows it did insert undoes the job.
	var inserted int64
	for sh, args := range b.args {
		n, err := insertPlanned(ctx, tx, st, insertTable(sh), args, len(spanShapeColumns[sh]), b.plans[sh],
			st.insertSpans[sh], st.insertSpan[sh], spanRowsPerInsert[sh])
		inserted += n
		if err != nil {
			return nil, fmt.Errorf("insert spans: %w", err)
		}
	}
	if inserted < int64(len(b.recs)) {
		copies, err := skipped(ctx, tx, first, *next)
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM `+TracesTable+` WHERE Seq >= ? AND Seq < ?`, first, *next)
		}
		if err != nil {
			return nil, fmt.Errorf("insert spans: %w", err)
		}
		return copies, nil
	}
	if err := unsettleEntries(ctx, tx, st, settled); err != nil {
		return nil, err
	}
	var newlyFailing []string
	for _, t := range b.traces {
		if b.failing[t] && !storedErr[t] {
			newlyFailing = append(newlyFailing, t)
		}
	}
	if err := markFailing(ctx, tx, st, newlyFailing); err != nil {
		return nil, err
	}
	roll := &st.roll
	for i := range b.recs {
		r := &b.recs[i]
		roll.addSpan(r.row.StartNs, r.row.Service, 1)
		if r.d.DBKey != "" {
			roll.addDB(r.row.StartNs, r.d.DBKey, r.row.Service, r.d.DBSystem, r.row.DurationNs, boolInt(r.row.IsError()), 1)
		}
		if entry[i] && (r.shape == shapeEntry || r.shape == shapeFull) {
			roll.addEntry(r.row.StartNs, r.row.Service, r.row.Name, r.row.DurationNs, boolInt(r.row.IsError()), 1)
		}
		if r.row.IsRoot() {
			roll.addRun(r.row.StartNs, r.row.Service, r.d.Domain, 1, runErr[i])
		}
	}
	for _, t := range b.traces {
		if b.failing[t] || storedErr[t] {
			st.reshape[t] = true
		}
	}
	return nil, nil
}

// skipped returns the indexes (from 0) of the sequence numbers in [first, end) the insert
// skipped.
func skipped(ctx context.Context, tx *sql.Tx, first, end int64) (map[int]bool, error) {
	out := make(map[int]bool)
	for s := first; s < end; s++ {
		out[int(s-first)] = true
	}
	err := eachRow(ctx, tx, `SELECT Seq FROM `+TracesTable+` WHERE Seq >= ? AND Seq < ?`, []any{first, end},
		func(scan func(...any) error) error {
			var s int64
			err := scan(&s)
			delete(out, int(s-first))
			return err
		})
	return out, err
}

// writeLogs inserts a batch of log records: an error record of a trace with a stored error
// span folds into that trace's occurrences (recomputed before the transaction commits); any
// other error record is an occurrence of its own.
func writeLogs(ctx context.Context, tx *sql.Tx, st *statements, b logBatch, next *int64) error {
	var traces []string
	seen := map[string]bool{}
	for _, r := range b.recs {
		if t := r.row.TraceID; r.isError && t != "" && !seen[t] {
			seen[t] = true
			traces = append(traces, t)
		}
	}
	failing, err := storedErrorTraces(ctx, tx, st, traces)
	if err != nil {
		return err
	}
	resIDs, err := resolveResources(ctx, tx, st, b.resources.list)
	if err != nil {
		return err
	}
	for _, r := range b.recs {
		b.args[r.at+colSeq] = *next
		b.args[r.at+colResource] = resIDs[r.res]
		*next++
		folds := r.isError && r.row.TraceID != "" && failing[r.row.TraceID]
		b.args[r.at+logColTraceFailing] = boolInt(folds)
		st.roll.addLog(r.row.TimeNs, r.row.Service, boolInt(r.isError && !folds), 1)
		if folds {
			st.reshape[r.row.TraceID] = true
		}
	}
	if _, err := insertPlanned(ctx, tx, st, logTable, b.args, logColumnCount, b.plans, st.insertLogs, st.insertLog,
		rowsPerInsert); err != nil {
		return fmt.Errorf("insert logs: %w", err)
	}
	return nil
}

// storedErrorTraces returns which of traces already have a stored error span: a seek each in
// the small index of error spans' traces.
func storedErrorTraces(ctx context.Context, tx *sql.Tx, st *statements, traces []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := inChunks(ctx, traces, tx.StmtContext(ctx, st.storedErrorTraces), tx.StmtContext(ctx, st.storedFewErrorTraces),
		func(rows *sql.Rows) error {
			var t string
			if err := rows.Scan(&t); err != nil {
				return err
			}
			out[t] = true
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("find stored error spans: %w", err)
	}
	return out, nil
}

// markFailing records that traces, which had no stored error span, now have one: their stored
// roots are marked TraceErrored (and RunErrored follows their verdict) and their stored error
// records fold into the trace from now on. Each change moves its rollup count.
func markFailing(ctx context.Context, tx *sql.Tx, st *statements, traces []string) error {
	roll := &st.roll
	err := inChunks(ctx, traces, tx.StmtContext(ctx, st.markTraceErrored), tx.StmtContext(ctx, st.markFewTraceErrored),
		func(rows *sql.Rows) error {
			var ns, verdict int64
			var service, domain string
			if err := rows.Scan(&ns, &service, &domain, &verdict); err != nil {
				return err
			}
			roll.addRun(ns, service, domain, 0, runErrored(verdict, true)-runErrored(verdict, false))
			return nil
		})
	if err != nil {
		return fmt.Errorf("mark errored runs: %w", err)
	}
	err = inChunks(ctx, traces, tx.StmtContext(ctx, st.markLogsFailing), tx.StmtContext(ctx, st.markFewLogsFailing),
		func(rows *sql.Rows) error {
			var ns int64
			var service string
			if err := rows.Scan(&ns, &service); err != nil {
				return err
			}
			roll.addLoneLog(ns, service, -1)
			return nil
		})
	if err != nil {
		return fmt.Errorf("fold error records: %w", err)
	}
	for _, t := range traces {
		st.reshape[t] = true
	}
	return nil
}

// noTrace pads the IN lists of prepared statements: no row has it (trace ids are 32 hex
// characters, or empty on a log record without a trace — so the empty id cannot pad).
const noTrace = "-"

// inChunks runs many (idChunk ids) or few (fewIDs ids) over ids, padding the last group with
// noTrace, and calls fn for every row returned.
func inChunks(ctx context.Context, ids []string, many, few *sql.Stmt, fn func(*sql.Rows) error) error {
	for len(ids) > 0 {
		stmt, size := many, idChunk
		if len(ids) <= fewIDs {
			stmt, size = few, fewIDs
		}
		args := make([]any, size)
		for i := range args {
			args[i] = noTrace
			if i < len(ids) {
				args[i] = ids[i]
			}
		}
		ids = ids[min(size, len(ids)):]
		rows, err := stmt.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := fn(rows); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}
