package shape

import (
	"container/heap"
	"fmt"
	"strings"
)

// minKeptBytes is the length below which Fit never shortens a string: short strings are
// identifiers, enum values and names whose cut would save little and could break a schema.
const minKeptBytes = 16

// maxRounds bounds the reduce-then-settle loop; settling (new page numbers, a re-minted cursor)
// grows an answer by a few dozen bytes, so the second round nearly always suffices.
const maxRounds = 8

// fitter holds the state of one Fit call over a parsed answer.
type fitter struct {
	root    *node
	detail  Detail
	budget  int
	tail    map[string]bool
	keep    map[string]bool
	paging  Paging
	field   *node // the array `page` describes, or nil
	omitted int   // the original value of paging.Omitted
	dropped int   // items dropped from field
	changed bool
}

func newFitter(root *node, d Detail, budget int, lim Limits, paging *Paging) *fitter {
	f := &fitter{root: root, detail: d, budget: budget, tail: map[string]bool{}, keep: map[string]bool{}}
	for _, k := range lim.TailKeys {
		f.tail[k] = true
	}
	for _, k := range lim.Keep {
		f.keep[k] = true
	}
	switch {
	case paging != nil:
		f.paging = *paging
	case root.member("page") != nil:
		var only string
		for i, k := range root.keys {
			if root.kids[i].kind == kindArray {
				if only != "" {
					only = ""
					break
				}
				only = k
			}
		}
		f.paging.Field = only
	}
	if a := root.member(f.paging.Field); a != nil && a.kind == kindArray {
		f.field = a
	}
	if f.paging.Omitted != "" {
		f.omitted, _ = root.member(f.paging.Omitted).intValue()
	}
	return f
}

// run reduces until the settled answer fits. Each round aims lower by what settling added; a
// round that can remove nothing more ends it.
func (f *fitter) run() error {
	target := f.budget
	for range maxRounds {
		progressed := f.reduce(target)
		if err := f.settle(); err != nil {
			return err
		}
		size := f.root.size()
		if size <= f.budget {
			return nil
		}
		if !progressed {
			return &TooLargeError{Detail: f.detail, Size: size, Limit: f.budget}
		}
		target -= size - f.budget
	}
	return &TooLargeError{Detail: f.detail, Size: f.root.size(), Limit: f.budget}
}

// reduce applies the reductions in the contract's order until the answer is within target,
// and reports whether it removed anything.
func (f *fitter) reduce(target int) bool {
	start := f.root.size()
	size := start
	for _, step := range []func(size, target int) int{
		func(size, target int) int { return f.dropTop(size, target, f.largestKeptString()) },
		func(size, target int) int { return f.shortenStrings(size, target, true) },
		func(size, target int) int { return f.shortenStrings(size, target, false) },
		func(size, target int) int { return f.dropTop(size, target, 0) },
		f.dropNested,
	} {
		if size <= target {
			break
		}
		size = step(size, target)
	}
	return size < start
}

// settle makes the bookkeeping members tell the truth about what reduce did.
func (f *fitter) settle() error {
	if !f.changed {
		return nil
	}
	if t := f.root.member("truncated"); t != nil && t.kind == kindLiteral && (string(t.lit) == "false" || string(t.lit) == "true") {
		f.root.set("truncated", boolNode(true))
	}
	if page := f.root.member("page"); page != nil && page.kind == kindObject {
		if f.field != nil {
			page.set("returned", intNode(len(f.field.kids)))
		}
		page.set("truncated", boolNode(true))
		if f.dropped > 0 {
			if err := f.remint(page); err != nil {
				return err
			}
		}
	}
	if f.field == nil {
		return nil
	}
	if c := f.root.member(f.paging.Count); c != nil {
		if _, ok := c.intValue(); ok {
			f.root.set(f.paging.Count, intNode(len(f.field.kids)))
		}
	}
	if o := f.root.member(f.paging.Omitted); o != nil && f.dropped > 0 {
		if _, ok := o.intValue(); ok {
			f.root.set(f.paging.Omitted, intNode(f.omitted+f.dropped))
		}
	}
	return nil
}

func (f *fitter) remint(page *node) error {
	if f.paging.Remint == nil {
		page.remove("nextCursor")
		return nil
	}
	c, err := f.paging.Remint(len(f.field.kids))
	if err != nil {
		return fmt.Errorf("fit answer: remint cursor: %w", err)
	}
	if c == "" {
		page.remove("nextCursor")
		return nil
	}
	page.set("nextCursor", stringNode(c))
	return nil
}

// protectedSubtree reports whether a member's whole value is off limits: `page` and `scan`
// describe the answer itself and their schemas constrain them tightly.
func protectedSubtree(key string) bool { return key == "page" || key == "scan" }

// protectedKey reports whether string values under key must never be shortened: identifiers
// (a cut id finds nothing), enum-like members and cursors.
func protectedKey(key string) bool {
	switch key {
	case "id", "traceId", "spanId", "parentSpanId", "slug", "code", "status", "nextCursor",
		"fingerprint", "severity", "kind":
		return true
	}
	return strings.HasSuffix(key, "Id") || strings.HasSuffix(key, "Ids")
}

// shortenable is one string Fit may cut.
type shortenable struct {
	n     *node
	plain bool // quoted without escapes, so lengths are arithmetic
	qlen  int  // current quoted length
	tail  bool // keep the end rather than the beginning
}

// strings lists the strings Fit may shorten that are longer than minLen bytes; proseOnly
// leaves out single words (no space, at most 64 bytes): names, paths and enum values.
func (f *fitter) strings(minLen int, proseOnly bool) []shortenable {
	return f.collect(nil, f.root, "", false, minLen, proseOnly)
}

func (f *fitter) collect(out []shortenable, n *node, key string, tail bool, minLen int, proseOnly bool) []shortenable {
	switch n.kind {
	case kindString:
		if len(n.str) > minLen && !f.keep[key] && !protectedKey(key) && (!proseOnly || isProse(n.str)) {
			out = append(out, shortenable{n: n, plain: isPlain(n.str), qlen: quotedLen(n.str), tail: tail})
		}
	case kindArray:
		for _, k := range n.kids {
			out = f.collect(out, k, key, tail, minLen, proseOnly)
		}
	case kindObject:
		for i, k := range n.kids {
			if !protectedSubtree(n.keys[i]) && !protectedKey(n.keys[i]) {
				out = f.collect(out, k, n.keys[i], f.tail[n.keys[i]], minLen, proseOnly)
			}
		}
	}
	return out
}

// shortenedLen is the quoted length of s.n.str once capped to maxBytes.
func (s shortenable) shortenedLen(maxBytes int) int {
	str := s.n.str
	if len(str) <= maxBytes {
		return s.qlen
	}
	var kept string
	if s.tail {
		kept = str[tailStart(str, maxBytes):]
	} else {
		kept = str[:headCut(str, maxBytes)]
	}
	if s.plain {
		return len(kept) + len(Ellipsis) + 2
	}
	return quotedLen(kept) + len(Ellipsis)
}

// isProse reports whether s reads as text rather than as one token.
func isProse(s string) bool {
	return len(s) > 64 || strings.ContainsAny(s, " \t\n")
}

// shortenStrings caps every shortenable string at the largest length that brings the answer
// within target (the longest strings lose most), or at minKeptBytes if none does.
func (f *fitter) shortenStrings(size, target int, proseOnly bool) int {
	cands := f.strings(minKeptBytes, proseOnly)
	if len(cands) == 0 {
		return size
	}
	longest := 0
	for _, c := range cands {
		longest = max(longest, len(c.n.str))
	}
	savings := func(maxBytes int) int {
		s := 0
		for _, c := range cands {
			s += c.qlen - c.shortenedLen(maxBytes)
		}
		return s
	}
	excess := size - target
	capBytes := minKeptBytes
	if savings(minKeptBytes) >= excess {
		// The largest cap that still saves enough: savings shrink as the cap grows.
		lo, hi := minKeptBytes, longest
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if savings(mid) >= excess {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		capBytes = lo
	}
	for _, c := range cands {
		if len(c.n.str) <= capBytes {
			continue
		}
		var s string
		if c.tail {
			s = shortenTail(c.n.str, capBytes)
		} else {
			s = shortenHead(c.n.str, capBytes)
		}
		if s == c.n.str {
			continue
		}
		c.n.str = s
		size -= c.qlen - quotedLen(s)
		f.changed = true
	}
	return size
}

// dropTop drops items from the end of the top-level collections, the largest first, while the
// largest is at least floor bytes: a collection smaller than a string that stays in the answer
// whatever is dropped (get_doc's section list beside its content) waits until strings were cut.
func (f *fitter) dropTop(size, target, floor int) int {
	var arrays []*arrayEntry
	for i, k := range f.root.keys {
		if v := f.root.kids[i]; v.kind == kindArray && !protectedSubtree(k) && len(v.kids) > 0 {
			arrays = append(arrays, &arrayEntry{arr: v, size: v.size(), live: true})
		}
	}
	return f.dropFrom(arrays, size, target, floor, nil)
}

// largestKeptString is the quoted size of the largest shortenable string outside the top-level
// collections: what no amount of dropping items would remove.
func (f *fitter) largestKeptString() int {
	var kept []shortenable
	for i, k := range f.root.keys {
		if v := f.root.kids[i]; v.kind != kindArray && !protectedSubtree(k) && !protectedKey(k) {
			kept = f.collect(kept, v, k, f.tail[k], minKeptBytes, false)
		}
	}
	largest := 0
	for _, c := range kept {
		largest = max(largest, c.qlen)
	}
	return largest
}

// arrayEntry is a collection Fit may drop items from. Entries of one pass never nest, so
// dropping from one never changes the size of another.
type arrayEntry struct {
	arr   *node
	size  int
	owner *node       // the item of the enclosing collection this array lives in, if any
	outer *arrayEntry // that enclosing collection's entry
	live  bool        // still part of the answer
}

// dropFrom drops the last item of the largest live array until size is within target or the
// largest is smaller than floor, and records dropped items in gone so nested passes can tell
// which arrays left with them. A max-heap keeps the choice cheap among thousands of arrays.
func (f *fitter) dropFrom(arrays []*arrayEntry, size, target, floor int, gone map[*node]bool) int {
	h := arrayHeap{}
	for _, a := range arrays {
		if a.live && len(a.arr.kids) > 0 {
			h = append(h, a)
		}
	}
	heap.Init(&h)
	for size > target && len(h) > 0 {
		big := h[0]
		if big.size < floor {
			break
		}
		last := big.arr.kids[len(big.arr.kids)-1]
		big.arr.kids = big.arr.kids[:len(big.arr.kids)-1]
		delta := last.size()
		if len(big.arr.kids) > 0 {
			delta++ // the comma before it
		}
		big.size -= delta
		size -= delta
		if big.arr == f.field {
			f.dropped++
		}
		if gone != nil {
			gone[last] = true
		}
		f.changed = true
		if len(big.arr.kids) == 0 {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return size
}

// arrayHeap orders collections largest first.
type arrayHeap []*arrayEntry

func (h arrayHeap) Len() int           { return len(h) }
func (h arrayHeap) Less(i, j int) bool { return h[i].size > h[j].size }
func (h arrayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *arrayHeap) Push(x any)        { *h = append(*h, x.(*arrayEntry)) }
func (h *arrayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// dropNested is the last resort: items from the end of collections below the top level,
// shallowest first. Arrays are grouped by how many collections enclose them, so the arrays of
// one group never contain each other; a group is processed after the one that encloses it.
func (f *fitter) dropNested(size, target int) int {
	var levels [][]*arrayEntry
	var walk func(n *node, level int, owner *node, outer *arrayEntry)
	walk = func(n *node, level int, owner *node, outer *arrayEntry) {
		switch n.kind {
		case kindArray:
			e := &arrayEntry{arr: n, size: n.size(), owner: owner, outer: outer}
			for len(levels) <= level {
				levels = append(levels, nil)
			}
			levels[level] = append(levels[level], e)
			for _, k := range n.kids {
				walk(k, level+1, k, e)
			}
		case kindObject:
			for i, k := range n.kids {
				if !protectedSubtree(n.keys[i]) {
					walk(k, level, owner, outer)
				}
			}
		}
	}
	// Top-level collections were emptied already, or are not collections Fit may drop from;
	// their items are walked as the owners of level-1 arrays.
	for i, k := range f.root.keys {
		v := f.root.kids[i]
		if protectedSubtree(k) {
			continue
		}
		if v.kind == kindArray {
			top := &arrayEntry{arr: v, live: true}
			for _, item := range v.kids {
				walk(item, 1, item, top)
			}
			continue
		}
		walk(v, 0, nil, nil)
	}
	gone := map[*node]bool{}
	for _, group := range levels {
		if size <= target {
			break
		}
		for _, e := range group {
			e.live = e.outer == nil || (e.outer.live && !gone[e.owner])
		}
		size = f.dropFrom(group, size, target, 0, gone)
	}
	return size
}
