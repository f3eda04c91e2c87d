package store

import (
	"context"
	"database/sql"
	"fmt"
)

// writeSpans inserts a batch inside the writer's transaction and keeps what depends on other
// batches exact: a root's TraceErrored also covers error spans stored earlier, roots stored
// earlier are marked when this batch brings an error span of their trace, and the rollups
// count every row.
func writeSpans(ctx context.Context, tx *sql.Tx, st *statements, b spanBatch, next *int64) error {
	var unknown []string
	for _, r := range b.roots {
		if !b.meta[r].traceErrored {
			unknown = append(unknown, b.meta[r].trace)
		}
	}
	if len(unknown) > 0 {
		errored, err := storedErrorTraces(ctx, tx, st, unknown)
		if err != nil {
			return err
		}
		for _, r := range b.roots {
			if errored[b.meta[r].trace] {
				b.markErrored(r)
			}
		}
	}
	// Sequence numbers follow the batch's order whatever shape each row is inserted in.
	for _, m := range b.meta {
		b.args[m.shape][m.at+colSeq] = *next
		*next++
	}
	for sh, args := range b.args {
		n := len(spanShapeColumns[sh])
		if err := insertRows(ctx, tx, st.insertSpans[sh], st.insertSpan[sh], args, n, spanRowsPerInsert[sh]); err != nil {
			return fmt.Errorf("insert spans: %w", err)
		}
	}
	roll := &st.roll
	if err := markStoredRoots(ctx, tx, st, b.errorTraces, roll); err != nil {
		return err
	}
	for _, m := range b.meta {
		isErr := boolInt(m.isError)
		roll.addSpan(m.ns, m.service, isErr, 1)
		if m.label != "" {
			roll.addDB(m.ns, m.label, m.service, m.system, m.duration, isErr, 1)
		}
		if m.isRoot {
			roll.addRun(m.ns, m.service, m.domain, 1, boolInt(m.traceErrored))
		}
	}
	return nil
}

// writeLogs inserts a batch of log records and counts them in the rollup.
func writeLogs(ctx context.Context, tx *sql.Tx, st *statements, args []any, next *int64) error {
	assignSeq(args, logColumnCount, next)
	if err := insertRows(ctx, tx, st.insertLogs, st.insertLog, args, logColumnCount, rowsPerInsert); err != nil {
		return fmt.Errorf("insert logs: %w", err)
	}
	for i := 0; i < len(args); i += logColumnCount {
		st.roll.addLog(args[i+colTimestamp].(int64), args[i+logColServiceName].(string), args[i+logColIsError].(int64), 1)
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

// markStoredRoots sets TraceErrored on the stored roots of traces that were not marked yet and
// moves each into the errored count of its rollup bucket.
func markStoredRoots(ctx context.Context, tx *sql.Tx, st *statements, traces []string, roll *rollup) error {
	err := inChunks(ctx, traces, tx.StmtContext(ctx, st.markTraceErrored), tx.StmtContext(ctx, st.markFewTraceErrored),
		func(rows *sql.Rows) error {
			var bucket int64
			var service, domain string
			if err := rows.Scan(&bucket, &service, &domain); err != nil {
				return err
			}
			roll.addRun(bucket*bucketNs, service, domain, 0, 1)
			return nil
		})
	if err != nil {
		return fmt.Errorf("mark errored runs: %w", err)
	}
	return nil
}

// inChunks runs many (idChunk ids) or few (fewIDs ids) over ids, padding the last group with
// the empty id (which no stored trace has), and calls fn for every row returned.
func inChunks(ctx context.Context, ids []string, many, few *sql.Stmt, fn func(*sql.Rows) error) error {
	for len(ids) > 0 {
		stmt, size := many, idChunk
		if len(ids) <= fewIDs {
			stmt, size = few, fewIDs
		}
		args := make([]any, size)
		for i := range args {
			args[i] = ""
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
