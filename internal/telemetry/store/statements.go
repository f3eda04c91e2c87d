package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Column lists in insert order; spanArgs and logArgs produce values in this order.
const (
	spanColumns = `Seq, Timestamp, EndTimestamp, TraceId, SpanId, ParentSpanId, TraceState,
	SpanName, SpanKind, ServiceName, ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes,
	Duration, StatusCode, StatusMessage, EventsJSON, LinksJSON, IsRoot, IsError,
	RunId, Domain, TraceErrored, JobId, JobName, JobStatus, DbLabel, DbSystem, ErrorMessage,
	ExceptionType, Fingerprint`
	spanColumnCount = 32
	logColumns      = `Seq, Timestamp, ObservedTimestamp, TraceId, SpanId, TraceFlags,
	SeverityText, SeverityNumber, ServiceName, Body, ResourceAttributes, ScopeName, ScopeVersion,
	LogAttributes, IsError, ErrorMessage, ExceptionType, Fingerprint`
	logColumnCount = 18
	// rowsPerInsert is how many rows one multi-row INSERT carries: fewer statement executions
	// per batch is most of the ingest speed with a database/sql driver.
	rowsPerInsert = 32
)

// Positions in a row of insert arguments that the writer reads back.
const (
	colSeq          = 0
	colTimestamp    = 1
	colTraceID      = 3
	colServiceName  = 9
	colIsRoot       = 19
	colIsError      = 20
	colDomain       = 22
	colTraceErrored = 23
	// Log rows keep Timestamp at colTimestamp too.
	logColServiceName = 8
	logColIsError     = 14
)

// idChunk is how many ids the prepared IN (...) statements take at once; shorter lists are
// padded with the empty id, which no stored trace has.
const idChunk = 64

// statements are prepared once on the write connection and reused by every transaction.
type statements struct {
	readHighWater  *sql.Stmt
	writeHighWater *sql.Stmt
	insertSpan     *sql.Stmt // one row
	insertSpans    *sql.Stmt // rowsPerInsert rows
	insertLog      *sql.Stmt
	insertLogs     *sql.Stmt
	// storedErrorTraces selects which of idChunk trace ids have a stored error span.
	storedErrorTraces *sql.Stmt
	// markTraceErrored sets TraceErrored on the stored roots of idChunk traces and returns
	// each changed root's bucket, service and domain.
	markTraceErrored *sql.Stmt
	addActivity      *sql.Stmt
	addRunActivity   *sql.Stmt
	dropActivity     *sql.Stmt
	dropRunActivity  *sql.Stmt
}

func prepareStatements(ctx context.Context, db *sql.DB) (*statements, error) {
	st := &statements{}
	var err error
	prep := func(dst **sql.Stmt, query string) {
		if err != nil {
			return
		}
		*dst, err = db.PrepareContext(ctx, query)
	}
	prep(&st.readHighWater, `SELECT value FROM meta WHERE key = '`+metaHighWater+`'`)
	prep(&st.writeHighWater, `UPDATE meta SET value = ? WHERE key = '`+metaHighWater+`'`)
	prep(&st.insertSpan, insertSQL(TracesTable, spanColumns, spanColumnCount, 1))
	prep(&st.insertSpans, insertSQL(TracesTable, spanColumns, spanColumnCount, rowsPerInsert))
	prep(&st.insertLog, insertSQL(LogsTable, logColumns, logColumnCount, 1))
	prep(&st.insertLogs, insertSQL(LogsTable, logColumns, logColumnCount, rowsPerInsert))
	in := "(" + placeholders(idChunk) + ")"
	prep(&st.storedErrorTraces, `SELECT DISTINCT TraceId FROM `+TracesTable+` INDEXED BY otel_traces_error_traces
		WHERE IsError = 1 AND TraceId IN `+in)
	prep(&st.markTraceErrored, `UPDATE `+TracesTable+` SET TraceErrored = 1
		WHERE IsRoot = 1 AND TraceErrored = 0 AND TraceId IN `+in+`
		RETURNING Timestamp / `+bucketExpr+`, ServiceName, COALESCE(Domain, '')`)
	prep(&st.addActivity, `INSERT INTO `+ActivityTable+` (Bucket, ServiceName, Spans, SpanErrors, Logs, LogErrors)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (Bucket, ServiceName) DO UPDATE SET
		Spans = Spans + excluded.Spans, SpanErrors = SpanErrors + excluded.SpanErrors,
		Logs = Logs + excluded.Logs, LogErrors = LogErrors + excluded.LogErrors`)
	prep(&st.addRunActivity, `INSERT INTO `+RunActivityTable+` (Bucket, ServiceName, Domain, Runs, ErroredRuns)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (Bucket, ServiceName, Domain) DO UPDATE SET
		Runs = Runs + excluded.Runs, ErroredRuns = ErroredRuns + excluded.ErroredRuns`)
	prep(&st.dropActivity, `DELETE FROM `+ActivityTable+` WHERE Bucket = ? AND ServiceName = ? AND Spans = 0 AND Logs = 0`)
	prep(&st.dropRunActivity, `DELETE FROM `+RunActivityTable+` WHERE Bucket = ? AND ServiceName = ? AND Domain = ? AND Runs = 0`)
	if err != nil {
		st.close()
		return nil, fmt.Errorf("prepare write statements: %w", err)
	}
	return st, nil
}

// close releases the prepared statements; a failure to close one leaks nothing the closing
// connection does not release anyway, so it is not reported.
func (st *statements) close() {
	for _, s := range []*sql.Stmt{st.readHighWater, st.writeHighWater, st.insertSpan, st.insertSpans, st.insertLog,
		st.insertLogs, st.storedErrorTraces, st.markTraceErrored, st.addActivity, st.addRunActivity, st.dropActivity,
		st.dropRunActivity} {
		if s != nil {
			_ = s.Close()
		}
	}
}

// insertSQL renders "INSERT INTO table (cols) VALUES (?,…),(?,…)…" for rows rows.
func insertSQL(table, columns string, ncols, rows int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", ncols), ",") + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(columns)
	b.WriteString(") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	return b.String()
}

// insertRows writes n rows whose arguments fill args (ncols per row) using the multi-row
// statement for full chunks and the single-row one for the rest.
func insertRows(ctx context.Context, tx *sql.Tx, many, one *sql.Stmt, args []any, ncols int) error {
	n := len(args) / ncols
	chunk := rowsPerInsert * ncols
	i := 0
	if n >= rowsPerInsert {
		stmt := tx.StmtContext(ctx, many)
		for ; i+rowsPerInsert <= n; i += rowsPerInsert {
			if _, err := stmt.ExecContext(ctx, args[i*ncols:i*ncols+chunk]...); err != nil {
				return err
			}
		}
	}
	if i < n {
		stmt := tx.StmtContext(ctx, one)
		for ; i < n; i++ {
			if _, err := stmt.ExecContext(ctx, args[i*ncols:(i+1)*ncols]...); err != nil {
				return err
			}
		}
	}
	return nil
}
