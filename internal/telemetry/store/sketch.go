package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"modernc.org/sqlite"

	"github.com/runlens/runlens/internal/telemetry"
)

// Percentiles over a whole window come from mergeable duration sketches kept in the rollups
// (otel_db_activity and otel_entry_activity): a log-bucketed histogram in the manner of
// DDSketch, with relative accuracy SketchRelativeError. A duration d ≥ 1 ns falls in bucket
// ⌈log_γ d⌉ + 1 with γ = (1+α)/(1−α); every bucket (γ^(i−2), γ^(i−1)] is represented by the
// value 2γ^(i−1)/(γ+1), within α of every duration in it (bucket 0 holds zero durations,
// represented exactly). Only counts are kept, so a sketch is exact under deletion: removing a
// span subtracts one from its bucket, which leaves the same counts as never adding it, and
// sketches merge by adding counts (associative and commutative, so any grouping of buckets
// gives the same histogram).
//
// Stored form: a BLOB of varints, per non-empty bucket in ascending order the index's
// distance from the previous one and the count (zigzag, so a transiently negative count
// survives), prefixed by a version byte.

// SketchRelativeError is α: a percentile read from a sketch is within this fraction of the
// exact one (plus the rounding to whole nanoseconds).
const SketchRelativeError = 0.01

// sketchExactMax is the largest population whose percentiles are computed exactly from its
// rows; above it the rollups' sketches answer. A variable so tests can exercise both paths on
// small data.
var sketchExactMax int64 = 5_000

const sketchVersion = 1

var (
	sketchGamma    = (1 + SketchRelativeError) / (1 - SketchRelativeError)
	sketchLogGamma = math.Log(sketchGamma)
)

// sketchIndex is the bucket of a duration in ns.
func sketchIndex(d int64) int32 {
	if d <= 0 {
		return 0
	}
	return int32(math.Ceil(math.Log(float64(d))/sketchLogGamma)) + 1
}

// sketchValue is the duration in ns that represents bucket i: the midpoint (relative to its
// bounds) of the bucket, kept within the whole nanoseconds the bucket can hold.
func sketchValue(i int32) int64 {
	if i <= 0 {
		return 0
	}
	upper := math.Pow(sketchGamma, float64(i-1))
	v := 2 * upper / (sketchGamma + 1)
	lo, hi := math.Floor(upper/sketchGamma)+1, math.Floor(upper)
	if i == 1 {
		lo, hi = 1, 1
	}
	return int64(math.Round(min(max(v, lo), hi)))
}

// sketch is a histogram being built or merged: counts by bucket index.
type sketch map[int32]int64

// add counts n durations d (n negative to remove them).
func (s sketch) add(d, n int64) { s.bump(sketchIndex(d), n) }

// bump adds n to bucket i's count, dropping the bucket when it reaches zero so an encoded
// sketch holds only non-empty buckets.
func (s sketch) bump(i int32, n int64) {
	if c := s[i] + n; c != 0 {
		s[i] = c
	} else {
		delete(s, i)
	}
}

// merge adds the counts of other.
func (s sketch) merge(other sketch) {
	for i, n := range other {
		s.bump(i, n)
	}
}

// mergeBlob adds the counts of an encoded sketch.
func (s sketch) mergeBlob(b []byte) error {
	return decodeSketch(b, s.bump)
}

// count is the number of durations counted.
func (s sketch) count() int64 {
	var n int64
	for _, c := range s {
		n += c
	}
	return n
}

// rank is the representative value of the rank-th smallest duration (from 0).
func (s sketch) rank(rank int64) int64 {
	idx := make([]int32, 0, len(s))
	for i := range s {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var seen int64
	for _, i := range idx {
		seen += s[i]
		if rank < seen {
			return sketchValue(i)
		}
	}
	if len(idx) == 0 {
		return 0
	}
	return sketchValue(idx[len(idx)-1])
}

// quantile is the nearest-rank p-th percentile (element ⌈p·n⌉−1) of the counted durations.
func (s sketch) quantile(p float64) int64 {
	n := s.count()
	if n <= 0 {
		return 0
	}
	return s.rank(int64(telemetry.RankIndex(int(n), p)))
}

// encode is the stored form; nil for an empty sketch.
func (s sketch) encode() []byte {
	if len(s) == 0 {
		return nil
	}
	idx := make([]int32, 0, len(s))
	for i := range s {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]byte, 1, 1+3*len(idx))
	out[0] = sketchVersion
	prev := int32(0)
	for _, i := range idx {
		out = binary.AppendUvarint(out, uint64(i-prev))
		out = binary.AppendVarint(out, s[i])
		prev = i
	}
	return out
}

var errSketchCorrupt = errors.New("corrupt duration sketch")

// decodeSketch calls fn for every bucket of an encoded sketch, in ascending order. An empty
// or NULL blob is an empty sketch.
func decodeSketch(b []byte, fn func(i int32, n int64)) error {
	if len(b) == 0 {
		return nil
	}
	if b[0] != sketchVersion {
		return fmt.Errorf("%w: version %d", errSketchCorrupt, b[0])
	}
	b = b[1:]
	i := int32(0)
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 || d > math.MaxInt32 {
			return errSketchCorrupt
		}
		b = b[k:]
		n, k := binary.Varint(b)
		if k <= 0 {
			return errSketchCorrupt
		}
		b = b[k:]
		i += int32(d)
		fn(i, n)
	}
	return nil
}

// mergeSketchBlobs merges two encoded sketches without a map: both are in ascending order.
func mergeSketchBlobs(a, b []byte) ([]byte, error) {
	type bucket struct {
		i int32
		n int64
	}
	read := func(blob []byte) ([]bucket, error) {
		var out []bucket
		err := decodeSketch(blob, func(i int32, n int64) { out = append(out, bucket{i, n}) })
		return out, err
	}
	x, err := read(a)
	if err != nil {
		return nil, err
	}
	y, err := read(b)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1, 1+len(a)+len(b))
	out[0] = sketchVersion
	prev := int32(0)
	emit := func(i int32, n int64) {
		if n == 0 {
			return
		}
		out = binary.AppendUvarint(out, uint64(i-prev))
		out = binary.AppendVarint(out, n)
		prev = i
	}
	for len(x) > 0 || len(y) > 0 {
		switch {
		case len(y) == 0 || (len(x) > 0 && x[0].i < y[0].i):
			emit(x[0].i, x[0].n)
			x = x[1:]
		case len(x) == 0 || y[0].i < x[0].i:
			emit(y[0].i, y[0].n)
			y = y[1:]
		default:
			emit(x[0].i, x[0].n+y[0].n)
			x, y = x[1:], y[1:]
		}
	}
	if len(out) == 1 {
		return nil, nil
	}
	return out, nil
}

// sketchMergeFunc names the SQL function the rollup upserts merge stored and added sketches
// with: runlens_sketch_merge(stored, added) is the encoded sum of both (NULL when empty).
const sketchMergeFunc = "runlens_sketch_merge"

// sketchSumFunc names the SQL aggregate that merges a group's sketches:
// runlens_sketch_sum(Sketch) is the encoded sum of all of them (NULL when empty), so a query
// hands Go one blob per group instead of one per rollup row.
const sketchSumFunc = "runlens_sketch_sum"

// sketchSum is runlens_sketch_sum's state.
type sketchSum struct{ sk sketch }

func (a *sketchSum) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	switch v := args[0].(type) {
	case nil:
		return nil
	case []byte:
		return a.sk.mergeBlob(v)
	}
	return fmt.Errorf("%s: not a sketch: %T", sketchSumFunc, args[0])
}

func (a *sketchSum) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New(sketchSumFunc + ": not a window function")
}

func (a *sketchSum) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if b := a.sk.encode(); b != nil {
		return b, nil
	}
	return nil, nil
}

func (a *sketchSum) Final(*sqlite.FunctionContext) {}

func init() {
	sqlite.MustRegisterFunction(sketchSumFunc, &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, VolatileArgs: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &sketchSum{sk: sketch{}}, nil }})
	sqlite.MustRegisterDeterministicScalarFunction(sketchMergeFunc, 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		blob := func(v driver.Value) ([]byte, error) {
			switch v := v.(type) {
			case nil:
				return nil, nil
			case []byte:
				return v, nil
			case string:
				return []byte(v), nil
			}
			return nil, fmt.Errorf("%s: not a sketch: %T", sketchMergeFunc, v)
		}
		a, err := blob(args[0])
		if err != nil {
			return nil, err
		}
		b, err := blob(args[1])
		if err != nil {
			return nil, err
		}
		out, err := mergeSketchBlobs(a, b)
		if err != nil || out == nil {
			return nil, err
		}
		return out, nil
	})
}

// sketchSchemaVersion is the schema version that added the duration sketches.
const sketchSchemaVersion = 4

// fillSketchRollups fills the database and entry span rollups, emptied by migration 4, from
// the rows as they stand, in the migration's transaction: one pass over each covering index,
// flushed every few thousand rollup rows so memory stays bounded whatever the file's size.
func fillSketchRollups(ctx context.Context, tx *sql.Tx) error {
	var stmts [4]*sql.Stmt
	for i, q := range []string{addDBActivitySQL, dropDBActivitySQL, addEntryActivitySQL, dropEntryActivitySQL} {
		s, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("fill duration sketches: %w", err)
		}
		defer s.Close()
		stmts[i] = s
	}
	var roll rollup
	flush := func(force bool) error {
		if !force && len(roll.db)+len(roll.entries) < 4096 {
			return nil
		}
		err := roll.applyDurations(ctx, stmts[0], stmts[1], stmts[2], stmts[3])
		roll = rollup{}
		return err
	}
	err := eachRow(ctx, tx, `SELECT Timestamp, DbKey, ServiceName, COALESCE(DbSystem, ''), Duration, IsError FROM `+TracesTable+
		` INDEXED BY otel_traces_db WHERE DbKey != ''`, nil, func(scan func(...any) error) error {
		var ns, duration, isError int64
		var key, service, system string
		if err := scan(&ns, &key, &service, &system, &duration, &isError); err != nil {
			return err
		}
		roll.addDB(ns, key, service, system, duration, isError, 1)
		return flush(false)
	})
	if err == nil {
		err = eachRow(ctx, tx, `SELECT Timestamp, ServiceName, SpanName, Duration, IsError FROM `+TracesTable+
			` INDEXED BY otel_traces_entries WHERE IsEntry = 1`, nil, func(scan func(...any) error) error {
			var ns, duration, isError int64
			var service, name string
			if err := scan(&ns, &service, &name, &duration, &isError); err != nil {
				return err
			}
			roll.addEntry(ns, service, name, duration, isError, 1)
			return flush(false)
		})
	}
	if err == nil {
		err = flush(true)
	}
	if err != nil {
		return fmt.Errorf("fill duration sketches: %w", err)
	}
	return nil
}
