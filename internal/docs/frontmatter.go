package docs

import (
	"bytes"
	"strings"
)

// maxFrontMatterBytes bounds how far the closing fence of front matter is looked for; a file
// that opens with "---" and never closes it is Markdown with a thematic break, not metadata.
const maxFrontMatterBytes = 64 << 10

// frontMatter is the part of a document's YAML-style header runlens reads.
type frontMatter struct {
	title, description string
}

// splitFrontMatter separates a leading "---" block from the Markdown body. Only flat
// "key: value" lines are understood (quoted or plain, plus ">" and "|" block scalars for long
// descriptions); that covers what documentation generators write for title and description
// without pulling a YAML parser into the dependency tree. Unknown keys are ignored.
func splitFrontMatter(src []byte) (frontMatter, []byte) {
	pos := len(src) - len(bytes.TrimPrefix(src, []byte("\uFEFF")))
	line, next := nextLine(src, pos)
	if strings.TrimRight(line, " \t") != "---" {
		return frontMatter{}, src
	}
	var fm frontMatter
	for pos = next; pos < len(src) && pos < maxFrontMatterBytes; {
		line, next = nextLine(src, pos)
		pos = next
		if line == "---" || line == "..." {
			return fm, src[pos:]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || isIndented(line) {
			continue
		}
		value = strings.TrimSpace(value)
		if isBlockScalar(value) {
			var parts []string
			for pos < len(src) {
				more, after := nextLine(src, pos)
				if !isIndented(more) {
					break
				}
				parts = append(parts, strings.TrimSpace(more))
				pos = after
			}
			value = strings.TrimSpace(strings.Join(parts, " "))
		} else {
			value = unquote(value)
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "title":
			fm.title = value
		case "description":
			fm.description = value
		}
	}
	return frontMatter{}, src
}

// nextLine returns the line starting at pos without its line ending, and where the next starts.
func nextLine(src []byte, pos int) (string, int) {
	end := bytes.IndexByte(src[pos:], '\n')
	if end < 0 {
		return strings.TrimSuffix(string(src[pos:]), "\r"), len(src)
	}
	return strings.TrimSuffix(string(src[pos:pos+end]), "\r"), pos + end + 1
}

func isBlockScalar(v string) bool {
	switch v {
	case ">", ">-", ">+", "|", "|-", "|+":
		return true
	}
	return false
}

func isIndented(line string) bool {
	return strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.TrimSpace(line) == ""
}

// unquote strips one level of YAML quoting and drops a trailing comment from a plain value.
func unquote(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, " ", `\t`, " ")
		return r.Replace(v[1 : len(v)-1])
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}
