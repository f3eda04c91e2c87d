package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// A batch's rows are inserted in chunks, each one multi-row INSERT. Most values repeat across
// the rows of a chunk — the resource, scope and service of the sender, an empty trace state and
// status message, no events or links, the span kind — and the driver's cost is per bound
// parameter (a text is copied into C memory each time), so a chunk binds each such value once:
// its statement takes them once, in a one-row table every row is joined with.
// Which columns a chunk shares, and how many rows it has, pick the statement: the sender plans
// its chunks while it flattens the batch, and the writer prepares the statements a group needs
// before its transaction begins (the write connection is the transaction's while it runs), so
// a batch whose row count does not fill its last chunk no longer inserts that remainder a row
// at a time.

// insertTable identifies the column list of an INSERT: a span shape, or the log table.
type insertTable int

const logTable = insertTable(spanShapes)

// insertKey identifies one prepared INSERT: its columns, its rows and its shared columns (bit i
// set: column i of the row is bound once for the whole chunk).
type insertKey struct {
	table  insertTable
	rows   int
	shared uint64
}

// chunkPlan is one INSERT of a batch: rows rows from row first, sharing the columns of shared.
type chunkPlan struct {
	first, rows int
	shared      uint64
}

// maxInsertStatements bounds the prepared INSERT variants kept on the write connection (each
// holds its compiled program in C memory); a chunk whose variant does not fit is inserted with
// the fixed statements instead.
const maxInsertStatements = 96

// Columns a chunk may share: those fixed when the batch is flattened (not Seq nor the flags the
// writer sets) and often equal across a sender's rows.
var (
	spanSharable = columnMask(6, 8, 9, 10, 11, 12, 15, 16, 17, 18, 19, 20, 22)
	logSharable  = columnMask(2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 14, 15, 16, 17)
)

func columnMask(cols ...int) uint64 {
	var m uint64
	for _, c := range cols {
		m |= 1 << c
	}
	return m
}

// planChunks cuts the rows of args (ncols values each) into chunks of at most perChunk rows and
// finds, per chunk, which of the sharable columns hold one value on every row.
func planChunks(args []any, ncols, perChunk int, sharable uint64) []chunkPlan {
	n := len(args) / ncols
	plans := make([]chunkPlan, 0, (n+perChunk-1)/perChunk)
	sharable &= 1<<ncols - 1
	for first := 0; first < n; first += perChunk {
		rows := min(perChunk, n-first)
		shared := sharable
		base := args[first*ncols : (first+1)*ncols]
		for r := first + 1; r < first+rows && shared != 0; r++ {
			row := args[r*ncols : (r+1)*ncols]
			for c := range ncols {
				if shared&(1<<c) != 0 && row[c] != base[c] {
					shared &^= 1 << c
				}
			}
		}
		if rows == 1 {
			shared = 0
		}
		plans = append(plans, chunkPlan{first: first, rows: rows, shared: shared})
	}
	return plans
}

// keysOf lists the statements the plans of table need.
func keysOf(table insertTable, plans []chunkPlan, dst []insertKey) []insertKey {
	for _, p := range plans {
		dst = append(dst, insertKey{table, p.rows, p.shared})
	}
	return dst
}

// tableColumns are the column names of table, in argument order.
func tableColumns(table insertTable) []string {
	if table == logTable {
		return logColumnNames
	}
	cols := spanShapeColumns[table]
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = spanColumnNames[c]
	}
	return names
}

// prepareInserts prepares the statements of keys not prepared yet, on db outside any
// transaction; past maxInsertStatements the rest are left to the fixed statements.
func (st *statements) prepareInserts(ctx context.Context, db *sql.DB, keys []insertKey) error {
	if st.inserts == nil {
		st.inserts = map[insertKey]*sql.Stmt{}
	}
	for _, k := range keys {
		if _, ok := st.inserts[k]; ok || len(st.inserts) >= maxInsertStatements {
			continue
		}
		table := TracesTable
		if k.table == logTable {
			table = LogsTable
		}
		stmt, err := db.PrepareContext(ctx, insertSharedSQL(table, tableColumns(k.table), k.rows, k.shared))
		if err != nil {
			return fmt.Errorf("prepare insert: %w", err)
		}
		st.inserts[k] = stmt
	}
	return nil
}

// insertSharedSQL renders the INSERT of rows rows whose shared columns are bound once, in a
// one-row table the rows are joined with:
//
//	WITH s(c6, c9) AS (VALUES (?, ?))
//	INSERT INTO t (…) SELECT v.column1, …, s.c6, … FROM (VALUES (?, …), (?, …)) AS v, s WHERE true
//
// Every parameter is a plain "?": the driver looks up the name of each numbered one ("?7") in a
// list as long as the statement's parameters, which made binding quadratic.
func insertSharedSQL(table string, columns []string, rows int, shared uint64) string {
	if shared == 0 {
		return insertSQL(table, columns, rows)
	}
	var b strings.Builder
	b.WriteString("WITH s(")
	var sharedNames, sharedParams, exprs []string
	k := 0
	for c, name := range columns {
		if shared&(1<<c) != 0 {
			sharedNames = append(sharedNames, "c"+strconv.Itoa(c))
			sharedParams = append(sharedParams, "?")
			exprs = append(exprs, valueExpr(name, "s.c"+strconv.Itoa(c)))
			continue
		}
		k++
		exprs = append(exprs, valueExpr(name, "v.column"+strconv.Itoa(k)))
	}
	b.WriteString(strings.Join(sharedNames, ", "))
	b.WriteString(") AS (VALUES (")
	b.WriteString(strings.Join(sharedParams, ", "))
	b.WriteString(")) INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(columns, ", "))
	b.WriteString(") SELECT ")
	b.WriteString(strings.Join(exprs, ", "))
	b.WriteString(" FROM (VALUES ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", k), ",") + ")"
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	b.WriteString(") AS v, s WHERE true")
	if table == TracesTable {
		b.WriteString(" ON CONFLICT (TraceId, SpanId) DO NOTHING")
	}
	return b.String()
}

// valueExpr is the expression storing parameter p in column name: the parameter itself, or for
// an enumerated column the word its code stands for.
func valueExpr(name, p string) string {
	words, ok := enumColumns[name]
	if !ok {
		return p
	}
	var b strings.Builder
	b.WriteString("CASE ")
	b.WriteString(p)
	for code, w := range words[1:] {
		fmt.Fprintf(&b, " WHEN %d THEN '%s'", code+1, w)
	}
	fmt.Fprintf(&b, " ELSE '%s' END", words[0])
	return b.String()
}

// insertPlanned writes the rows of args (ncols values each) chunk by chunk as plans say, each
// with its prepared statement, or with many (perMany rows) and one (a row) when its variant was
// not prepared; it returns how many rows it inserted (a span insert skips a copy of a stored
// span).
func insertPlanned(ctx context.Context, tx *sql.Tx, st *statements, table insertTable, args []any, ncols int,
	plans []chunkPlan, many, one *sql.Stmt, perMany int) (int64, error) {
	var inserted int64
	for _, p := range plans {
		rows := args[p.first*ncols : (p.first+p.rows)*ncols]
		stmt := st.inserts[insertKey{table, p.rows, p.shared}]
		if stmt == nil {
			n, err := insertRows(ctx, tx, many, one, rows, ncols, perMany)
			inserted += n
			if err != nil {
				return inserted, err
			}
			continue
		}
		part := st.argBuf[:0]
		for c := range ncols {
			if p.shared&(1<<c) != 0 {
				part = append(part, rows[c])
			}
		}
		for r := range p.rows {
			for c, v := range rows[r*ncols : (r+1)*ncols] {
				if p.shared&(1<<c) == 0 {
					part = append(part, v)
				}
			}
		}
		st.argBuf = part
		res, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, part...)
		clear(part)
		if err != nil {
			return inserted, err
		}
		k, err := res.RowsAffected()
		inserted += k
		if err != nil {
			return inserted, err
		}
	}
	return inserted, nil
}
