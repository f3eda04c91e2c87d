package shape

// ASCII case folding without allocation: key globs run on the keys of every redacted answer,
// so they must not copy what they inspect.

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
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
