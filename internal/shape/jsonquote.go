package shape

import "unicode/utf8"

// The answer bytes Fit measures must be the bytes that are sent, and the glue embeds them with
// encoding/json, which re-escapes HTML characters inside raw messages. So strings are quoted
// exactly as encoding/json quotes them (HTML-safe, U+2028/U+2029 escaped, invalid UTF-8 as
// U+FFFD): re-embedding then changes nothing and the measured size stays true.

const hexDigits = "0123456789abcdef"

// needsEscape reports, for each ASCII byte, whether encoding/json escapes it in HTML-safe mode.
var needsEscape = func() (t [utf8.RuneSelf]bool) {
	for b := range utf8.RuneSelf {
		t[b] = b < 0x20 || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&'
	}
	return t
}()

// appendQuoted appends s as a JSON string literal, byte for byte as encoding/json writes it.
func appendQuoted(dst []byte, s string) []byte {
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

// quotedLen is len(appendQuoted(nil, s)) without building it.
func quotedLen(s string) int {
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

// isPlain reports whether s is quoted without any escape, so its quoted length is len(s)+2 for
// every prefix too; Fit uses it to measure candidate cuts without rescanning.
func isPlain(s string) bool {
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
