package docs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// maxDepth bounds how deep the walk descends; documentation is never nested this far.
const maxDepth = 32

// Skips counts Markdown files the corpus left out, so the doctor can say why a document is
// missing instead of leaving the user to guess.
type Skips struct {
	// Oversize counts files larger than Options.MaxFileBytes.
	Oversize int
	// Symlinks counts symbolic links, which are never followed.
	Symlinks int
	// OverLimit counts files beyond Options.MaxDocs or with a slug over 512 bytes, and folders
	// deeper or more numerous than the walk goes.
	OverLimit int
	// Unreadable counts files and folders that could not be read or changed while being read.
	Unreadable int
	// Conflicts counts files whose slug was taken by another file.
	Conflicts int
	// BadNames counts files and folders whose name no slug can carry (control characters such
	// as a newline, a backslash, invalid UTF-8, or a %-escape that get_doc refuses as an
	// attempt to leave the root). They are left out rather than listed under a slug that get_doc
	// would answer doc_not_found.
	BadNames int
}

func (s *Skips) add(o Skips) {
	s.Oversize += o.Oversize
	s.Symlinks += o.Symlinks
	s.OverLimit += o.OverLimit
	s.Unreadable += o.Unreadable
	s.Conflicts += o.Conflicts
	s.BadNames += o.BadNames
}

// Total is the number of files left out for any reason.
func (s Skips) Total() int {
	return s.Oversize + s.Symlinks + s.OverLimit + s.Unreadable + s.Conflicts + s.BadNames
}

// fileStat is a Markdown file found by the walk.
type fileStat struct {
	path    string // slash path relative to the root
	info    fs.FileInfo
	modTime int64
	size    int64
}

// walkWorkers bounds how many directories are read at once, up to one per CPU. The walk is
// almost all stat system calls, which run in parallel on an idle machine.
const walkWorkers = 4

// maxDirs bounds how many folders one walk reads.
const maxDirs = 50_000

// walk lists the Markdown files of the corpus with their size and modification time, reading
// nothing but directory entries. Every directory is opened through root, so nothing outside it is
// ever listed, and symbolic links are counted, never followed. Folders are read concurrently but
// the result is assembled depth-first in name order, so which files fall beyond maxDocs does not
// depend on timing or on the file system.
func walk(ctx context.Context, root *os.Root, ex excluder, maxBytes int64, maxDocs int) ([]fileStat, Skips, error) {
	top := &dirNode{rel: "."}
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, max(1, min(walkWorkers, runtime.GOMAXPROCS(0))))
		dirs atomic.Int64
	)
	var visit func(n *dirNode)
	visit = func(n *dirNode) {
		defer wg.Done()
		if n.err = ctx.Err(); n.err != nil {
			return
		}
		sem <- struct{}{}
		n.read(root, ex, maxBytes)
		<-sem
		for _, sub := range n.subdirs {
			if sub.depth >= maxDepth || dirs.Add(1) > maxDirs {
				sub.skipped = true
				continue
			}
			wg.Add(1)
			go visit(sub)
		}
	}
	wg.Add(1)
	visit(top)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, Skips{}, err
	}
	if top.err != nil {
		return nil, Skips{}, top.err
	}

	var (
		files []fileStat
		skips Skips
	)
	var collect func(n *dirNode)
	collect = func(n *dirNode) {
		switch {
		case n.skipped:
			skips.OverLimit++
			return
		case n.err != nil:
			skips.Unreadable++
			return
		}
		skips.add(n.skips)
		for _, f := range n.files {
			if len(files) >= maxDocs {
				skips.OverLimit++
				continue
			}
			files = append(files, f)
		}
		for _, sub := range n.subdirs {
			collect(sub)
		}
	}
	collect(top)
	return files, skips, nil
}

// dirNode is one folder of the walk: its Markdown files and subfolders, both in name order.
type dirNode struct {
	rel     string
	depth   int
	files   []fileStat
	subdirs []*dirNode
	skips   Skips
	err     error
	skipped bool // beyond the depth or folder limit, not read
}

// read lists one folder. Listing a folder opened through an os.Root stats each entry relative
// to the folder's descriptor without following links, so the type seen here is the entry's own.
func (n *dirNode) read(root *os.Root, ex excluder, maxBytes int64) {
	entries, err := readDir(root, n.rel)
	if err != nil {
		n.err = err
		return
	}
	for _, e := range entries {
		rel := e.Name()
		if n.rel != "." {
			rel = n.rel + "/" + e.Name()
		}
		if ex.excluded(rel, e.Name()) {
			continue
		}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			n.skips.Symlinks++
		case (t.IsDir() || t.IsRegular() && isMarkdownName(e.Name())) && !slugName(e.Name()):
			n.skips.BadNames++
		case t.IsDir():
			n.subdirs = append(n.subdirs, &dirNode{rel: rel, depth: n.depth + 1})
		case t.IsRegular() && isMarkdownName(e.Name()):
			info, err := e.Info()
			switch {
			case err != nil:
				n.skips.Unreadable++
			case info.Size() > maxBytes:
				n.skips.Oversize++
			default:
				n.files = append(n.files, fileStat{path: rel, info: info, modTime: info.ModTime().UnixNano(), size: info.Size()})
			}
		}
	}
}

func readDir(root *os.Root, rel string) ([]fs.DirEntry, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// errChanged means the file at a path is no longer the regular file the walk saw.
var errChanged = errors.New("file changed while being read")

// readFile reads a file of the corpus. It opens it through root (no escape, whatever a path
// component turned into meanwhile), then checks that the open file is the very regular file the
// walk saw, so a file swapped for a symbolic link or a FIFO after the walk is refused rather than
// followed or blocked on. It returns the file's content and its current status.
func readFile(root *os.Root, f fileStat, maxBytes int64) ([]byte, fs.FileInfo, error) {
	file, err := root.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() || !os.SameFile(info, f.info) {
		return nil, nil, fmt.Errorf("read %s: %w", f.path, errChanged)
	}
	if info.Size() > maxBytes {
		return nil, nil, fmt.Errorf("read %s: %w", f.path, errChanged)
	}
	data, err := io.ReadAll(io.LimitReader(file, maxBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", f.path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, nil, fmt.Errorf("read %s: %w", f.path, errChanged)
	}
	return data, info, nil
}

// statFile looks a corpus path up again for a direct read, refusing anything but a regular file.
func statFile(root *os.Root, rel string) (fileStat, error) {
	if !fs.ValidPath(rel) {
		return fileStat{}, fs.ErrNotExist
	}
	info, err := root.Lstat(rel)
	if err != nil {
		return fileStat{}, err
	}
	if !info.Mode().IsRegular() {
		return fileStat{}, fmt.Errorf("stat %s: %w", path.Base(rel), errChanged)
	}
	return fileStat{path: rel, info: info, modTime: info.ModTime().UnixNano(), size: info.Size()}, nil
}
