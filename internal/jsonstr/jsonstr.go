// Package jsonstr writes JSON string literals exactly as encoding/json does, for the places that
// build JSON by hand: the answers (whose measured size must be the bytes sent, and which
// encoding/json re-embeds unchanged only if quoted its way) and the embedded store's attribute
// columns (JSON that SQLite's json functions read).
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// escapes tells, for each ASCII byte, whether encoding/json escapes it: [0] without HTML
// escaping (Encoder.SetEscapeHTML(false)), [1] in its default, HTML-safe mode.
var escapes = func() (t [2][utf8.RuneSelf]bool) {
	for b := range utf8.RuneSelf {
		plain := b < 0x20 || b == '"' || b == '\\'
		t[0][b] = plain
		t[1][b] = plain || b == '<' || b == '>' || b == '&'
	}
	return t
}()

func table(html bool) *[utf8.RuneSelf]bool {
	if html {
		return &escapes[1]
	}
	return &escapes[0]
}

// Append appends s as a JSON string literal, byte for byte as encoding/json writes it (html:
// as it does by default, with <, > and & escaped; otherwise as an Encoder with SetEscapeHTML
// false): U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func Append(dst []byte, s string, html bool) []byte {
	needsEscape := table(html)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if !needsEscape[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Len is len(Append(nil, s, html)) without building it.
func Len(s string, html bool) int {
	needsEscape := table(html)
	n := 2
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			switch {
			case !needsEscape[b]:
				n++
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028', c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// Plain reports whether s is quoted without any escape, so its quoted length is len(s)+2 for
// every prefix too.
func Plain(s string, html bool) bool {
	needsEscape := table(html)
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if needsEscape[b] {
				return false
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if (c == utf8.RuneError && size == 1) || c == '\u2028' || c == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
