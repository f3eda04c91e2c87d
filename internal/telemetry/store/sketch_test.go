package store

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
)

// durationsGen draws durations the way telemetry spreads them: mostly microseconds to
// seconds, log-uniform, with some zeros and some tiny values.
func durationsGen() *rapid.Generator[[]int64] {
	one := rapid.Custom(func(t *rapid.T) int64 {
		switch rapid.IntRange(0, 9).Draw(t, "kind") {
		case 0:
			return 0
		case 1:
			return rapid.Int64Range(1, 300).Draw(t, "tiny")
		}
		e := rapid.Float64Range(3, 11).Draw(t, "log10")
		return int64(math.Pow(10, e))
	})
	return rapid.SliceOfN(one, 1, 3000)
}

func sketchOf(ds []int64) sketch {
	s := sketch{}
	for _, d := range ds {
		s.add(d, 1)
	}
	return s
}

func TestSketchPercentilesAreWithinTheStatedRelativeErrorOfExactNearestRank(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ds := durationsGen().Draw(t, "durations")
		p := rapid.SampledFrom([]float64{0.5, 0.95, 0.99, 0.01, 1}).Draw(t, "p")
		sorted := slices.Clone(ds)
		slices.Sort(sorted)
		exact := sorted[telemetry.RankIndex(len(sorted), p)]
		// Through the stored form, as a query reads it.
		s := sketch{}
		if err := s.mergeBlob(sketchOf(ds).encode()); err != nil {
			t.Fatal(err)
		}
		got := s.quantile(p)
		if diff := math.Abs(float64(got - exact)); diff > SketchRelativeError*float64(exact)+0.5 {
			t.Fatalf("p%v: sketch %d, exact %d: relative error %.4f > %v", p*100, got, exact, diff/float64(exact), SketchRelativeError)
		}
	})
}

func TestEveryDurationIsWithinTheRelativeErrorOfItsBucketsValue(t *testing.T) {
	for _, d := range []int64{0, 1, 2, 3, 7, 49, 50, 51, 99, 100, 101, 1000, 12345, 999_999, 1e6, 1e9, 3_600e9, math.MaxInt64 / 4} {
		v := sketchValue(sketchIndex(d))
		if diff := math.Abs(float64(v - d)); diff > SketchRelativeError*float64(d)+0.5 {
			t.Errorf("duration %d: bucket %d represented by %d", d, sketchIndex(d), v)
		}
	}
}

func TestRemovingDurationsLeavesTheSketchOfNeverAddingThem(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kept := durationsGen().Draw(t, "kept")
		removed := durationsGen().Draw(t, "removed")
		s := sketch{}
		for _, d := range append(slices.Clone(removed), kept...) {
			s.add(d, 1)
		}
		// Removal as a later transaction does it: a stored blob merged with a negative one.
		minus := sketch{}
		for _, d := range removed {
			minus.add(d, -1)
		}
		merged, err := mergeSketchBlobs(s.encode(), minus.encode())
		if err != nil {
			t.Fatal(err)
		}
		if want := sketchOf(kept).encode(); !bytes.Equal(merged, want) {
			t.Fatalf("after removal %x, never added %x", merged, want)
		}
	})
}

func TestMergingSketchesIsAssociativeAndCommutative(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := sketchOf(durationsGen().Draw(t, "a")).encode()
		b := sketchOf(durationsGen().Draw(t, "b")).encode()
		c := sketchOf(durationsGen().Draw(t, "c")).encode()
		must := func(x []byte, err error) []byte {
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		left := must(mergeSketchBlobs(must(mergeSketchBlobs(a, b)), c))
		right := must(mergeSketchBlobs(a, must(mergeSketchBlobs(b, c))))
		swapped := must(mergeSketchBlobs(c, must(mergeSketchBlobs(b, a))))
		if !bytes.Equal(left, right) || !bytes.Equal(left, swapped) {
			t.Fatalf("(a+b)+c %x, a+(b+c) %x, c+(b+a) %x", left, right, swapped)
		}
		m := sketch{}
		for _, blob := range [][]byte{a, b, c} {
			if err := m.mergeBlob(blob); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(m.encode(), left) {
			t.Fatalf("merged in memory %x, as blobs %x", m.encode(), left)
		}
	})
}

func TestACorruptSketchIsAnErrorNotAPanic(t *testing.T) {
	for name, blob := range map[string][]byte{
		"an unknown version":    {9, 1, 1},
		"a truncated varint":    {sketchVersion, 0x80},
		"a missing count":       {sketchVersion, 3},
		"an index out of range": {sketchVersion, 0xff, 0xff, 0xff, 0xff, 0x7f, 2},
	} {
		if err := (sketch{}).mergeBlob(blob); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}
