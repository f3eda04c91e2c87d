package conventions

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

const (
	// maxStatement bounds a normalized statement: enough to recognise a query, too short to
	// carry a payload.
	maxStatement = 120
	// maxLabel bounds a database operation label.
	maxLabel = 120
	// maxMessage bounds the normalized message a fingerprint is computed from.
	maxMessage = 512
)

// inList folds an IN list of placeholders to one, so IN (1,2) and IN (1,2,3) group together.
var inList = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bIN\s*\(\s*\?(?:\s*,\s*\?)*\s*\)`)
})

// NormalizeStatement replaces the literals of a query — numbers, single-quoted strings, hex
// (0x…, X'…'), whole IN lists — with ?, collapses whitespace and cuts the result to 120
// characters, so the same query with different values has one label and no value leaks.
// Double-quoted text is an identifier in SQL and is kept; bind placeholders ($1, :name, ?) are
// kept.
func NormalizeStatement(s string) string { return NormalizeStatementN(s, maxStatement) }

// MaxStatement bounds the normalized statement that identifies a database operation: long
// enough that two different queries do not share it, short enough to carry no payload.
const MaxStatement = 1000

// NormalizeStatementN is NormalizeStatement cut to n runes instead.
func NormalizeStatementN(s string, n int) string {
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	prevIdent := false // the previous emitted rune continues an identifier
	space := false
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			space = true
			prevIdent = false // a number after a keyword and a space is a literal
			i++
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		switch {
		case r == '\'':
			i = skipQuoted(rs, i, '\'')
			b.WriteByte('?')
			prevIdent = false
		case (r == 'x' || r == 'X') && !prevIdent && i+1 < len(rs) && rs[i+1] == '\'':
			i = skipQuoted(rs, i+1, '\'')
			b.WriteByte('?')
			prevIdent = false
		case isDigit(r) && !prevIdent:
			i = skipNumber(rs, i)
			b.WriteByte('?')
			prevIdent = false
		default:
			b.WriteRune(r)
			prevIdent = isIdent(r)
			i++
		}
	}
	return truncate(inList().ReplaceAllString(b.String(), "IN (?)"), n)
}

// skipQuoted returns the index after the quoted text starting at rs[i] == q, honouring doubled
// quotes and backslash escapes; an unterminated quote runs to the end.
func skipQuoted(rs []rune, i int, q rune) int {
	for i++; i < len(rs); i++ {
		switch rs[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(rs) && rs[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(rs)
}

// skipNumber returns the index after the number starting at rs[i]: decimal, fraction,
// exponent, or 0x hex.
func skipNumber(rs []rune, i int) int {
	if rs[i] == '0' && i+1 < len(rs) && (rs[i+1] == 'x' || rs[i+1] == 'X') {
		i += 2
		for i < len(rs) && isHex(rs[i]) {
			i++
		}
		return i
	}
	for i < len(rs) && (isDigit(rs[i]) || rs[i] == '.') {
		i++
	}
	if i+1 < len(rs) && (rs[i] == 'e' || rs[i] == 'E') && (isDigit(rs[i+1]) || rs[i+1] == '-' || rs[i+1] == '+') {
		i += 2
		for i < len(rs) && isDigit(rs[i]) {
			i++
		}
	}
	// A number glued to letters (3rd, 1abc) is one token.
	for i < len(rs) && isIdent(rs[i]) {
		i++
	}
	return i
}

// messagePatterns are NormalizeMessage's expressions, compiled on its first call rather than at
// start-up.
var messagePatterns = sync.OnceValue(func() (p struct{ uuid, hex, quoted, digits, space *regexp.Regexp }) {
	p.uuid = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	p.hex = regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`)
	p.quoted = regexp.MustCompile("\"[^\"]*\"|'[^']*'|`[^`]*`")
	p.digits = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)
	p.space = regexp.MustCompile(`\s+`)
	return p
})

// NormalizeMessage collapses the variable parts of an error message — quoted values, UUIDs,
// hex ids, numbers — to ? and whitespace to one space, so "order 17 not found" and "order 18
// not found" are the same failure.
func NormalizeMessage(msg string) string {
	p := messagePatterns()
	s := p.quoted.ReplaceAllString(msg, "?")
	s = p.uuid.ReplaceAllString(s, "?")
	s = p.hex.ReplaceAllStringFunc(s, func(m string) string {
		// Short mixed tokens (e.g. "utf8", "v2") are words, not ids.
		if len(m) < 8 && !strings.HasPrefix(strings.ToLower(m), "0x") {
			return m
		}
		return "?"
	})
	s = p.digits.ReplaceAllString(s, "?")
	s = strings.TrimSpace(p.space.ReplaceAllString(s, " "))
	return truncate(s, maxMessage)
}

// Fingerprint identifies an error group: a short stable hash of the exception type and the
// normalized message. Equal fingerprints mean the same failure with different values.
//
// The same failure comes back many times (every occurrence of it in a window, every span of it
// written), and its normalization is five regular-expression passes: fingerprints of short
// texts are remembered, a bounded number of them.
func Fingerprint(exceptionType, message string) string {
	key := exceptionType + "\x00" + message
	cacheable := len(key) <= maxRemembered
	if cacheable {
		remembered.mu.Lock()
		fp, ok := remembered.m[key]
		remembered.mu.Unlock()
		if ok {
			return fp
		}
	}
	fp := fingerprint(exceptionType, message)
	if cacheable {
		remembered.mu.Lock()
		if len(remembered.m) >= maxFingerprints {
			clear(remembered.m) // a new set of failures: start again rather than track ages
		}
		remembered.m[key] = fp
		remembered.mu.Unlock()
	}
	return fp
}

// fingerprint computes Fingerprint.
func fingerprint(exceptionType, message string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(exceptionType) + "\x00" + NormalizeMessage(message)))
	return hex.EncodeToString(sum[:8])
}

// The fingerprints remembered: at most maxFingerprints, of texts of at most maxRemembered bytes
// (about 1 MiB at most).
const (
	maxFingerprints = 2048
	maxRemembered   = 384
)

var remembered = struct {
	mu sync.Mutex
	m  map[string]string
}{m: map[string]string{}}

// truncate cuts s to at most n runes, marking the cut with an ellipsis inside the limit.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return strings.TrimRightFunc(string(rs[:n-1]), unicode.IsSpace) + "…"
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isHex(r rune) bool { return isDigit(r) || (r|0x20 >= 'a' && r|0x20 <= 'f') }

func isIdent(r rune) bool {
	return r == '_' || r == '$' || r == '@' || r == '#' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
