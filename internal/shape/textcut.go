package shape

import (
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks every string the disclosure layer shortened, so a reader (human or model)
// never mistakes a cut value for a whole one.
const Ellipsis = "…"

// maxBackoff bounds how far a cut moves back to keep a grapheme cluster whole; past it, a
// rune boundary is good enough (a run of hundreds of combining marks is not text worth keeping).
const maxBackoff = 32

// CapString shortens s to at most maxBytes bytes, cutting at a rune boundary that does not split
// a combining sequence, and ends a shortened string with Ellipsis. It reports whether it cut.
// When maxBytes leaves no room for the marker, the result is the longest whole-rune prefix.
func CapString(s string, maxBytes int) (string, bool) {
	if len(s) <= maxBytes {
		return s, false
	}
	if maxBytes <= len(Ellipsis) {
		return s[:runeFloor(s, max(maxBytes, 0))], true
	}
	return s[:clusterFloor(s, maxBytes-len(Ellipsis))] + Ellipsis, true
}

// TailBytes returns the newest max bytes of b (the end, which is what matters in command
// output), starting at a rune boundary so the result never opens with a broken character. The
// result aliases b. It reports whether anything was dropped.
func TailBytes(b []byte, max int) ([]byte, bool) {
	if len(b) <= max {
		return b, false
	}
	if max <= 0 {
		return b[len(b):], true
	}
	start := len(b) - max
	for start < len(b) && !utf8.RuneStart(b[start]) {
		start++
	}
	return b[start:], true
}

// shortenHead keeps the beginning of s within maxBytes including the marker, and always at least
// its first rune, so a schema's minLength of 1 still holds.
func shortenHead(s string, maxBytes int) string {
	cut := headCut(s, maxBytes)
	if cut >= len(s) {
		return s
	}
	return s[:cut] + Ellipsis
}

// headCut is where shortenHead cuts s.
func headCut(s string, maxBytes int) int {
	if len(s) <= maxBytes {
		return len(s)
	}
	cut := clusterFloor(s, maxBytes-len(Ellipsis))
	if cut == 0 {
		_, cut = utf8.DecodeRuneInString(s)
	}
	return cut
}

// shortenTail keeps the end of s within maxBytes including the leading marker, and always at
// least its last rune: for output whose newest part is the point.
func shortenTail(s string, maxBytes int) string {
	start := tailStart(s, maxBytes)
	if start <= 0 {
		return s
	}
	return Ellipsis + s[start:]
}

// tailStart is where the part shortenTail keeps begins.
func tailStart(s string, maxBytes int) int {
	if len(s) <= maxBytes {
		return 0
	}
	start := clusterCeil(s, len(s)-(maxBytes-len(Ellipsis)))
	if start >= len(s) {
		_, size := utf8.DecodeLastRuneInString(s)
		start = len(s) - size
	}
	return start
}

// runeFloor returns the largest rune boundary of s that is <= n.
func runeFloor(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// clusterFloor returns a rune boundary <= n that does not separate a base character from the
// marks, joiners and modifiers that belong to it.
func clusterFloor(s string, n int) int {
	n = runeFloor(s, n)
	for range maxBackoff {
		if n <= 0 || n >= len(s) {
			return n
		}
		next, _ := utf8.DecodeRuneInString(s[n:])
		prev, size := utf8.DecodeLastRuneInString(s[:n])
		if !extendsCluster(next) && prev != zeroWidthJoiner {
			return n
		}
		n -= size
	}
	return runeFloor(s, n)
}

// clusterCeil returns a rune boundary >= n that does not start inside a combining sequence.
func clusterCeil(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	for range maxBackoff {
		if n >= len(s) {
			return len(s)
		}
		next, size := utf8.DecodeRuneInString(s[n:])
		prev, _ := utf8.DecodeLastRuneInString(s[:n])
		if !extendsCluster(next) && prev != zeroWidthJoiner {
			return n
		}
		n += size
	}
	return n
}

const zeroWidthJoiner = '\u200d'

// extendsCluster reports whether r attaches to the character before it: combining marks,
// joiners, variation selectors, emoji skin-tone modifiers and tag characters.
func extendsCluster(r rune) bool {
	switch {
	case r < 0x300:
		return false
	case r == zeroWidthJoiner,
		r >= 0xfe00 && r <= 0xfe0f,
		r >= 0x1f3fb && r <= 0x1f3ff,
		r >= 0xe0020 && r <= 0xe007f,
		r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}
