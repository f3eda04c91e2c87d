package docs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchDocs is the corpus size of benchmark B7.
const benchDocs = 5000

// writeBenchCorpus generates a deterministic corpus of n documents of a few kilobytes each:
// front matter on half of them, a title heading, several sections of prose drawn from a
// Zipf-distributed vocabulary, lists and code fences. It returns the docs root.
func writeBenchCorpus(tb testing.TB, n int) string {
	tb.Helper()
	root := tb.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := benchVocabulary(rng, 3000)
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 5)), 1.1, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}
	for i := range n {
		var b strings.Builder
		if i%2 == 0 {
			fmt.Fprintf(&b, "---\ntitle: %s\ndescription: %s\n---\n\n", words(4), words(12))
		}
		fmt.Fprintf(&b, "# %s\n\n%s.\n\n", words(3), words(40))
		for s := range 3 + rng.IntN(4) {
			fmt.Fprintf(&b, "## %s %d\n\n%s.\n\n", words(2+rng.IntN(3)), s, words(30+rng.IntN(50)))
			switch rng.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "- %s\n- %s\n- %s\n\n", words(6), words(8), words(5))
			case 1:
				fmt.Fprintf(&b, "```sh\n# %s\nrunlens %s --flag %d\n```\n\n", words(3), words(2), i)
			}
		}
		name := filepath.Join(root, fmt.Sprintf("section-%02d", i%50), fmt.Sprintf("doc-%04d.md", i))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

func benchVocabulary(rng *rand.Rand, n int) []string {
	syllables := strings.Fields("ka lo mi ne ru sa te vo pi da ze bu fo gi ha ju")
	seen := make(map[string]bool)
	var vocab []string
	for len(vocab) < n {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syllables[rng.IntN(len(syllables))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			vocab = append(vocab, w.String())
		}
	}
	return vocab
}

func openBenchCorpus(b *testing.B, root string) *Corpus {
	b.Helper()
	c, err := Open(Options{Root: root, RefreshInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkColdIndex builds the index of a 5,000-document corpus from nothing (B7: ≤ 1 s).
func BenchmarkColdIndex(b *testing.B) {
	root := writeBenchCorpus(b, benchDocs)
	b.ResetTimer()
	for b.Loop() {
		c := openBenchCorpus(b, root)
		if info, _ := c.Info(context.Background()); info.DocumentCount != benchDocs {
			b.Fatalf("indexed %d documents, want %d", info.DocumentCount, benchDocs)
		}
	}
}

// BenchmarkRefreshOneFile refreshes a 5,000-document index after one file changed (B7: ≤ 20 ms).
func BenchmarkRefreshOneFile(b *testing.B) {
	root := writeBenchCorpus(b, benchDocs)
	c := openBenchCorpus(b, root)
	name := filepath.Join(root, "section-07", "doc-0007.md")
	base, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		content := fmt.Appendf(slices.Clone(base), "\nrevision%d\n", i)
		if err := os.WriteFile(name, content, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := c.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if res, _ := c.Search(ctx, fmt.Sprintf("revision%d", i), 1, 0); res.Total != 1 {
		b.Fatalf("the last edit was not indexed: %d hits", res.Total)
	}
}

// BenchmarkSearch runs a mix of one- to four-word queries, frequent and rare words, against a
// 5,000-document index and reports the median and p95 latency (B7: p95 ≤ 5 ms).
func BenchmarkSearch(b *testing.B) {
	root := writeBenchCorpus(b, benchDocs)
	c := openBenchCorpus(b, root)
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := benchVocabulary(rng, 3000)
	qrng := rand.New(rand.NewPCG(1, 2))
	queries := make([]string, 256)
	for i := range queries {
		w := make([]string, 1+qrng.IntN(4))
		for j := range w {
			// Half the words come from the frequent head of the vocabulary.
			if qrng.IntN(2) == 0 {
				w[j] = vocab[qrng.IntN(20)]
			} else {
				w[j] = vocab[qrng.IntN(len(vocab))]
			}
		}
		queries[i] = strings.Join(w, " ")
	}
	ctx := context.Background()
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := c.Search(ctx, queries[i%len(queries)], 10, 0); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
}
