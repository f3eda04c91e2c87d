package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
)

// spanColumnNames are the span columns in the order spanArgs produces values.
var spanColumnNames = []string{"Seq", "Timestamp", "EndTimestamp", "TraceId", "SpanId", "ParentSpanId",
	"TraceState", "SpanName", "SpanKind", "ServiceName", "ResourceScopeId", "ScopeName", "ScopeVersion",
	"SpanAttributes", "Duration", "StatusCode", "StatusMessage", "EventsJSON", "LinksJSON", "IsRoot", "IsError",
	"DbKey", "DbSystem",
	"IsEntry", "EntryRevisable", "RunId", "Domain", "RunVerdict", "TraceErrored", "RunErrored", "JobId", "JobName"}

// logColumnNames are the log columns in the order logArgs produces values.
var logColumnNames = []string{"Seq", "Timestamp", "ObservedTimestamp", "TraceId", "SpanId", "TraceFlags",
	"SeverityText", "SeverityNumber", "ServiceName", "Body", "ResourceScopeId", "ScopeName", "ScopeVersion",
	"LogAttributes", "IsError", "ErrorMessage", "ExceptionType", "Fingerprint", "TraceFailing"}

// Span rows are inserted in one of four shapes, so that a span binds only the derived
// columns it has (the driver's cost is per bound parameter, NULL or not): most spans have
// none, database spans two, other entry spans four, and roots and job spans all of them. The
// occurrence columns are never inserted: the writer sets them on the few origin spans
// afterwards.
type spanShape int

const (
	shapePlain spanShape = iota // the exporter's columns only; derived ones default
	shapeDB                     // plus DbKey and DbSystem: database spans
	shapeEntry                  // plus IsEntry and EntryRevisable: entry spans
	shapeFull                   // every column: roots, job spans
	spanShapes
)

// spanShapeColumns are the positions in a full row that each shape inserts.
var spanShapeColumns = [spanShapes][]int{
	shapePlain: seq(0, colPlainEnd),
	shapeDB:    seq(0, colDBEnd),
	shapeEntry: seq(0, colEntryEnd),
	shapeFull:  seq(0, spanColumnCount),
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// Column lists in insert order; spanArgs and logArgs produce values in this order.
const (
	spanColumnCount = 32
	logColumnCount  = 19
	// rowsPerInsert is how many rows one multi-row INSERT carries: fewer statement executions
	// per batch is most of the ingest speed with a database/sql driver.
	rowsPerInsert = 32
	// maxTextParams keeps one INSERT under 512 text parameters: the driver records each bound
	// text in a slice that it grows by doubling, and the 513th doubles it to 1024 entries —
	// measured as a fifth more allocation per span.
	maxTextParams = 512
	// spanTextColumns counts the text columns a span row binds (ResourceScopeId is an integer);
	// the database shape adds two, the full shape six.
	spanTextColumns = 12
)

// spanRowsPerInsert is how many rows of a shape one INSERT carries: rowsPerInsert, or fewer
// when the shape's text columns would pass maxTextParams.
var spanRowsPerInsert = [spanShapes]int{
	shapePlain: min(rowsPerInsert, maxTextParams/spanTextColumns),
	shapeDB:    min(rowsPerInsert, maxTextParams/(spanTextColumns+2)),
	shapeEntry: min(rowsPerInsert, maxTextParams/(spanTextColumns+2)),
	shapeFull:  min(rowsPerInsert, maxTextParams/(spanTextColumns+6)),
}

// Positions in a row of insert arguments that the writer sets.
const (
	colSeq          = 0
	colResource     = 10 // ResourceScopeId: the batch's index of the row's resource until the writer resolves it
	colPlainEnd     = 21 // the exporter's columns end here, the derived ones start
	colDBEnd        = 23 // the database shape ends here
	colIsEntry      = 23
	colRevisable    = 24
	colEntryEnd     = 25 // the entry shape ends here
	colTraceErrored = 28
	colRunErrored   = 29
	// Log rows keep Seq at colSeq and ResourceScopeId at colResource too.
	logColTraceFailing = 18
)

// idChunk is how many ids the prepared IN (...) statements take at once; shorter lists are
// padded with noTrace.
const idChunk = 64

// fewIDs is the size of the IN (...) statements used for short lists.
const fewIDs = 8

// statements are prepared once on the write connection and reused by every transaction. roll
// accumulates the current transaction's rollup changes and reshape the traces whose
// occurrences it must recompute; the writer settles both once before it commits.
type statements struct {
	roll    rollup
	reshape map[string]bool
	// dv derives with the store's conventions.
	dv             *deriver
	readHighWater  *sql.Stmt
	writeHighWater *sql.Stmt
	// insertSpan holds one row, insertSpans spanRowsPerInsert rows, per shape.
	insertSpan  [spanShapes]*sql.Stmt
	insertSpans [spanShapes]*sql.Stmt
	insertLog   *sql.Stmt
	insertLogs  *sql.Stmt
	// inserts are the planned chunks' statements (insertplan.go), prepared as groups need them;
	// argBuf is reused for their arguments.
	inserts map[insertKey]*sql.Stmt
	argBuf  []any
	// resourceIDs are the otel_resource_scopes ids of committed resources by key
	// (resources.go); pendingResourceIDs those the current transaction resolved.
	resourceIDs, pendingResourceIDs map[string]int64
	findResource, insertResource    *sql.Stmt
	touchResource                   *sql.Stmt
	// Probes and updates over idChunk trace ids (…Few: fewIDs): which traces have a stored
	// error span, which have a stored revisable span.
	storedErrorTraces    *sql.Stmt
	storedFewErrorTraces *sql.Stmt
	revisable            *sql.Stmt
	revisableFew         *sql.Stmt
	markTraceErrored     *sql.Stmt
	markFewTraceErrored  *sql.Stmt
	markLogsFailing      *sql.Stmt
	markFewLogsFailing   *sql.Stmt
	// Which traces still have a stored span (after a prune's delete).
	tracesWithSpans    *sql.Stmt
	tracesWithSpansFew *sql.Stmt
	// The reshape of a trace's occurrences (shape.go): its spans and error records, and the
	// update of one span's occurrence.
	loadTrace       *sql.Stmt
	traceErrorLogs  *sql.Stmt
	setOccurrence   *sql.Stmt
	addActivity     *sql.Stmt
	addRunActivity  *sql.Stmt
	dropActivity    *sql.Stmt
	dropRunActivity *sql.Stmt
	addDBActivity   *sql.Stmt
	dropDBActivity  *sql.Stmt
	addEntryAct     *sql.Stmt
	dropEntryAct    *sql.Stmt
	addGroupAct     *sql.Stmt
	dropGroupAct    *sql.Stmt
}

// The upserts and deletes of the duration rollups, shared by the writer and the migration
// that fills them.
const (
	addDBActivitySQL = `INSERT INTO ` + DBActivityTable + ` (Bucket, DbKey, ServiceName, DbSystem, Spans, Duration, Errors, Sketch)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (DbKey, Bucket, ServiceName, DbSystem) DO UPDATE SET
		Spans = Spans + excluded.Spans, Duration = Duration + excluded.Duration, Errors = Errors + excluded.Errors,
		Sketch = ` + sketchMergeFunc + `(Sketch, excluded.Sketch)`
	dropDBActivitySQL = `DELETE FROM ` + DBActivityTable + ` WHERE Bucket = ? AND DbKey = ? AND ServiceName = ? AND DbSystem = ?
		AND Spans = 0`
	addEntryActivitySQL = `INSERT INTO ` + EntryActivityTable + ` (Bucket, ServiceName, SpanName, Spans, Duration, Errors, Sketch)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ServiceName, Bucket, SpanName) DO UPDATE SET
		Spans = Spans + excluded.Spans, Duration = Duration + excluded.Duration, Errors = Errors + excluded.Errors,
		Sketch = ` + sketchMergeFunc + `(Sketch, excluded.Sketch)`
	dropEntryActivitySQL = `DELETE FROM ` + EntryActivityTable + ` WHERE Bucket = ? AND ServiceName = ? AND SpanName = ? AND Spans = 0`
)

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
	for sh, cols := range spanShapeColumns {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = spanColumnNames[c]
		}
		prep(&st.insertSpan[sh], insertSQL(TracesTable, names, 1))
		prep(&st.insertSpans[sh], insertSQL(TracesTable, names, spanRowsPerInsert[sh]))
	}
	prep(&st.findResource, `SELECT Id FROM `+ResourceScopesTable+` WHERE Hash = ? AND ResourceAttributes = ? AND ScopeName = ?
		AND ScopeVersion = ? LIMIT 1`)
	prep(&st.insertResource, `INSERT INTO `+ResourceScopesTable+` (Hash, ResourceAttributes, ScopeName, ScopeVersion, LastTimestamp)
		VALUES (?, ?, ?, ?, ?) RETURNING Id`)
	prep(&st.touchResource, `UPDATE `+ResourceScopesTable+` SET LastTimestamp = max(LastTimestamp, ?) WHERE Id = ?`)
	prep(&st.insertLog, insertSQL(LogsTable, logColumnNames, 1))
	prep(&st.insertLogs, insertSQL(LogsTable, logColumnNames, rowsPerInsert))
	many, few := "("+placeholders(idChunk)+")", "("+placeholders(fewIDs)+")"
	both := func(dst, dstFew **sql.Stmt, prefix, suffix string) {
		prep(dst, prefix+many+suffix)
		prep(dstFew, prefix+few+suffix)
	}
	// Which of the ids have a row in an index: one seek each, however many rows a trace has.
	exists := func(dst, dstFew **sql.Stmt, index, cond string) {
		for _, c := range []struct {
			dst **sql.Stmt
			n   int
		}{{dst, idChunk}, {dstFew, fewIDs}} {
			prep(c.dst, `WITH b(id) AS (VALUES `+strings.TrimSuffix(strings.Repeat("(?), ", c.n), ", ")+`) SELECT id FROM b
				WHERE EXISTS (SELECT 1 FROM `+TracesTable+` INDEXED BY `+index+` WHERE `+cond+` AND TraceId = b.id)`)
		}
	}
	exists(&st.storedErrorTraces, &st.storedFewErrorTraces, "otel_traces_error_traces", "IsError = 1")
	exists(&st.revisable, &st.revisableFew, "otel_traces_revisable", "EntryRevisable = 1")
	exists(&st.tracesWithSpans, &st.tracesWithSpansFew, "otel_traces_trace_span", "true")
	both(&st.markTraceErrored, &st.markFewTraceErrored,
		`UPDATE `+TracesTable+` SET TraceErrored = 1, RunErrored = (COALESCE(RunVerdict, 0) >> 1) & 1
		WHERE IsRoot = 1 AND TraceErrored = 0 AND TraceId IN `,
		` RETURNING Timestamp, ServiceName, COALESCE(Domain, ''), COALESCE(RunVerdict, 0)`)
	both(&st.markLogsFailing, &st.markFewLogsFailing,
		`UPDATE `+LogsTable+` SET TraceFailing = 1 WHERE IsError = 1 AND TraceFailing = 0 AND TraceId IN `,
		` RETURNING Timestamp, ServiceName`)
	prep(&st.loadTrace, `SELECT `+spanColumns+`, SpanAttributes, EventsJSON, IsOrigin, `+
		coalesced("ErrorMessage", "ExceptionType", "Fingerprint", "OccRunId", "OccDomain")+` FROM `+TracesTable+
		` WHERE TraceId = ?`+spansNewest+` LIMIT `+strconv.Itoa(maxShapedSpans+1))
	prep(&st.traceErrorLogs, `SELECT `+logColumns+fieldColumns(telemetry.FieldAttributes, LogsTable, "LogAttributes", "")+` FROM `+LogsTable+
		` WHERE TraceId = ? AND IsError = 1`+
		logsNewest+` LIMIT `+strconv.Itoa(maxShapedLogs+1))
	prep(&st.setOccurrence, `UPDATE `+TracesTable+` SET IsOrigin = ?, ErrorMessage = ?, ExceptionType = ?, Fingerprint = ?,
		OccRunId = ?, OccDomain = ? WHERE Seq = ?`)
	prep(&st.addActivity, `INSERT INTO `+ActivityTable+` (Bucket, ServiceName, Spans, SpanOccurrences, Logs, LogOccurrences)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (Bucket, ServiceName) DO UPDATE SET
		Spans = Spans + excluded.Spans, SpanOccurrences = SpanOccurrences + excluded.SpanOccurrences,
		Logs = Logs + excluded.Logs, LogOccurrences = LogOccurrences + excluded.LogOccurrences`)
	prep(&st.addRunActivity, `INSERT INTO `+RunActivityTable+` (Bucket, ServiceName, Domain, Runs, ErroredRuns)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (Bucket, ServiceName, Domain) DO UPDATE SET
		Runs = Runs + excluded.Runs, ErroredRuns = ErroredRuns + excluded.ErroredRuns`)
	prep(&st.dropActivity, `DELETE FROM `+ActivityTable+` WHERE Bucket = ? AND ServiceName = ? AND Spans = 0 AND Logs = 0`)
	prep(&st.addDBActivity, addDBActivitySQL)
	prep(&st.dropDBActivity, dropDBActivitySQL)
	prep(&st.addEntryAct, addEntryActivitySQL)
	prep(&st.dropEntryAct, dropEntryActivitySQL)
	prep(&st.addGroupAct, `INSERT INTO `+GroupActivityTable+` (GroupKey, Bucket, Occurrences) VALUES (?, ?, ?)
		ON CONFLICT (GroupKey, Bucket) DO UPDATE SET Occurrences = Occurrences + excluded.Occurrences`)
	prep(&st.dropGroupAct, `DELETE FROM `+GroupActivityTable+` WHERE GroupKey = ? AND Bucket = ? AND Occurrences = 0`)
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
	all := []*sql.Stmt{st.readHighWater, st.writeHighWater, st.insertLog, st.insertLogs, st.storedErrorTraces,
		st.storedFewErrorTraces, st.revisable, st.revisableFew, st.markTraceErrored, st.markFewTraceErrored,
		st.markLogsFailing, st.markFewLogsFailing, st.addActivity, st.addRunActivity, st.dropActivity,
		st.dropRunActivity, st.addDBActivity, st.dropDBActivity, st.addEntryAct, st.dropEntryAct, st.addGroupAct, st.dropGroupAct, st.loadTrace, st.traceErrorLogs, st.setOccurrence,
		st.findResource, st.insertResource, st.touchResource}
	all = append(append(all, st.insertSpan[:]...), st.insertSpans[:]...)
	for _, s := range st.inserts {
		all = append(all, s)
	}
	for _, s := range all {
		if s != nil {
			_ = s.Close()
		}
	}
}

// enumColumns are the columns bound as a small integer that the statement turns into the
// exporter's word, so the driver binds an integer instead of copying a short text into C memory
// for every span; kindCodes and statusCodes list the words by code.
var (
	enumColumns = map[string][]string{"SpanKind": kindCodes, "StatusCode": statusCodes}
	kindCodes   = []string{"Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"}
	statusCodes = []string{"Unset", "Ok", "Error"}
)

// insertSQL renders "INSERT INTO table (columns) VALUES (…),(…)…" for rows rows.
func insertSQL(table string, columns []string, rows int) string {
	values := make([]string, len(columns))
	for i, c := range columns {
		values[i] = "?"
		if words, ok := enumColumns[c]; ok {
			var b strings.Builder
			b.WriteString("CASE ?")
			for code, w := range words[1:] {
				fmt.Fprintf(&b, " WHEN %d THEN '%s'", code+1, w)
			}
			fmt.Fprintf(&b, " ELSE '%s' END", words[0])
			values[i] = b.String()
		}
	}
	one := "(" + strings.Join(values, ",") + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(columns, ", "))
	b.WriteString(") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	if table == TracesTable {
		b.WriteString(" ON CONFLICT (TraceId, SpanId) DO NOTHING")
	}
	return b.String()
}

// insertRows writes the rows whose arguments fill args (ncols per row) using the statement of
// perMany rows for full chunks and the single-row one for the rest, and returns how many rows
// it inserted (a span insert skips a copy of a stored span).
func insertRows(ctx context.Context, tx *sql.Tx, many, one *sql.Stmt, args []any, ncols, perMany int) (int64, error) {
	n := len(args) / ncols
	chunk := perMany * ncols
	var inserted int64
	exec := func(stmt *sql.Stmt, part []any) error {
		res, err := stmt.ExecContext(ctx, part...)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		inserted += k
		return err
	}
	i := 0
	if n >= perMany {
		stmt := tx.StmtContext(ctx, many)
		for ; i+perMany <= n; i += perMany {
			if err := exec(stmt, args[i*ncols:i*ncols+chunk]); err != nil {
				return inserted, err
			}
		}
	}
	if i < n {
		stmt := tx.StmtContext(ctx, one)
		for ; i < n; i++ {
			if err := exec(stmt, args[i*ncols:(i+1)*ncols]); err != nil {
				return inserted, err
			}
		}
	}
	return inserted, nil
}
