package docs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
)

// fieldCounts is how often a term occurs in each field of one document. Counts saturate: past a
// few dozen occurrences ranking no longer changes.
type fieldCounts struct {
	title, heading, body uint16
}

// posting records that a document contains a term.
type posting struct {
	doc *document
	fieldCounts
}

// termEntry is the posting list of one term. Documents point at their entries, so removing a
// document touches only the lists it is in.
type termEntry struct {
	term     string
	postings []posting
}

// index is the in-memory inverted index of the corpus. It is changed only by add, remove and
// reslug, each a small amount of work per document, so a refresh that finds one changed file
// costs one file's worth of work whatever the corpus size.
type index struct {
	byPath map[string]*document
	bySlug map[string]*document
	// sorted holds the documents in slug order for listing; rebuilt when the set changes.
	sorted     []*document
	terms      map[string]*termEntry
	bodyTokens int
	// digest is the XOR of every document's hash: order-free, and updated in O(1) per change.
	digest [sha256.Size]byte
	dirty  bool
}

func newIndex() *index {
	return &index{
		byPath: make(map[string]*document),
		bySlug: make(map[string]*document),
		terms:  make(map[string]*termEntry),
	}
}

// countTerms tokenizes a parsed document into per-field counts: the title, the headings, and
// everything else (paragraphs, lists, code, and a front-matter description) as body.
func countTerms(d *document, fm frontMatter) map[string]*fieldCounts {
	counts := make(map[string]*fieldCounts)
	const (
		title = iota
		heading
		body
	)
	field := title
	count := func(t token) {
		c := counts[t.term]
		if c == nil {
			c = new(fieldCounts)
			counts[t.term] = c
		}
		var n *uint16
		switch field {
		case title:
			n = &c.title
		case heading:
			n = &c.heading
		default:
			n = &c.body
			d.bodyLen++
		}
		if *n < 1<<16-1 {
			*n++
		}
	}
	eachToken(d.title, count)
	field = body
	eachToken(fm.description, count)
	pos := 0
	for _, s := range d.sections {
		eachToken(d.text[pos:s.textStart], count)
		field = heading
		eachToken(d.text[s.textStart:s.headingEnd], count)
		field = body
		pos = s.headingEnd
	}
	eachToken(d.text[pos:], count)
	return counts
}

// add puts a document with its term counts into the index.
func (x *index) add(d *document, counts map[string]*fieldCounts) {
	x.insert(d, counts)
	x.dirty = true
}

// remove takes a document out of the index.
func (x *index) remove(d *document) {
	x.delete(d)
	x.dirty = true
}

// replace swaps a document for a new version under the same slug. The slug order is unchanged,
// so the listing is patched in place instead of sorted again.
func (x *index) replace(old, d *document, counts map[string]*fieldCounts) {
	x.delete(old)
	x.insert(d, counts)
	i, found := slices.BinarySearchFunc(x.sorted, old.slug, func(e *document, slug string) int {
		return strings.Compare(e.slug, slug)
	})
	if found && !x.dirty && x.sorted[i] == old {
		x.sorted[i] = d
	} else {
		x.dirty = true
	}
}

func (x *index) insert(d *document, counts map[string]*fieldCounts) {
	d.terms = make([]*termEntry, 0, len(counts))
	for term, c := range counts {
		e := x.terms[term]
		if e == nil {
			e = &termEntry{term: strings.Clone(term)}
			x.terms[e.term] = e
		}
		e.postings = append(e.postings, posting{doc: d, fieldCounts: *c})
		d.terms = append(d.terms, e)
	}
	x.byPath[d.path] = d
	x.bySlug[d.slug] = d
	x.bodyTokens += d.bodyLen
	x.toggle(d)
}

func (x *index) delete(d *document) {
	for _, e := range d.terms {
		for i, p := range e.postings {
			if p.doc == d {
				last := len(e.postings) - 1
				e.postings[i] = e.postings[last]
				e.postings[last] = posting{}
				e.postings = e.postings[:last]
				break
			}
		}
		if len(e.postings) == 0 {
			delete(x.terms, e.term)
		}
	}
	delete(x.byPath, d.path)
	if x.bySlug[d.slug] == d {
		delete(x.bySlug, d.slug)
	}
	x.bodyTokens -= d.bodyLen
	x.toggle(d)
}

// reslug renames a document whose slug changed because another file took or released it.
func (x *index) reslug(d *document, slug string) {
	if x.bySlug[d.slug] == d {
		delete(x.bySlug, d.slug)
	}
	x.toggle(d)
	d.slug = slug
	x.toggle(d)
	x.bySlug[slug] = d
	x.dirty = true
}

// toggle adds a document's hash to the digest, or removes it again.
func (x *index) toggle(d *document) {
	h := docHash(d)
	for i := range x.digest {
		x.digest[i] ^= h[i]
	}
}

// settle rebuilds the slug order after changes.
func (x *index) settle() {
	if !x.dirty {
		return
	}
	x.sorted = x.sorted[:0]
	for _, d := range x.bySlug {
		x.sorted = append(x.sorted, d)
	}
	slices.SortFunc(x.sorted, func(a, b *document) int { return strings.Compare(a.slug, b.slug) })
	x.dirty = false
}

// fingerprint names the current state of the corpus (which documents, under which slugs, at
// which size and modification time), so a cursor can tell that the pages it points into moved.
func (x *index) fingerprint() string {
	var buf [sha256.Size + 8]byte
	copy(buf[:], x.digest[:])
	binary.BigEndian.PutUint64(buf[sha256.Size:], uint64(len(x.bySlug)))
	sum := sha256.Sum256(buf[:])
	return hex.EncodeToString(sum[:8])
}

func docHash(d *document) [sha256.Size]byte {
	var num [16]byte
	binary.BigEndian.PutUint64(num[:8], uint64(d.modTime))
	binary.BigEndian.PutUint64(num[8:], uint64(d.size))
	h := sha256.New()
	h.Write([]byte(d.slug))
	h.Write([]byte{0})
	h.Write(num[:])
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
