package shape

import (
	"net/url"
	"strings"
)

// Secrets also travel URL-encoded: a redirect URL inside a query parameter, a DSN passed as a
// URL value, "Bearer+…" in a form body. percentEncoded decodes each URL component of s (the runs
// between query delimiters) that holds a %XX escape or a '+', redacts the decoded text, and
// writes a component back, re-encoded, only when something in it was secret.
func (r *Redactor) percentEncoded(s string) string {
	var b strings.Builder
	last := 0
	for start := 0; start < len(s); {
		end := start
		for end < len(s) && !isComponentDelimiter(s[end]) {
			end++
		}
		if comp := s[start:end]; strings.IndexByte(comp, '+') >= 0 || hasPercentEscape(comp) {
			if dec, err := url.QueryUnescape(comp); err == nil {
				if red := r.plain(dec, scan1(r.index, dec)); red != dec {
					b.WriteString(s[last:start])
					b.WriteString(strings.ReplaceAll(url.QueryEscape(red), url.QueryEscape(Redacted), Redacted))
					last = end
				}
			}
		}
		start = end + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isComponentDelimiter reports whether c separates URL components (or ends a URL in text).
func isComponentDelimiter(c byte) bool {
	switch c {
	case '?', '&', '=', '#', ';', ',', ' ', '\t', '\r', '\n', '"', '\'', '<', '>':
		return true
	}
	return false
}

// hasPercentEscape reports whether s holds a %XX escape.
func hasPercentEscape(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+2 < len(s); {
		if isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
		next := strings.IndexByte(s[i+1:], '%')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
