package shape

import (
	"slices"
	"strings"

	"github.com/runlens/runlens/internal/secretenv"
)

// DefaultSensitiveKeys are the attribute keys whose values are replaced whole, whatever they look
// like: headers that carry credentials, connection strings, and any key that ends in a
// credential word. Matching ignores ASCII case; '*' matches any run of characters, and a pattern
// "*.x" also matches the bare key "x".
func DefaultSensitiveKeys() []string {
	return []string{
		"http.request.header.authorization",
		"http.request.header.proxy-authorization",
		"http.request.header.cookie",
		"http.response.header.set-cookie",
		"http.request.header.x-api-key",
		"db.connection_string",
		"*.connection_string",
		"*authorization",
		"*cookie",
		"*password",
		"*passwd",
		"*secret",
		"*token",
		"*api_key",
		"*api-key",
		"*apikey",
		"*access_key",
		"*accesskey",
		"*private_key",
		"*privatekey",
		"*credentials",
		"*client_secret",
	}
}

// keyMatcher holds sensitive-key globs, lower-cased, with an index of the literal fragment each
// one needs, so a document that contains none of the fragments skips key matching altogether.
type keyMatcher struct {
	globs []keyGlob
	index *triggerIndex // label i: the fragment of globs[i]
}

type keyGlob struct {
	pattern  string // lower case
	fragment string // the longest run without '*', lower case
}

func newKeyMatcher(patterns []string) keyMatcher {
	var m keyMatcher
	add := func(p string) {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" || slices.ContainsFunc(m.globs, func(g keyGlob) bool { return g.pattern == p }) {
			return
		}
		frag := ""
		for part := range strings.SplitSeq(p, "*") {
			if len(part) > len(frag) {
				frag = part
			}
		}
		m.globs = append(m.globs, keyGlob{pattern: p, fragment: frag})
	}
	for _, p := range patterns {
		add(p)
		if rest, ok := strings.CutPrefix(p, "*."); ok {
			add(rest)
		}
	}
	words := make([]string, len(m.globs))
	labels := make([]int, len(m.globs))
	for i, g := range m.globs {
		words[i], labels[i] = g.fragment, i
	}
	m.index = newTriggerIndex(words, labels)
	return m
}

// active returns the globs whose fragment occurs in doc: the only ones that can match a key
// of it. When escaped, the document may spell a key in escapes, and every glob is active.
func (m keyMatcher) active(doc []byte, escaped bool) []keyGlob {
	if escaped || len(m.globs) == 0 {
		return m.globs
	}
	var one [1]uint64
	seen := one[:]
	if m.index.words > 1 {
		seen = make([]uint64, m.index.words)
	}
	scan(m.index, doc, seen)
	var out []keyGlob
	for i, g := range m.globs {
		if g.fragment == "" || seen[i/64]&(1<<(i%64)) != 0 {
			out = append(out, g)
		}
	}
	return out
}

func matchAny(globs []keyGlob, key string) bool {
	for _, g := range globs {
		if globFold(g.pattern, key) {
			return true
		}
	}
	return false
}

// minSecretValue is the shortest literal secret value the redactor scrubs: shorter ones are
// too common to scrub from every answer. It is the bound secretenv applies to the environment
// values it hands over, in one place.
const minSecretValue = secretenv.MinValueLength
