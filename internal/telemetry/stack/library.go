package stack

import (
	"strings"
)

// library recognises a frame in code the project does not own from its path (and, for Go,
// its function): dependencies (node_modules, site-packages, the Go module cache, vendor),
// standard libraries and runtime internals. It returns the library's name and the file's path
// inside it — both safe to show, since everything up to the library's own folder is dropped.
// It runs before the project match, so a dependency file can never pass for a project file
// with the same trailing path.
func library(p string, f rawFrame, format Format) (module, file string, ok bool) {
	if rest, ok := strings.CutPrefix(p, "node:"); ok {
		return "node", "node:" + rest, true
	}
	if format == FormatV8 && strings.HasPrefix(p, "internal/") {
		return "node", "node:" + p, true // Node 14 and older: internal/modules/cjs/loader.js
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if i := lastIndex(segs, "node_modules"); i >= 0 && i+1 < len(segs) {
		rest := segs[i+1:]
		n := 1
		if strings.HasPrefix(rest[0], "@") && len(rest) > 1 {
			n = 2
		}
		return strings.Join(rest[:n], "/"), strings.Join(rest, "/"), true
	}
	for _, dir := range []string{"site-packages", "dist-packages"} {
		if i := lastIndex(segs, dir); i >= 0 && i+1 < len(segs) {
			rest := segs[i+1:]
			return pythonModule(rest[0]), strings.Join(rest, "/"), true
		}
	}
	if i := indexPair(segs, "pkg", "mod"); i >= 0 && i+2 < len(segs) {
		if m, file, ok := goModCache(segs[i+2:]); ok {
			return m, file, true
		}
	}
	if format == FormatGo || format == FormatCode {
		if i := lastIndex(segs, "vendor"); i >= 0 && i+1 < len(segs) {
			return goPackage(f.function), strings.Join(segs[i+1:], "/"), true
		}
	}
	if format == FormatGo {
		pkg := goPackage(f.function)
		if pkg == "" || isGoStd(pkg) {
			if pkg == "" {
				pkg = "runtime" // panic and other builtins
			}
			file := baseName(p)
			if i := strings.Index(p, "/src/"+pkg+"/"); i >= 0 {
				file = p[i+len("/src/"):]
			}
			return pkg, file, true
		}
	}
	if format == FormatPython || format == FormatCode {
		// CPython's standard library: …/lib/python3.12/json/decoder.py.
		for i := 0; i+2 < len(segs); i++ {
			if (segs[i] == "lib" || segs[i] == "lib64" || segs[i] == "Lib") && strings.HasPrefix(segs[i+1], "python") {
				rest := segs[i+2:]
				return pythonModule(rest[0]), strings.Join(rest, "/"), true
			}
		}
	}
	return "", "", false
}

// goModCache reads the part of a module cache path after pkg/mod/:
// "github.com/!burnt!sushi/toml@v1.4.1/decode.go" → "github.com/BurntSushi/toml",
// "github.com/BurntSushi/toml@v1.4.1/decode.go".
func goModCache(segs []string) (module, file string, ok bool) {
	for i, s := range segs {
		if at := strings.IndexByte(s, '@'); at > 0 {
			m := strings.Join(append(append([]string(nil), segs[:i]...), s[:at]), "/")
			return unescapeModule(m), unescapeModule(strings.Join(segs, "/")), true
		}
	}
	return "", "", false
}

// unescapeModule undoes the module cache's case encoding ("!b" for "B").
func unescapeModule(s string) string {
	if !strings.Contains(s, "!") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '!' && i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z' {
			b.WriteByte(s[i+1] - 'a' + 'A')
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pythonModule is the top-level package of a site-packages or stdlib entry: "requests",
// "six.py" → "six".
func pythonModule(s string) string {
	s = strings.TrimSuffix(s, ".py")
	if i := strings.IndexAny(s, "-"); i > 0 && strings.HasSuffix(s, ".egg") {
		s = s[:i]
	}
	return s
}

// moduleOfFunction names the library of a frame outside the project from its function alone:
// the Go package, the .NET namespace (Java is handled with its file). Python and V8 function
// names say nothing about their module.
func moduleOfFunction(f rawFrame, format Format) string {
	switch format {
	case FormatGo:
		if p := goPackage(f.function); p != "" {
			return p
		}
		return "runtime"
	case FormatDotNet, FormatJVM:
		return f.pkg
	}
	return ""
}

// goPackage is the import path of a Go function: "github.com/shop/app/cart.(*Cart).Apply" →
// "github.com/shop/app/cart". The runtime escapes dots in the last path element as %2e, so the
// first dot after the last slash ends the path.
func goPackage(fn string) string {
	head := fn
	if i := strings.IndexAny(head, "(["); i >= 0 {
		head = head[:i]
	}
	slash := strings.LastIndexByte(head, '/')
	dot := strings.IndexByte(head[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return strings.ReplaceAll(head[:slash+1+dot], "%2e", ".")
}

// shortFunction is what a frame shows of a function: Go loses its import path folders
// ("github.com/shop/app/cart.(*Cart).Apply" → "cart.(*Cart).Apply"), any other runtime's name
// loses anything up to a path separator (no function name holds one, but a hostile trace may).
func shortFunction(fn string, format Format) string {
	if fn == "" {
		return ""
	}
	if format == FormatGo {
		head := fn
		if i := strings.IndexAny(head, "(["); i >= 0 {
			head = head[:i]
		}
		if slash := strings.LastIndexByte(head, '/'); slash >= 0 {
			fn = fn[slash+1:]
		}
		fn = strings.ReplaceAll(fn, "%2e", ".")
	} else if i := strings.LastIndexAny(fn, `/\`); i >= 0 {
		fn = fn[i+1:]
	}
	return clip(fn, maxFunctionBytes)
}

// isGoStd reports a standard library package by its first path element; the set is the Go
// distribution's top-level folders, which a module path (with a dot in its first element, or a
// project's own name) does not share.
func isGoStd(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	if strings.Contains(first, ".") {
		return false
	}
	return goStdRoots[first]
}

var goStdRoots = map[string]bool{
	"archive": true, "bufio": true, "builtin": true, "bytes": true, "cmp": true, "compress": true,
	"container": true, "context": true, "crypto": true, "database": true, "debug": true,
	"embed": true, "encoding": true, "errors": true, "expvar": true, "flag": true, "fmt": true,
	"go": true, "hash": true, "html": true, "image": true, "index": true, "internal": true,
	"io": true, "iter": true, "log": true, "maps": true, "math": true, "mime": true, "net": true,
	"os": true, "path": true, "plugin": true, "reflect": true, "regexp": true, "runtime": true,
	"slices": true, "sort": true, "strconv": true, "strings": true, "structs": true, "sync": true,
	"syscall": true, "testing": true, "text": true, "time": true, "unicode": true, "unique": true,
	"unsafe": true, "weak": true,
}

func lastIndex(segs []string, s string) int {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i] == s {
			return i
		}
	}
	return -1
}

func indexPair(segs []string, a, b string) int {
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == a && segs[i+1] == b {
			return i
		}
	}
	return -1
}
