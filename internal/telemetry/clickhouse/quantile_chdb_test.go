//go:build chdb

package clickhouse_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
)

// rankPercentiles are the percentiles the adapter asks ClickHouse for.
var rankPercentiles = []float64{0.5, 0.95, 0.99}

// failer is what the checks need of *testing.T and *rapid.T.
type failer interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// quantileRows runs sql on the engine and parses each TSV row as a key and the array of
// percentiles after it.
func quantileRows(t failer, e *chfront.Engine, sql string) map[int64][]int64 {
	t.Helper()
	out, err := e.Query(sql, "TSV")
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	rows := map[int64][]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		key, arr, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("row %q", line)
		}
		k, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		var vs []int64
		for _, f := range strings.Split(strings.Trim(arr, "[]"), ",") {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
			vs = append(vs, v)
		}
		rows[k] = vs
	}
	return rows
}

// TestTheQuantileFunctionIsTheNearestRank holds the percentiles the adapter computes in
// ClickHouse to telemetry.NearestRank, the rule every source follows: for every group size
// from 1 to 3,000 (distinct values in a shuffled order, so the answer is the rank itself),
// for sizes of a million and more around the multiples where ceil and floor part, and for
// drawn groups with repeated values.
func TestTheQuantileFunctionIsTheNearestRank(t *testing.T) {
	e := chdbEngine(t)
	f := clickhouse.NearestRank("v", rankPercentiles...)
	check := func(t failer, n int64, got []int64, want func(i int, p float64) int64) {
		t.Helper()
		if len(got) != len(rankPercentiles) {
			t.Fatalf("n=%d: %d percentiles, want %d", n, len(got), len(rankPercentiles))
		}
		for i, p := range rankPercentiles {
			if w := want(i, p); got[i] != w {
				t.Errorf("n=%d: p%g = %d, want %d (nearest rank)", n, p*100, got[i], w)
			}
		}
	}
	t.Run("every size to 3000", func(t *testing.T) {
		rows := quantileRows(t, e, "SELECT n, "+f+" FROM (SELECT n, arrayJoin(arraySort(x -> cityHash64(x, n), range(n))) AS v"+
			" FROM (SELECT number + 1 AS n FROM numbers(3000))) GROUP BY n")
		if len(rows) != 3000 {
			t.Fatalf("%d groups, want 3000", len(rows))
		}
		for n := int64(1); n <= 3000; n++ {
			check(t, n, rows[n], func(_ int, p float64) int64 { return int64(telemetry.RankIndex(int(n), p)) })
		}
	})
	t.Run("large sizes", func(t *testing.T) {
		var parts []string
		for _, n := range []int64{1_000_000, 1_000_001, 1_000_019, 2_000_000, 2_000_100, 9_999_999} {
			parts = append(parts, fmt.Sprintf("SELECT %d AS n, %s FROM (SELECT number AS v FROM numbers(%d))", n, f, n))
		}
		rows := quantileRows(t, e, strings.Join(parts, " UNION ALL "))
		for n, got := range rows {
			check(t, n, got, func(_ int, p float64) int64 { return int64(telemetry.RankIndex(int(n), p)) })
		}
		if len(rows) != 6 {
			t.Fatalf("%d sizes answered, want 6", len(rows))
		}
	})
	t.Run("repeated values", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			n := rapid.IntRange(1, 400).Draw(rt, "n")
			hi := rapid.SampledFrom([]int64{3, 50, 1_000_000_000}).Draw(rt, "range")
			vs := rapid.SliceOfN(rapid.Int64Range(0, hi), n, n).Draw(rt, "values")
			lits := make([]string, n)
			for i, v := range vs {
				lits[i] = strconv.FormatInt(v, 10)
			}
			rows := quantileRows(rt, e, "SELECT 1, "+f+" FROM (SELECT arrayJoin(CAST(["+strings.Join(lits, ",")+"] AS Array(UInt64))) AS v)")
			sorted := slices.Sorted(slices.Values(vs))
			check(rt, int64(n), rows[1], func(_ int, p float64) int64 { return telemetry.NearestRank(sorted, p) })
		})
	})
}
