package codegen

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ecmaSpace is the class body of ECMA-262's \s (WhiteSpace and LineTerminator), written for
// RE2, whose own \s is ASCII only.
const ecmaSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// ecmaDot is what an ECMA-262 "." matches with the u flag (as Ajv compiles patterns): every
// code point but the four line terminators. RE2's "." excludes only \n.
const ecmaDot = `[^\n\r\x{2028}\x{2029}]`

// translatePattern rewrites a JSON Schema pattern (ECMA-262 syntax and meaning) into a Go RE2
// expression that matches exactly the same strings, or says why it cannot: constructs RE2
// lacks (look-around, back-references) and constructs whose meaning would need more than a
// rewrite are refused, so a pattern never silently means something else in Go.
func translatePattern(p string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == '\\':
			if i+size >= len(p) {
				return "", fmt.Errorf("pattern ends with a lone backslash")
			}
			n, err := translateEscape(&b, p[i+1:], inClass)
			if err != nil {
				return "", err
			}
			i += 1 + n
			continue
		case inClass && r == ']':
			inClass = false
		case inClass:
			if r == '[' {
				return "", fmt.Errorf("a [ inside a character class means a set operation in some engines; escape it")
			}
		case r == '[':
			rest := p[i+1:]
			if strings.HasPrefix(rest, "]") || strings.HasPrefix(rest, "^]") {
				return "", fmt.Errorf("an empty character class ([] or [^]) has no RE2 equivalent")
			}
			inClass = true
		case r == '.':
			b.WriteString(ecmaDot)
			i += size
			continue
		case r == '(' && strings.HasPrefix(p[i+1:], "?"):
			rest := p[i+2:]
			if !strings.HasPrefix(rest, ":") && !(strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!")) {
				opener := firstRunes(rest, 1)
				if strings.HasPrefix(rest, "<") {
					opener = firstRunes(rest, 2)
				}
				return "", fmt.Errorf("group (?%s has no RE2 equivalent (look-around and inline flags are not allowed)", opener)
			}
		}
		b.WriteString(p[i : i+size])
		i += size
	}
	if inClass {
		return "", fmt.Errorf("character class is not closed")
	}
	out := b.String()
	if _, err := regexp.Compile(out); err != nil {
		return "", fmt.Errorf("not a valid RE2 expression: %v", err)
	}
	return out, nil
}

// translateEscape writes the RE2 form of the escape that starts at rest (after its backslash)
// and returns how many bytes of rest it used.
func translateEscape(b *strings.Builder, rest string, inClass bool) (int, error) {
	c := rest[0]
	switch {
	case c == 's':
		if inClass {
			b.WriteString(ecmaSpace)
		} else {
			b.WriteString("[" + ecmaSpace + "]")
		}
		return 1, nil
	case c == 'S':
		if inClass {
			return 0, fmt.Errorf(`\S inside a character class has no RE2 equivalent`)
		}
		b.WriteString("[^" + ecmaSpace + "]")
		return 1, nil
	case c == 'b' || c == 'B':
		if inClass {
			return 0, fmt.Errorf(`\b inside a character class (a backspace) is not allowed; write \x08`)
		}
		b.WriteString(`\` + string(c))
		return 1, nil
	case strings.IndexByte("dDwWtnrfv", c) >= 0:
		// ASCII-only in both engines (no i flag), or a control character.
		b.WriteString(`\` + string(c))
		return 1, nil
	case c == '0':
		if len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9' {
			return 0, fmt.Errorf(`\0 followed by a digit is not allowed`)
		}
		b.WriteString(`\x00`)
		return 1, nil
	case c >= '1' && c <= '9':
		return 0, fmt.Errorf(`back-reference \%c has no RE2 equivalent`, c)
	case c == 'x':
		if len(rest) < 3 || !isHex(rest[1:3]) {
			return 0, fmt.Errorf(`\x must be followed by two hex digits`)
		}
		b.WriteString(`\x{` + rest[1:3] + `}`)
		return 3, nil
	case c == 'u':
		if len(rest) >= 5 && isHex(rest[1:5]) {
			b.WriteString(`\x{` + rest[1:5] + `}`)
			return 5, nil
		}
		if end := strings.IndexByte(rest, '}'); strings.HasPrefix(rest, "u{") && end > 2 && isHex(rest[2:end]) {
			b.WriteString(`\x{` + rest[2:end] + `}`)
			return end + 1, nil
		}
		return 0, fmt.Errorf(`\u must be followed by four hex digits or {hex}`)
	case c < utf8.RuneSelf && strings.IndexByte(`^$\.*+?()[]{}|/-`, c) >= 0:
		b.WriteString(`\` + string(c))
		return 1, nil
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return 0, fmt.Errorf(`escape \%c is not allowed (no RE2 equivalent with the same meaning)`, r)
}

// isHex reports whether s is non-empty and all hex digits.
func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// firstRunes returns at most n runes of s, for an error message.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
