package stack

import (
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Display bounds for the parts of a frame that do not name a project file.
const (
	maxFunctionBytes = 256
	maxLibFileBytes  = 256
)

// resolve maps one raw frame onto the project: an in-project frame gets its project-relative
// file; any other frame is named by its library, never by a path of the machine that ran it.
func (ix *index) resolve(f rawFrame, format Format) Frame {
	out := ix.place(f, format)
	out.Line, out.Column = f.line, f.column
	out.Function = shortFunction(f.function, format)
	// Everything shown that is not a project path came from the trace: bound it and keep it
	// printable.
	out.Module = clip(out.Module, maxLibFileBytes)
	if !out.InProject {
		out.File = clip(out.File, maxLibFileBytes)
	}
	return out
}

// place decides where a frame is: its project file, or its library and the file inside it.
func (ix *index) place(f rawFrame, format Format) Frame {
	if format == FormatJVM {
		if rel := ix.matchPackagePath(f.pkg, f.file); rel != "" {
			return Frame{File: rel, InProject: true}
		}
		return Frame{Module: f.pkg, File: f.file}
	}
	p, ok := cleanFramePath(f.file)
	if !ok {
		// Not a path (eval, <string>, a relative path climbing out of its folder): keep at most
		// a base name.
		out := Frame{File: baseName(p), Module: moduleOfFunction(f, format)}
		if m, ok := strings.CutPrefix(f.file, "<frozen "); ok && format == FormatPython {
			out.Module = strings.TrimSuffix(m, ">") // <frozen importlib._bootstrap>
		}
		return out
	}
	if module, file, ok := library(p, f, format); ok {
		return Frame{Module: module, File: file}
	}
	if rel := ix.matchSuffix(p); rel != "" {
		return Frame{File: rel, InProject: true}
	}
	return Frame{File: baseName(p), Module: moduleOfFunction(f, format)}
}

// matchSuffix finds the project file named by the longest suffix of p, element-wise: a path
// from a container (/app/src/cart/checkout.ts), another checkout (/home/ci/build/x/internal/a.go)
// or a -trimpath build (github.com/shop/app/internal/a.go) names the project file with the same
// trailing elements. Only files in the index match, so nothing outside the project can.
func (ix *index) matchSuffix(p string) string {
	p = strings.TrimPrefix(p, "/")
	for p != "" {
		if ix.has(p) {
			return p
		}
		i := strings.IndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[i+1:]
	}
	return ""
}

// matchPackagePath finds the project file of a JVM frame, which names only a file's base name
// and the class's package: com.shop.Cart in Cart.java is com/shop/Cart.java under some source
// root. Kotlin lets a project omit its common package prefix from folders, so shorter package
// tails are tried, down to one folder; a bare file name only matches for the default package.
// Two project files matching equally well resolve to neither.
func (ix *index) matchPackagePath(pkg, file string) string {
	if file == "" || strings.ContainsAny(file, "/\\") {
		return ""
	}
	cands := ix.byBase[file]
	if len(cands) == 0 {
		return ""
	}
	var dirs []string
	if pkg != "" {
		dirs = strings.Split(pkg, ".")
	}
	for k := 0; k < len(dirs) || (k == 0 && len(dirs) == 0); k++ {
		want := file
		if len(dirs) > 0 {
			want = strings.Join(dirs[k:], "/") + "/" + file
		}
		found := ""
		for _, rel := range cands {
			if rel == want || strings.HasSuffix(rel, "/"+want) {
				if found != "" {
					return "" // ambiguous
				}
				found = rel
			}
		}
		if found != "" {
			return found
		}
	}
	return ""
}

// cleanFramePath turns a frame's file as written into a clean slash path: URLs lose their
// scheme and host (file://, webpack://, http(s)://), Windows paths their drive and backslashes.
// It reports false for what is not a usable path — empty, a pseudo-file (<string>, [eval]), or
// a relative path climbing out of its folder (../../etc/passwd) — returning the text whose base
// name may be shown.
func cleanFramePath(file string) (string, bool) {
	p := strings.TrimSpace(file)
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if strings.HasPrefix(p, "<") || strings.HasPrefix(p, "[") {
		return p, false // <string>, <anonymous>, [eval]: shown as they are, never a path
	}
	if strings.HasPrefix(p, "node:") {
		return p, true
	}
	if i := strings.Index(p, "://"); i > 0 && isScheme(p[:i]) {
		scheme, rest := strings.ToLower(p[:i]), p[i+3:]
		switch scheme {
		case "webpack", "webpack-internal":
			// webpack://app-name/./src/x.ts: the resource path follows the namespace.
			if j := strings.Index(rest, "/./"); j >= 0 {
				rest = rest[j+3:]
			} else {
				rest = strings.TrimPrefix(rest, "/")
				rest = strings.TrimPrefix(rest, "./")
			}
		default:
			// file:///app/x.mjs, https://host/static/app.js?v=1: the path, decoded.
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				rest = rest[j:]
			} else {
				rest = ""
			}
			if j := strings.IndexAny(rest, "?#"); j >= 0 {
				rest = rest[:j]
			}
			if u, err := url.PathUnescape(rest); err == nil {
				rest = u
			}
		}
		p = rest
	}
	if strings.ContainsRune(p, '\\') || hasDrive(p) || (len(p) > 3 && p[0] == '/' && hasDrive(p[1:])) {
		p = strings.ReplaceAll(p, `\`, "/")
		p = strings.TrimPrefix(p, "/")
		if hasDrive(p) {
			p = "/" + p[2:]
		}
	}
	if p == "" {
		return "", false
	}
	abs := strings.HasPrefix(p, "/")
	p = path.Clean(p)
	if !abs && (p == ".." || strings.HasPrefix(p, "../")) {
		return p, false
	}
	if p == "." || p == "/" {
		return "", false
	}
	return p, true
}

func isScheme(s string) bool {
	if len(s) < 2 || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '+' || r == '.') {
			return false
		}
	}
	return true
}

func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') &&
		(len(p) == 2 || p[2] == '/' || p[2] == '\\')
}

// baseName is the last element of a slash path; pseudo-files have none.
func baseName(p string) string {
	if p == "" {
		return ""
	}
	b := path.Base(p)
	if b == "." || b == "/" || b == ".." || strings.HasPrefix(p, "<") && b != p {
		return ""
	}
	return b
}

// clip bounds a display string at a rune boundary and strips control characters, which a
// trace from an application could carry into an answer.
func clip(s string, max int) string {
	if s == "" {
		return ""
	}
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
