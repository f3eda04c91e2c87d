package shape

import (
	"bytes"
	"slices"
	"strings"
)

// Redacted replaces every secret the Redactor finds. It is never lifted, not even at
// detail=full.
const Redacted = "[REDACTED]"

// RedactorOptions configure a Redactor.
type RedactorOptions struct {
	// SensitiveKeys are attribute keys (globs, see DefaultSensitiveKeys) whose values are always
	// replaced whole; nil means DefaultSensitiveKeys.
	SensitiveKeys []string
	// SecretValues are literal values to scrub wherever they appear, typically
	// secretenv.RedactionValues(os.Environ(), patterns), the values of the variables an
	// executed command does not see; values shorter than 6 bytes are ignored as too common.
	SecretValues []string
}

// Redactor scrubs secrets from answers and command output. It is safe for concurrent use; build
// it once, since building it is the expensive part.
type Redactor struct {
	rules   []rule
	index   *triggerIndex // rule triggers, secret values and encodings, labelled as below
	keys    keyMatcher
	secrets []string // longest first, so a secret containing another is replaced whole
}

// Labels of the trigger index beyond the rules' own (label i is rule i, so there may be at most
// 60 rules; a test holds builtinRules to it).
const (
	labelKey     = iota + 60 // the fragment of a sensitive-key glob: match keys in JSON
	labelSecret              // a prefix of a secret value: confirm with a substring search
	labelEncoded             // '%' or '+': secrets may hide in URL-encoded components
	labelEscape              // a JSON escape that could spell any trigger in other bytes
)

// secretPrefix is how much of a secret value the trigger index holds; the full value is then
// confirmed by substring search. secretIndexBytes bounds the index's share of all secrets, so
// the automaton's states stay countable in 16 bits however many secrets are configured: with
// many secrets, each contributes a shorter prefix.
const (
	secretPrefix     = 12
	secretIndexBytes = 16 << 10
)

// NewRedactor returns a Redactor with the built-in patterns, the sensitive keys and the secret
// values of o.
func NewRedactor(o RedactorOptions) *Redactor {
	keys := o.SensitiveKeys
	if keys == nil {
		keys = DefaultSensitiveKeys()
	}
	r := &Redactor{rules: builtinRules(), keys: newKeyMatcher(keys)}
	for _, v := range o.SecretValues {
		if len(v) >= minSecretValue && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })

	var words []string
	var labels []int
	add := func(label int, ws ...string) {
		for _, w := range ws {
			words = append(words, w)
			labels = append(labels, label)
		}
	}
	for i, ru := range r.rules {
		add(i, ru.triggers...)
	}
	prefix := secretPrefix
	if len(r.secrets) > 0 {
		prefix = max(1, min(secretPrefix, secretIndexBytes/len(r.secrets)))
	}
	for _, v := range r.secrets {
		add(labelSecret, v[:min(len(v), prefix)])
		// In a JSON document a secret with a quote, a backslash or a control character is
		// written escaped (X"Y as X\"Y): its plain prefix is not in the document's bytes, and
		// JSON would return the document unread.
		if q := appendQuoted(nil, v); len(q) != len(v)+2 {
			add(labelSecret, string(q[1:min(len(q)-1, 1+prefix)]))
		}
	}
	for _, g := range r.keys.globs {
		add(labelKey, g.fragment)
	}
	add(labelEncoded, "%", "+")
	add(labelEscape, `\u`, `\/`)
	r.index = newTriggerIndex(words, labels)
	return r
}

// maxPasses bounds the passes of String. A pass that redacts something can expose a secret that
// was glued to it ("…Bearer tok" right after a key loses its word boundary only once the key is
// gone), so String repeats until nothing changes; every pass but the last removes a secret.
const maxPasses = 8

// String returns s with every secret part replaced by Redacted, also inside URL-encoded
// components. A string without secrets is returned as is, without allocating.
func (r *Redactor) String(s string) string {
	for range maxPasses {
		seen := scan1(r.index, s)
		if seen == 0 {
			return s
		}
		next := r.plain(s, seen)
		if seen&(1<<labelEncoded) != 0 {
			next = r.percentEncoded(next)
		}
		if next == s {
			return s
		}
		s = next
	}
	return s
}

// plain applies the secret values and the rules whose triggers were seen to s as written.
// Replacing a secret never creates a trigger, so the labels seen before stay a safe superset.
func (r *Redactor) plain(s string, seen uint64) string {
	if seen&(1<<labelSecret) != 0 {
		for _, v := range r.secrets {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, Redacted)
			}
		}
	}
	for i := range r.rules {
		if seen&(1<<i) != 0 {
			s = r.rules[i].apply(s)
		}
	}
	return s
}

// Bytes is String for command output.
func (r *Redactor) Bytes(b []byte) []byte {
	s := string(b)
	if out := r.String(s); out != s {
		return []byte(out)
	}
	return b
}

// fragmentWindow is how far into a cut output Tail looks for the end of a first, partial line.
const fragmentWindow = 512

// Tail returns the newest max bytes of command output, redacted, and whether anything was
// dropped. Redaction runs before the cut, on all of b. When the output was cut here, or b itself
// is only the end of a longer stream (partial: a bounded ring of output), its first line may be
// the second half of a secret that no pattern recognises any more, so the result starts after the
// first line break within the first 512 bytes (or the first space, if there is no line break).
func (r *Redactor) Tail(b []byte, max int, partial bool) ([]byte, bool) {
	out, cut := TailBytes(r.Bytes(b), max)
	if !cut && !partial {
		return out, false
	}
	head := out[:min(len(out), fragmentWindow)]
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		return out[i+1:], true
	}
	if i := bytes.IndexAny(head, " \t"); i >= 0 {
		return out[i+1:], true
	}
	return out, true
}

// JSON redacts a JSON document: every string (member names included) passes String, except a
// base64url `nextCursor` (the server's own, see isCursorText), and the values under sensitive keys — object members whose name matches, and the value of
// {"key"|"name": <sensitive>, "value": …} pairs — are replaced whole (strings and numbers
// become Redacted; nested values are redacted leaf by leaf). The result is rebuilt from decoded
// strings, so redaction never breaks the JSON. A document in which no trigger word, secret or
// sensitive key occurs is returned as is without being parsed; one that must be rewritten and is
// not JSON is an error.
func (r *Redactor) JSON(raw []byte) ([]byte, error) {
	seen := scan1(r.index, raw)
	if seen == 0 {
		return raw, nil
	}
	var globs []keyGlob
	if seen&(1<<labelKey|1<<labelEscape) != 0 {
		globs = r.keys.active(raw, seen&(1<<labelEscape) != 0)
	}
	rest := seen &^ (1<<labelKey | 1<<labelEncoded)
	if len(globs) == 0 && rest == 0 && (seen&(1<<labelEncoded) == 0 || !mayHideInEncoding(raw)) {
		return raw, nil
	}
	root, err := parseJSON(raw)
	if err != nil {
		return nil, err
	}
	w := jsonRedaction{r: r, globs: globs, seen: map[string]bool{}}
	if !w.walk(root) {
		return raw, nil
	}
	return root.encode(make([]byte, 0, len(raw))), nil
}

// mayHideInEncoding reports whether a document with '%' or '+' holds a URL-encoded component
// worth decoding: only then can a secret hide from the trigger words.
func mayHideInEncoding(doc []byte) bool {
	return bytes.IndexByte(doc, '+') >= 0 || hasPercentEscape(string(doc))
}

// jsonRedaction is one walk over a parsed document.
type jsonRedaction struct {
	r     *Redactor
	globs []keyGlob
	seen  map[string]bool // sensitivity of keys already matched in this document
}

func (w *jsonRedaction) sensitive(key string) bool {
	if len(w.globs) == 0 {
		return false
	}
	s, ok := w.seen[key]
	if !ok {
		s = matchAny(w.globs, key)
		w.seen[key] = s
	}
	return s
}

// walk redacts n in place and reports whether it changed anything.
func (w *jsonRedaction) walk(n *node) bool {
	changed := false
	switch n.kind {
	case kindString:
		if s := w.r.String(n.str); s != n.str {
			n.str = s
			changed = true
		}
	case kindArray:
		for _, k := range n.kids {
			changed = w.walk(k) || changed
		}
	case kindObject:
		pairValue := w.sensitivePairValue(n)
		for i, k := range n.kids {
			if nk := w.r.String(n.keys[i]); nk != n.keys[i] {
				n.keys[i] = nk
				changed = true
			}
			if k == pairValue || w.sensitive(n.keys[i]) {
				changed = redactAll(k) || changed
				continue
			}
			if n.keys[i] == "nextCursor" && isCursorText(k) {
				continue
			}
			changed = w.walk(k) || changed
		}
	}
	return changed
}

// isCursorText reports whether n is a string Codec could have minted. Such cursors are the
// server's own random-looking bytes: a pattern could match a stretch of them by chance (one in
// some millions), and a redacted cursor would break the next page.
func isCursorText(n *node) bool {
	if n.kind != kindString || len(n.str) > 200 {
		return false
	}
	for i := 0; i < len(n.str); i++ {
		c := n.str[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// sensitivePairValue returns the "value" member of an attribute written as
// {"key": "db.password", "value": …} (OTLP) or {"name": "Authorization", "value": …} (headers)
// when the named key is sensitive, or nil.
func (w *jsonRedaction) sensitivePairValue(n *node) *node {
	v := n.member("value")
	if v == nil {
		return nil
	}
	for _, field := range []string{"key", "name"} {
		if k := n.member(field); k != nil && k.kind == kindString && w.sensitive(k.str) {
			return v
		}
	}
	return nil
}

// redactAll replaces every string and number under n with Redacted; booleans and null carry no
// secret and keep the document's shape.
func redactAll(n *node) bool {
	switch n.kind {
	case kindString:
		if n.str == Redacted {
			return false
		}
		n.str = Redacted
		return true
	case kindLiteral:
		switch string(n.lit) {
		case "true", "false", "null":
			return false
		}
		*n = node{kind: kindString, str: Redacted}
		return true
	}
	changed := false
	for _, k := range n.kids {
		changed = redactAll(k) || changed
	}
	return changed
}
