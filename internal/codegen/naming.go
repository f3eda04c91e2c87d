package codegen

import (
	"strings"
	"unicode"
)

// initialisms are the words Go writes in one case (Effective Go, "MixedCaps"). The list is
// handed to go-jsonschema too, so that the enum constants it names agree with the model.
var initialisms = []string{
	"ACL", "API", "ASCII", "CPU", "CSS", "DB", "DNS", "EOF", "GUID", "HTML", "HTTP", "HTTPS",
	"ID", "IDs", "IP", "JSON", "JWT", "MCP", "OTLP", "OS", "RPC", "SDK", "SQL", "SSH", "TCP",
	"TLS", "TTL", "UDP", "UI", "URI", "URIs", "URL", "URLs", "UTF", "UUID", "XML",
}

// pascal turns a JSON name (camelCase, snake_case, kebab-case, or already Pascal) into an
// exported Go identifier with initialisms in one case: traceId → TraceID, p95DurationMs →
// P95DurationMs, utf8 → UTF8. It splits words exactly as go-jsonschema does, so names the
// model predicts and names go-jsonschema emits agree.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range splitWords(s) {
		b.WriteString(capitalize(w))
	}
	id := b.String()
	if id == "" {
		return "Blank"
	}
	if r := []rune(id)[0]; !unicode.IsLetter(r) || (!unicode.IsUpper(r) && !unicode.IsLower(r)) {
		id = "A" + id
	}
	return id
}

// capitalize upper-cases the first letter of a word, or writes it as an initialism.
func capitalize(w string) string {
	for _, in := range initialisms {
		if strings.EqualFold(in, w) {
			return in
		}
	}
	r := []rune(w)
	return string(unicode.ToUpper(r[0])) + string(r[1:])
}

// splitWords splits at case changes, digit runs and separators; an upper-case run followed by
// lower case stays one word ("HTTPServer"), as in go-jsonschema.
func splitWords(s string) []string {
	const (
		none = iota
		lower
		upper
		noCase
		number
		delimiter
	)
	var words []string
	runes := []rune(s)
	state, start := none, 0
	for i, r := range runes {
		var next int
		switch {
		case unicode.IsLower(r):
			next = lower
		case unicode.IsUpper(r):
			next = upper
		case unicode.IsNumber(r):
			next = number
		case !unicode.IsLetter(r):
			next = delimiter
		default:
			next = noCase
		}
		if next == state {
			continue
		}
		switch {
		case state == delimiter:
			start = i
		case state != upper || next != lower:
			if i > start {
				words = append(words, string(runes[start:i]))
			}
			start = i
		}
		state = next
	}
	if state != delimiter && len(runes) > start {
		words = append(words, string(runes[start:]))
	}
	return words
}

// singular names one element of a collection named plural: Runs → Run, Matches → Match,
// Entries → Entry. A name that does not look plural gets an "Item" suffix, so the element
// type never shares its collection's name.
func singular(plural string) string {
	switch {
	case strings.HasSuffix(plural, "ies") && len(plural) > 3:
		return strings.TrimSuffix(plural, "ies") + "y"
	case strings.HasSuffix(plural, "sses"), strings.HasSuffix(plural, "ches"),
		strings.HasSuffix(plural, "shes"), strings.HasSuffix(plural, "xes"):
		return strings.TrimSuffix(plural, "es")
	case strings.HasSuffix(plural, "ss"), strings.HasSuffix(plural, "us"),
		strings.HasSuffix(plural, "is"), strings.HasSuffix(plural, "IDs"):
		if strings.HasSuffix(plural, "IDs") {
			return strings.TrimSuffix(plural, "s")
		}
		return plural + "Item"
	case strings.HasSuffix(plural, "s") && len(plural) > 1:
		return strings.TrimSuffix(plural, "s")
	}
	return plural + "Item"
}
