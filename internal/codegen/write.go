package codegen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Dirs are the folders generation writes to.
type Dirs struct {
	// Gen is the gen/ package folder. Only files named *_gen.go are managed there; the
	// hand-written generate.go is never touched.
	Gen string
	// Bundled is the published schema folder; every .json file in it is managed.
	Bundled string
	// Listed is the folder of what tools/list serves of each tool schema; every .json file in
	// it is managed.
	Listed string
}

// change is one difference between rendered output and the disk.
type change struct {
	root     string // the output folder the file belongs to
	path     string // on disk
	old, new []byte // nil old: a new file; nil new: a stale file to remove
}

// changes compares out with the files on disk.
func changes(out *Output, dirs Dirs) ([]change, error) {
	var cs []change
	compare := func(dir string, files map[string][]byte, managed func(rel string) bool) error {
		if dir == "" {
			if len(files) > 0 {
				return fmt.Errorf("no output folder given for %d generated files", len(files))
			}
			return nil
		}
		for _, rel := range sortedKeys(files) {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			old, err := os.ReadFile(p)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("read %s: %w", p, err)
			}
			if err != nil || !bytes.Equal(old, files[rel]) {
				cs = append(cs, change{root: dir, path: p, old: old, new: files[rel]})
			}
		}
		stale, err := managedFiles(dir, managed)
		if err != nil {
			return err
		}
		for _, rel := range stale {
			if _, ok := files[rel]; ok {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(rel))
			old, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			cs = append(cs, change{root: dir, path: p, old: old})
		}
		return nil
	}
	if err := compare(dirs.Gen, out.Gen, func(rel string) bool {
		return !strings.Contains(rel, "/") && strings.HasSuffix(rel, "_gen.go")
	}); err != nil {
		return nil, err
	}
	isJSON := func(rel string) bool { return strings.HasSuffix(rel, ".json") }
	if err := compare(dirs.Bundled, out.Bundled, isJSON); err != nil {
		return nil, err
	}
	if err := compare(dirs.Listed, out.Listed, isJSON); err != nil {
		return nil, err
	}
	return cs, nil
}

// managedFiles lists the generator-owned files under dir (slash paths relative to dir).
func managedFiles(dir string, managed func(rel string) bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); managed(rel) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	slices.Sort(out)
	return out, nil
}

// Apply writes out to the folders. Every changed file is first written into a temporary
// folder beside its destination; only when all of them are written are they renamed into
// place, and then stale outputs (files no schema produces any more) are removed. Unchanged
// files are not touched, so timestamps stay put.
func Apply(out *Output, dirs Dirs) error {
	cs, err := changes(out, dirs)
	if err != nil {
		return err
	}
	type move struct{ tmp, dst string }
	var moves []move
	tmps := map[string]string{}
	defer func() {
		for _, t := range tmps {
			os.RemoveAll(t)
		}
	}()
	for _, c := range cs {
		if c.new == nil {
			continue
		}
		root := c.root
		if err := os.MkdirAll(root, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", root, err)
		}
		tmp, ok := tmps[root]
		if !ok {
			if tmp, err = os.MkdirTemp(root, ".runlens-gen-"); err != nil {
				return fmt.Errorf("create temporary folder: %w", err)
			}
			tmps[root] = tmp
		}
		rel, err := filepath.Rel(root, c.path)
		if err != nil {
			return err
		}
		t := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(t), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(t), err)
		}
		if err := os.WriteFile(t, c.new, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", t, err)
		}
		moves = append(moves, move{tmp: t, dst: c.path})
	}
	for _, mv := range moves {
		if err := os.MkdirAll(filepath.Dir(mv.dst), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(mv.dst), err)
		}
		if err := os.Rename(mv.tmp, mv.dst); err != nil {
			return fmt.Errorf("swap in %s: %w", mv.dst, err)
		}
	}
	for _, c := range cs {
		if c.new == nil {
			if err := os.Remove(c.path); err != nil {
				return fmt.Errorf("remove stale %s: %w", c.path, err)
			}
		}
	}
	return nil
}

// Check compares out with the folders without writing, prints a unified diff of every
// difference to w, and reports whether the folders are up to date.
func Check(out *Output, dirs Dirs, w io.Writer) (bool, error) {
	cs, err := changes(out, dirs)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		old, new := c.path, c.path
		switch {
		case c.old == nil:
			old = "/dev/null"
		case c.new == nil:
			new = "/dev/null"
		}
		fmt.Fprint(w, unifiedDiff(old, new, string(c.old), string(c.new)))
	}
	return len(cs) == 0, nil
}
