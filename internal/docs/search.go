package docs

import (
	"context"
	"math"
	"slices"
	"strings"
)

// Ranking is BM25F: per-field term frequencies are weighted and summed before saturation, so a
// word in the title or a heading counts for more than the same word in the body, and a hundred
// mentions do not count a hundred times. Only the body is length-normalised (titles and headings
// are short by nature), and only downwards: a long document's mentions count for less, but a
// short one's do not count for more, or one passing mention in a stub would outrank a heading.
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	titleWeight   = 5.0
	headingWeight = 3.0
	bodyWeight    = 1.0
)

const (
	// snippetContext is how many bytes of text a snippet shows on each side of the first hit.
	snippetContext = 100
	// maxLocateBytes bounds how much of one document's text a search reads to name the best
	// section and cut the snippet; headings are always looked at.
	maxLocateBytes = 256 << 10
	// maxPage bounds a page of search or list results.
	maxPage = 1000
)

// Hit is one document matching a search.
type Hit struct {
	Slug  string
	Title string
	// Section is the slug of the best-matching heading, empty when the match is in the title
	// or front matter only. Passing it to Get fetches just that section.
	Section string
	// Snippet is the text around the first match, in original case, whitespace collapsed.
	Snippet string
	// Score is the relevance, rounded to four decimals; higher is better.
	Score float64
	// Matched are the query's words this document contains, in query order: a hit that
	// matches one word of three says so.
	Matched []string
}

// SearchResult is one page of search hits.
type SearchResult struct {
	Hits []Hit
	// Total is the number of documents matching at least one query term.
	Total int
	// Fingerprint is the corpus state the page was cut from; bind cursors to it.
	Fingerprint string
	// Unmatched are the query's words no document contains.
	Unmatched []string
}

// Search ranks documents for a free-text query and returns the page [offset, offset+limit) in
// order of score, then slug. A query with no words matches nothing.
func (c *Corpus) Search(ctx context.Context, query string, limit, offset int) (SearchResult, error) {
	if err := c.fresh(ctx); err != nil {
		return SearchResult{}, err
	}
	terms := queryTerms(query)
	c.mu.RLock()
	defer c.mu.RUnlock()
	limit, offset = max(1, min(limit, maxPage)), max(0, offset)
	ranked, total := c.idx.rank(terms, offset+limit)
	res := SearchResult{Total: total, Fingerprint: c.idx.fingerprint()}
	for _, t := range terms {
		if c.idx.terms[t] == nil {
			res.Unmatched = append(res.Unmatched, t)
		}
	}
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	for _, r := range page(ranked, limit, offset) {
		section, snippet := r.doc.locate(want)
		res.Hits = append(res.Hits, Hit{
			Slug:    r.doc.slug,
			Title:   r.doc.title,
			Section: section,
			Snippet: snippet,
			Score:   r.score,
			Matched: r.matched(terms),
		})
	}
	return res, nil
}

// scored is a document with its relevance and which terms it matched (bit i: terms[i]).
type scored struct {
	doc   *document
	score float64
	mask  uint64
}

// matched lists the terms of the mask, in query order.
func (s scored) matched(terms []string) []string {
	var out []string
	for i, t := range terms {
		if i < 64 && s.mask&(1<<i) != 0 {
			out = append(out, t)
		}
	}
	return out
}

// rank scores every document containing at least one term. It returns how many matched and the
// best keep of them in order (score desc, slug asc): a page only needs its prefix of the ranking,
// and selecting it costs far less than sorting thousands of matches.
func (x *index) rank(terms []string, keep int) ([]scored, int) {
	n := float64(len(x.bySlug))
	if n == 0 || len(terms) == 0 {
		return nil, 0
	}
	avgBody := math.Max(1, float64(x.bodyTokens)/n)
	size := 0
	for _, t := range terms {
		if e := x.terms[t]; e != nil {
			size = max(size, len(e.postings))
		}
	}
	scores := make(map[*document]float64, size)
	masks := make(map[*document]uint64, size)
	for ti, t := range terms {
		e := x.terms[t]
		if e == nil {
			continue
		}
		df := float64(len(e.postings))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range e.postings {
			norm := max(1, 1-bm25B+bm25B*float64(p.doc.bodyLen)/avgBody)
			tf := titleWeight*float64(p.title) + headingWeight*float64(p.heading) + bodyWeight*float64(p.body)/norm
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (bm25K1 + tf)
			if ti < 64 {
				masks[p.doc] |= 1 << ti
			}
		}
	}
	best := make(scoredHeap, 0, min(keep, len(scores)))
	for d, s := range scores {
		best.offer(scored{doc: d, score: math.Round(s*1e4) / 1e4, mask: masks[d]}, keep)
	}
	slices.SortFunc(best, func(a, b scored) int {
		switch {
		case a.before(b):
			return -1
		case b.before(a):
			return 1
		}
		return 0
	})
	return best, len(scores)
}

// before is the ranking order: higher score first, then slug.
func (s scored) before(o scored) bool {
	if s.score != o.score {
		return s.score > o.score
	}
	return s.doc.slug < o.doc.slug
}

// scoredHeap keeps the best items seen so far, the worst of them at the root.
type scoredHeap []scored

// offer adds s if fewer than keep items are held or s ranks before the worst of them.
func (h *scoredHeap) offer(s scored, keep int) {
	if keep <= 0 {
		return
	}
	if len(*h) < keep {
		*h = append(*h, s)
		h.up(len(*h) - 1)
		return
	}
	if s.before((*h)[0]) {
		(*h)[0] = s
		h.down(0)
	}
}

func (h scoredHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h[parent].before(h[i]) {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (h scoredHeap) down(i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[worst].before(h[l]) {
			worst = l
		}
		if r < len(h) && h[worst].before(h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// page cuts [offset, offset+limit) out of items, with limit clamped to [1, maxPage].
func page[T any](items []T, limit, offset int) []T {
	limit = max(1, min(limit, maxPage))
	offset = max(0, offset)
	if offset >= len(items) {
		return nil
	}
	return items[offset:min(len(items), offset+limit)]
}

// locate names the section that best matches the query terms and cuts a snippet around the first
// match. The best section has the most distinct terms in its heading (each worth three), then in
// its own text; ties go to the earlier section.
func (d *document) locate(want map[string]bool) (string, string) {
	first, firstEnd := -1, -1
	budget := maxLocateBytes
	scan := func(s string, base int) map[string]bool {
		var found map[string]bool
		eachToken(s, func(t token) {
			if !want[t.term] {
				return
			}
			if first < 0 {
				first, firstEnd = base+t.start, base+t.end
			}
			if found == nil {
				found = make(map[string]bool)
			}
			found[t.term] = true
		})
		return found
	}
	bounded := func(from, to int) (string, int) {
		to = min(to, from+budget)
		budget -= to - from
		return d.text[from:to], from
	}

	introEnd := len(d.text)
	if len(d.sections) > 0 {
		introEnd = d.sections[0].textStart
	}
	scan(bounded(0, introEnd))
	best, bestScore := "", 0
	for _, s := range d.sections {
		score := 3 * len(scan(d.text[s.textStart:s.headingEnd], s.textStart))
		if budget > 0 {
			score += len(scan(bounded(s.headingEnd, s.textEnd)))
		}
		if score > bestScore {
			best, bestScore = s.slug, score
		}
	}
	if first < 0 {
		return best, firstNonEmpty(d.description, clip(collapseSpace(d.text[:min(len(d.text), 4*snippetContext)]), 2*snippetContext))
	}
	return best, snippetAround(d.text, first, firstEnd)
}

// snippetAround cuts the text around [start, end) at word boundaries, collapses whitespace and
// marks each cut with "…".
func snippetAround(text string, start, end int) string {
	from := max(0, start-snippetContext)
	to := min(len(text), end+snippetContext)
	if from > 0 {
		if sp := strings.IndexAny(text[from:start], " \n\t"); sp >= 0 {
			from += sp + 1
		} else {
			from = start
		}
	}
	if to < len(text) {
		if sp := strings.LastIndexAny(text[end:to], " \n\t"); sp >= 0 {
			to = end + sp
		} else {
			to = end
		}
	}
	snippet := collapseSpace(text[from:to])
	if from > 0 {
		snippet = "…" + snippet
	}
	if to < len(text) {
		snippet += "…"
	}
	return snippet
}
