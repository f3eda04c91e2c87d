package stack

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Index bounds. The index is built once per Project and holds only paths, so even a large
// monorepo costs a few megabytes.
const (
	// DefaultMaxFiles is how many files the index holds when Options.MaxFiles is zero.
	DefaultMaxFiles = 100_000
	// maxIndexDirs bounds how many folders the walk reads.
	maxIndexDirs = 20_000
	// maxIndexDepth bounds how deep the walk descends.
	maxIndexDepth = 32
	// readDirChunk is how many entries are read from a folder at a time.
	readDirChunk = 1024
)

// prunedDirs are folders the index never enters: version control, dependencies and caches.
// A frame in them is a library frame or nothing the project owns; a file the runtime ran from
// them is named by its package instead.
var prunedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".jj": true,
	"node_modules": true, "vendor": true, "bower_components": true,
	"__pycache__": true, ".venv": true, "venv": true, "site-packages": true, ".tox": true,
	".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true,
	".gradle": true, ".idea": true, ".vs": true, ".cache": true, ".runlens": true,
}

// IndexStats says how complete the project index is, so an answer can admit that a frame may
// be in the project but beyond what was indexed.
type IndexStats struct {
	// Files is how many files the index holds.
	Files int
	// PrunedDirs counts folders never entered (version control, dependencies, caches).
	PrunedDirs int
	// Symlinks counts symbolic links, never followed.
	Symlinks int
	// SecretFiles counts files left out because their name marks them as secrets (.env, keys).
	SecretFiles int
	// Truncated: a limit (files, folders or depth) stopped the walk, so some project files are
	// not in the index and frames pointing at them resolve as outside the project.
	Truncated bool
}

// index is the set of the project's files, by relative slash path and by base name.
type index struct {
	files  map[string]struct{}
	byBase map[string][]string
	stats  IndexStats
}

func (ix *index) has(rel string) bool {
	_, ok := ix.files[rel]
	return ok
}

// buildIndex lists the project's regular files through root, depth-first in name order, never
// following a symbolic link (a listing through an os.Root reports each entry's own type).
func buildIndex(ctx context.Context, root *os.Root, maxFiles int) (*index, error) {
	ix := &index{files: make(map[string]struct{}), byBase: make(map[string][]string)}
	type dir struct {
		rel   string
		depth int
	}
	stack := []dir{{rel: ".", depth: 0}}
	dirs := 0
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if dirs++; dirs > maxIndexDirs {
			ix.stats.Truncated = true
			break
		}
		entries, full, err := readDirBounded(root, d.rel, 2*maxFiles)
		if err != nil {
			if d.rel == "." {
				return nil, err
			}
			continue // unreadable folder: its files are simply not in the project index
		}
		if !full {
			ix.stats.Truncated = true
		}
		var subdirs []dir
		for _, e := range entries {
			name := e.Name()
			rel := name
			if d.rel != "." {
				rel = d.rel + "/" + name
			}
			switch t := e.Type(); {
			case t&fs.ModeSymlink != 0:
				ix.stats.Symlinks++
			case t.IsDir():
				switch {
				case prunedDirs[name]:
					ix.stats.PrunedDirs++
				case d.depth+1 >= maxIndexDepth:
					ix.stats.Truncated = true
				default:
					subdirs = append(subdirs, dir{rel: rel, depth: d.depth + 1})
				}
			case t.IsRegular():
				if isSecretName(name) {
					ix.stats.SecretFiles++
					continue
				}
				if len(ix.files) >= maxFiles {
					ix.stats.Truncated = true
					continue
				}
				ix.files[rel] = struct{}{}
				ix.byBase[name] = append(ix.byBase[name], rel)
			}
		}
		// Push in reverse so the walk visits folders in name order.
		for i := len(subdirs) - 1; i >= 0; i-- {
			stack = append(stack, subdirs[i])
		}
		if len(ix.files) >= maxFiles && len(stack) > 0 {
			ix.stats.Truncated = true
			break
		}
	}
	ix.stats.Files = len(ix.files)
	return ix, nil
}

// readDirBounded lists a folder in name order, reading at most limit entries; full reports
// whether the whole folder was read.
func readDirBounded(root *os.Root, rel string, limit int) ([]fs.DirEntry, bool, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var out []fs.DirEntry
	for len(out) < limit {
		chunk, err := f.ReadDir(readDirChunk)
		out = append(out, chunk...)
		if errors.Is(err, io.EOF) || (err == nil && len(chunk) == 0) {
			slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
			return out, true, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, false, nil
}
