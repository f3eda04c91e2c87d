package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkWriterFloor measures what SQLite alone can write on this machine, as a ceiling for
// B5: B5-shaped batches (512 spans, 64 traces of 8 spans with random ids, the attributes of
// an HTTP server span), four to a transaction as the writer's group commit takes B5's four
// senders at best, inserted into the store's own traces table, through the
// same driver and pragmas as the store's writer, by one goroutine that does nothing else — no
// OTLP decoding, no derived columns, no rollups, no receiver. Only the indexes differ:
//
//   - table: no index on the table at all (its rowid b-tree only);
//   - trace-index: the unique (TraceId, SpanId) index alone, which every lookup by trace id,
//     the copies check and get_run need; SDKs send random ids, so its inserts land anywhere;
//   - store-indexes: every index of the store's schema (the partial ones see few of these
//     rows: their derived columns are left at their defaults, so this is a lower bound of the
//     store's index work);
//   - store-indexes-int-key: the same, but the trace index keyed by a 64-bit integer taken
//     from the trace id instead of its 32 hex digits and the span id: the smallest key a
//     lookup by trace id could use, at the price of a layout every trace-id query follows.
//
// Whatever the rest of the write path costs comes on top of these rates; BENCH.md has the
// numbers.
func BenchmarkWriterFloor(b *testing.B) {
	for _, keep := range []struct {
		name    string
		indexes func(string) bool
		intKey  bool
	}{
		{"table", func(string) bool { return false }, false},
		{"trace-index", func(n string) bool { return n == "otel_traces_trace_span" }, false},
		{"store-indexes", func(string) bool { return true }, false},
		{"store-indexes-int-key", func(n string) bool { return n != "otel_traces_trace_span" }, true},
	} {
		b.Run(keep.name, func(b *testing.B) {
			db := floorDB(b, keep.indexes)
			if keep.intKey {
				if _, err := db.Exec(`ALTER TABLE otel_traces ADD COLUMN TraceKey INTEGER NOT NULL DEFAULT 0`); err != nil {
					b.Fatal(err)
				}
				if _, err := db.Exec(`CREATE INDEX otel_traces_trace_key ON otel_traces (TraceKey)`); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i += b5Senders {
				if err := insertFloorGroup(db, i, min(b5Senders, b.N-i), keep.intKey); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportIngest(b, cpuTime()-cpu0)
		})
	}
}

// floorDB creates a store's file, then opens it as the writer does and drops the indexes of
// otel_traces that keep rejects.
func floorDB(b *testing.B, keep func(string) bool) *sql.DB {
	b.Helper()
	path := filepath.Join(b.TempDir(), "telemetry.db")
	s, err := Open(context.Background(), Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path, true, false))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'otel_traces' AND sql IS NOT NULL`)
	if err != nil {
		b.Fatal(err)
	}
	var drop []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			b.Fatal(err)
		}
		if !keep(n) {
			drop = append(drop, n)
		}
	}
	if err := rows.Close(); err != nil {
		b.Fatal(err)
	}
	for _, n := range drop {
		if _, err := db.Exec(`DROP INDEX ` + n); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

const floorChunk = 32

var floorInsert = `INSERT INTO otel_traces (Timestamp, EndTimestamp, TraceId, SpanId, ParentSpanId,
	SpanName, SpanKind, ServiceName, ResourceScopeId, SpanAttributes, Duration, StatusCode)
	VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?),", floorChunk), ",")

var floorInsertIntKey = strings.Replace(floorInsert, "ResourceScopeId", "TraceKey", 1)

const floorAttrs = `{"http.request.method":"GET","http.route":"/api/items/{id}",` +
	`"http.response.status_code":200,"server.address":"localhost","url.path":"/api/items/42"}`

// insertFloorGroup inserts batches first to first+count-1 in one transaction. With intKey the
// rows carry TraceKey (store-indexes-int-key) where they otherwise set ResourceScopeId to 1.
func insertFloorGroup(db *sql.DB, first, count int, intKey bool) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := floorInsert
	if intKey {
		q = floorInsertIntKey
	}
	st, err := tx.Prepare(q)
	if err != nil {
		return err
	}
	defer st.Close()
	for n := first; n < first+count; n++ {
		if err := insertFloorBatch(st, n, intKey); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// insertFloorBatch inserts one 512-span batch, floorChunk rows a statement.
func insertFloorBatch(st *sql.Stmt, n int, intKey bool) error {
	traces := make([]string, b5BatchSpans/8)
	keys := make([]int64, b5BatchSpans/8)
	spans := make([]string, b5BatchSpans)
	id := make([]byte, 16)
	for i := range traces {
		rand.Read(id)
		traces[i] = hex.EncodeToString(id)
		keys[i] = 1
		if intKey {
			keys[i] = int64(binary.BigEndian.Uint64(id))
		}
	}
	for i := range spans {
		rand.Read(id[:8])
		spans[i] = hex.EncodeToString(id[:8])
	}
	ts := time.Now().Add(-time.Hour).UnixNano() + int64(n)*int64(b5BatchSpans)*1000
	args := make([]any, 0, 12*floorChunk)
	for i := 0; i < b5BatchSpans; i += floorChunk {
		args = args[:0]
		for j := i; j < i+floorChunk; j++ {
			t := ts + int64(j)*1000
			parent := ""
			if j%8 != 0 {
				parent = spans[j/8*8]
			}
			args = append(args, t, t+5_000_000, traces[j/8], spans[j], parent,
				"GET /api/items/{id}", "Server", "checkout", keys[j/8], floorAttrs, 5_000_000, "Unset")
		}
		if _, err := st.Exec(args...); err != nil {
			return err
		}
	}
	return nil
}
