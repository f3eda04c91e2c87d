package docs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes bounds a single token. Longer runs of letters and digits (hashes, base64 blobs)
// are not words anybody searches for, and indexing them would only grow the vocabulary.
const maxTokenBytes = 64

// maxQueryTerms bounds how many distinct terms of a query are scored, so a pasted paragraph
// cannot make one search walk every posting list of the index.
const maxQueryTerms = 32

// token is one word of a text: its lowercase form and where it sits in the original.
type token struct {
	term       string
	start, end int
}

// eachToken calls fn for every token of s in order. A token is a maximal run of Unicode letters
// and digits; everything else separates tokens, so "set-up" is two tokens and no substring of a
// word ever matches. The term handed to fn is lowercase and, when s was already lowercase ASCII,
// shares s's memory: callers that keep it must clone it.
func eachToken(s string, fn func(t token)) {
	start := -1
	ascii := true
	flush := func(end int) {
		if start < 0 {
			return
		}
		if end-start <= maxTokenBytes {
			word := s[start:end]
			if !ascii || hasUpperASCII(word) {
				word = strings.ToLower(word)
			}
			fn(token{term: word, start: start, end: end})
		}
		start = -1
		ascii = true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isWordByte(c) {
				if start < 0 {
					start = i
				}
			} else {
				flush(i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			ascii = false
		} else {
			flush(i)
		}
		i += size
	}
	flush(len(s))
}

// queryTerms turns a query into its distinct terms, in order of first appearance.
func queryTerms(query string) []string {
	var terms []string
	seen := make(map[string]bool)
	eachToken(query, func(t token) {
		if len(terms) >= maxQueryTerms || seen[t.term] {
			return
		}
		seen[t.term] = true
		terms = append(terms, strings.Clone(t.term))
	})
	return terms
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func hasUpperASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}
