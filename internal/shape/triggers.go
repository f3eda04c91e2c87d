package shape

// triggerIndex finds, in one pass and without allocating, which of a set of literal words occur
// in a string, ignoring ASCII case: an Aho-Corasick automaton over a compressed alphabet. The
// redactor runs it over every string of every answer before any regular expression, so a string
// without a trigger word costs one table walk of about a nanosecond per byte.
type triggerIndex struct {
	class  [256]uint8 // byte → alphabet class; bytes in no word share class 0
	nclass int
	// next[off+class] is the offset (state×nclass) of the next state, with hasOutput set when
	// that state reports labels: the hot loop then needs no multiplication and no output lookup
	// for the common byte that completes no word.
	next  []uint32
	out   []uint64 // labels reported at each state, words per state
	words int      // uint64 words per state
}

const hasOutput = 1 << 31

// newTriggerIndex builds an index of words (matched ignoring ASCII case); labels[i] is the label
// reported when words[i] occurs.
func newTriggerIndex(words []string, labels []int) *triggerIndex {
	ix := &triggerIndex{nclass: 1}
	maxLabel := 0
	for i, w := range words {
		maxLabel = max(maxLabel, labels[i])
		for j := 0; j < len(w); j++ {
			c := lowerASCII(w[j])
			if ix.class[c] == 0 {
				ix.class[c] = uint8(ix.nclass)
				ix.nclass++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		ix.class[c] = ix.class[c+('a'-'A')]
	}
	ix.words = maxLabel/64 + 1

	// The trie: goto edges (0 = none, since no edge leads back to the root) and outputs.
	edges := [][]int32{make([]int32, ix.nclass)}
	out := [][]uint64{make([]uint64, ix.words)}
	for i, w := range words {
		s := 0
		for j := 0; j < len(w); j++ {
			c := ix.class[lowerASCII(w[j])]
			if edges[s][c] == 0 {
				edges = append(edges, make([]int32, ix.nclass))
				out = append(out, make([]uint64, ix.words))
				edges[s][c] = int32(len(edges) - 1)
			}
			s = int(edges[s][c])
		}
		out[s][labels[i]/64] |= 1 << (labels[i] % 64)
	}

	// Breadth-first, turn goto edges into a full transition table through failure links, and
	// inherit the outputs of each state's failure state.
	fail := make([]int32, len(edges))
	delta := make([]int32, len(edges)*ix.nclass)
	queue := []int32{}
	for c := range ix.nclass {
		if t := edges[0][c]; t != 0 {
			delta[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for w := range ix.words {
			out[s][w] |= out[fail[s]][w]
		}
		for c := range ix.nclass {
			t := edges[s][c]
			if t == 0 {
				delta[int(s)*ix.nclass+c] = delta[int(fail[s])*ix.nclass+c]
				continue
			}
			fail[t] = delta[int(fail[s])*ix.nclass+c]
			delta[int(s)*ix.nclass+c] = t
			queue = append(queue, t)
		}
	}

	reports := func(s int32) bool {
		for _, bits := range out[s] {
			if bits != 0 {
				return true
			}
		}
		return false
	}
	ix.next = make([]uint32, len(delta))
	for i, t := range delta {
		ix.next[i] = uint32(int(t) * ix.nclass)
		if reports(t) {
			ix.next[i] |= hasOutput
		}
	}
	ix.out = make([]uint64, 0, len(out)*ix.words)
	for _, o := range out {
		ix.out = append(ix.out, o...)
	}
	return ix
}

// scan ORs into seen (len ix.words) the labels of every word that occurs in s.
func scan[T ~string | ~[]byte](ix *triggerIndex, s T, seen []uint64) {
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := ix.next[off+uint32(ix.class[s[i]])]
		off = v &^ hasOutput
		if v&hasOutput != 0 {
			state := int(off) / ix.nclass
			for w, bits := range ix.out[state*ix.words : (state+1)*ix.words] {
				seen[w] |= bits
			}
		}
	}
}

// scan1 returns the labels of every word that occurs in s, for an index of at most 64 labels.
func scan1[T ~string | ~[]byte](ix *triggerIndex, s T) uint64 {
	var seen uint64
	off := uint32(0)
	for i := 0; i < len(s); i++ {
		v := ix.next[off+uint32(ix.class[s[i]])]
		off = v &^ hasOutput
		if v&hasOutput != 0 {
			seen |= ix.out[int(off)/ix.nclass]
		}
	}
	return seen
}
