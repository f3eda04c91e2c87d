package shape

// ASCII case folding without allocation: the redactor's prefilters and key globs run on every
// string of every answer, so they must not copy what they inspect.

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// containsFold reports whether s contains lowerSub, ignoring ASCII case; lowerSub must be
// lower case already.
func containsFold(s, lowerSub string) bool {
	n := len(lowerSub)
	if n == 0 {
		return true
	}
	first := lowerSub[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper = first - ('a' - 'A')
	}
	for i := 0; i+n <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		if equalFoldASCII(s[i:i+n], lowerSub) {
			return true
		}
	}
	return false
}

// equalFoldASCII reports whether s equals lowerT ignoring ASCII case.
func equalFoldASCII(s, lowerT string) bool {
	if len(s) != len(lowerT) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) != lowerT[i] {
			return false
		}
	}
	return true
}

// globFold matches s against a lower-case pattern in which '*' stands for any run of bytes.
func globFold(pattern, s string) bool {
	// The classic linear matcher: remember the last star and retry from one byte further.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == lowerASCII(s[i]):
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
