package shape

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestTriggerIndexAgreesWithSubstringSearch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]rune("abAB_-:%é日"))
		words := rapid.SliceOfN(rapid.StringOfN(alphabet, 1, 5, -1), 1, 70).Draw(t, "words")
		labels := make([]int, len(words))
		for i := range labels {
			labels[i] = i
		}
		ix := newTriggerIndex(words, labels)
		text := rapid.StringOfN(alphabet, 0, 60, -1).Draw(t, "text")
		seen := make([]uint64, ix.words)
		scan(ix, text, seen)
		for i, w := range words {
			want := containsFold(text, strings.ToLower(w))
			if got := seen[i/64]&(1<<(i%64)) != 0; got != want {
				t.Fatalf("word %q in %q: index says %v, substring search %v", w, text, got, want)
			}
		}
		if len(words) <= 64 {
			var all uint64
			for _, s := range seen {
				all |= s
			}
			if got := scan1(ix, []byte(text)); got != all {
				t.Fatalf("scan1 = %b, scan = %b", got, all)
			}
		}
	})
}
