package docs

// The Markdown parser does more than linear work on a few constructs nobody writes on purpose:
// a link destination is scanned to the end of its line for every "(" that opens one inside
// another ("[x](" repeated), an angle-bracket destination to the next ">" however far
// ("[x](<" repeated), a "]" that closes no link looks its paragraph's lines over from the last
// ("[x](" on each of thousands of lines), and block containers opened on one line ("> > > …", "+ + + …") cost in
// proportion to how deep they already are. A 400 KB file of "[x](" took 87 s to parse. tame
// hands the parser a copy of the body in which the excess of each construct is a space instead,
// so parsing is linear in the size of the file; ordinary documents are handed over unchanged.
//
// The copy has the same length and the same lines as the body, so every offset the parser
// reports still points into the body, and text is always read from the body itself: the
// answer never shows the substitution, and search text only differs inside the excess.
const (
	// maxContainerMarkers bounds the block quote and list markers that open containers on one
	// line; real documents nest a handful.
	maxContainerMarkers = 16
	// maxParenDepth bounds the parentheses open at once in a run of non-blank text, as the
	// CommonMark reference implementation bounds them in link destinations.
	maxParenDepth = 32
	// maxBrackets bounds the "]" of a run of non-blank lines that may close a link: each costs
	// up to one step per line of its paragraph. A list of links longer than this without a
	// blank line is read as text past it.
	maxBrackets = 512
)

// tame returns body, or a copy of it with the constructs above blanked past their bounds.
func tame(body []byte) []byte {
	var out []byte
	blank := func(i int) {
		if out == nil {
			out = append([]byte(nil), body...)
		}
		out[i] = ' '
	}
	brackets := maxBrackets
	for start := 0; start < len(body); {
		end := start
		for end < len(body) && body[end] != '\n' {
			end++
		}
		line := body[start:end]
		brackets = tameBrackets(line, brackets, func(i int) { blank(start + i) })
		tameContainers(line, func(i int) { blank(start + i) })
		tameParens(line, func(i int) { blank(start + i) })
		tameAngles(line, func(i int) { blank(start + i) })
		start = end + 1
	}
	if out == nil {
		return body
	}
	return out
}

// tameBrackets blanks the "]" of a line once the run of non-blank lines it belongs to has used
// its budget of them, and returns the budget left for the next line.
func tameBrackets(line []byte, budget int, blank func(int)) int {
	if isBlankLine(line) {
		return maxBrackets
	}
	for i, c := range line {
		if c != ']' {
			continue
		}
		if budget == 0 {
			blank(i)
		} else {
			budget--
		}
	}
	return budget
}

func isBlankLine(line []byte) bool {
	for _, c := range line {
		if !isBlankByte(c) {
			return false
		}
	}
	return true
}

// tameContainers blanks the container markers at the start of a line past the first
// maxContainerMarkers: ">" and list markers ("-", "+", "*", "1." or "1)" followed by a blank).
func tameContainers(line []byte, blank func(int)) {
	depth := 0
	for i := 0; ; {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		n := markerLen(line[i:])
		if n == 0 {
			return
		}
		if depth++; depth > maxContainerMarkers {
			for k := i; k < i+n; k++ {
				blank(k)
			}
		}
		i += n
	}
}

// markerLen is the length of the container marker line starts with, or 0.
func markerLen(line []byte) int {
	if len(line) == 0 {
		return 0
	}
	blankAfter := func(n int) bool { return n == len(line) || line[n] == ' ' || line[n] == '\t' }
	switch c := line[0]; {
	case c == '>':
		return 1
	case c == '-' || c == '+' || c == '*':
		if blankAfter(1) {
			return 1
		}
	case '0' <= c && c <= '9':
		n := 0
		for n < len(line) && n < 9 && '0' <= line[n] && line[n] <= '9' {
			n++
		}
		if n < len(line) && (line[n] == '.' || line[n] == ')') && blankAfter(n+1) {
			return n + 1
		}
	}
	return 0
}

// tameParens blanks the "(" that would open a parenthesis maxParenDepth+1 deep in a run of
// non-blank text, which ends the run. Escaped characters are skipped as the parser skips them.
func tameParens(line []byte, blank func(int)) {
	depth := 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line) && isASCIIPunct(line[i+1]):
			i++
		case isBlankByte(c):
			depth = 0
		case c == '(':
			if depth == maxParenDepth {
				blank(i)
				depth = 0
			} else {
				depth++
			}
		case c == ')' && depth > 0:
			depth--
		}
	}
}

// tameAngles blanks the "<" that would open an angle-bracket link destination ("](<") whose
// closing ">" is not before the next "<" of the line: such a destination is not one by the
// CommonMark rules, and the parser would scan to that ">" once for each of them.
func tameAngles(line []byte, blank func(int)) {
	var escaped []bool
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && isASCIIPunct(line[i+1]) {
			if len(escaped) == 0 {
				escaped = make([]bool, len(line))
			}
			escaped[i+1] = true
			i++
		}
	}
	isEscaped := func(i int) bool { return len(escaped) > 0 && escaped[i] }
	nextLT, nextGT := -1, -1
	for i := len(line) - 1; i >= 0; i-- {
		switch {
		case line[i] == '>' && !isEscaped(i):
			nextGT = i
		case line[i] == '<' && !isEscaped(i):
			if opensDestination(line, i) && (nextGT < 0 || nextLT >= 0 && nextLT < nextGT) {
				blank(i)
				continue // no longer a "<" for the ones before it
			}
			nextLT = i
		}
	}
}

// opensDestination reports whether the "<" at i follows "](" and blanks only.
func opensDestination(line []byte, i int) bool {
	j := i - 1
	for j >= 0 && isBlankByte(line[j]) {
		j--
	}
	return j >= 1 && line[j] == '(' && line[j-1] == ']'
}

func isBlankByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

func isASCIIPunct(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}
