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
		if b.args[r*spanColumnCount+colTraceErrored] == int64(0) {
			unknown = append(unknown, b.args[r*spanColumnCount+colTraceID].(string))
		}
	}
	if len(unknown) > 0 {
		errored, err := storedErrorTraces(ctx, tx, st, unknown)
		if err != nil {
			return err
		}
		for _, r := range b.roots {
			if errored[b.args[r*spanColumnCount+colTraceID].(string)] {
				b.args[r*spanColumnCount+colTraceErrored] = int64(1)
			}
		}
	}
	assignSeq(b.args, spanColumnCount, next)
	if err := insertRows(ctx, tx, st.insertSpans, st.insertSpan, b.args, spanColumnCount); err != nil {
		return fmt.Errorf("insert spans: %w", err)
	}
	var roll rollup
	if err := markStoredRoots(ctx, tx, st, b.errorTraces, &roll); err != nil {
		return err
	}
	for i := 0; i < b.rows; i++ {
		row := b.args[i*spanColumnCount : (i+1)*spanColumnCount]
		roll.addSpan(row[colTimestamp].(int64), row[colServiceName].(string), row[colIsError].(int64), 1)
		if row[colIsRoot] == int64(1) {
			domain, _ := row[colDomain].(string)
			roll.addRun(row[colTimestamp].(int64), row[colServiceName].(string), domain, 1, row[colTraceErrored].(int64))
		}
	}
	return roll.apply(ctx, tx, st)
}

// writeLogs inserts a batch of log records and counts them in the rollup.
func writeLogs(ctx context.Context, tx *sql.Tx, st *statements, args []any, next *int64) error {
	assignSeq(args, logColumnCount, next)
	if err := insertRows(ctx, tx, st.insertLogs, st.insertLog, args, logColumnCount); err != nil {
		return fmt.Errorf("insert logs: %w", err)
	}
	var roll rollup
	for i := 0; i < len(args); i += logColumnCount {
		roll.addLog(args[i+colTimestamp].(int64), args[i+logColServiceName].(string), args[i+logColIsError].(int64), 1)
	}
	return roll.apply(ctx, tx, st)
}

// storedErrorTraces returns which of traces have an error span already stored.
func storedErrorTraces(ctx context.Context, tx *sql.Tx, st *statements, traces []string) (map[string]bool, error) {
	out := map[string]bool{}
	stmt := tx.StmtContext(ctx, st.storedErrorTraces)
	err := inChunks(traces, func(args []any) error {
		rows, err := stmt.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				return err
			}
			out[t] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("find stored error spans: %w", err)
	}
	return out, nil
}

// markStoredRoots sets TraceErrored on the stored roots of traces that were not marked yet and
// moves each into the errored count of its rollup bucket.
func markStoredRoots(ctx context.Context, tx *sql.Tx, st *statements, traces []string, roll *rollup) error {
	stmt := tx.StmtContext(ctx, st.markTraceErrored)
	err := inChunks(traces, func(args []any) error {
		rows, err := stmt.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var bucket int64
			var service, domain string
			if err := rows.Scan(&bucket, &service, &domain); err != nil {
				return err
			}
			roll.addRun(bucket*bucketNs, service, domain, 0, 1)
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("mark errored runs: %w", err)
	}
	return nil
}

// inChunks calls fn with ids in groups of idChunk, the last group padded with the empty id.
func inChunks(ids []string, fn func(args []any) error) error {
	args := make([]any, idChunk)
	for lo := 0; lo < len(ids); lo += idChunk {
		for i := range args {
			args[i] = ""
			if lo+i < len(ids) {
				args[i] = ids[lo+i]
			}
		}
		if err := fn(args); err != nil {
			return err
		}
	}
	return nil
}
