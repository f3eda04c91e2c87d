package docs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Defaults for Options fields left zero.
const (
	DefaultRoot            = "docs"
	DefaultMaxFileBytes    = 2 << 20
	DefaultMaxDocs         = 20_000
	DefaultRefreshInterval = 250 * time.Millisecond
)

// Options configures a corpus. The zero value of every field means its default.
type Options struct {
	// ProjectRoot anchors a relative Root and is what CorpusInfo.Root is relative to. When it
	// is set, Root must resolve inside it, symbolic links followed: a root elsewhere ("..",
	// "/", a docs folder that links out of the project) is refused with RootOutsideError each
	// time it is opened, so a link changed later is caught too.
	ProjectRoot string
	// Root is the docs folder, relative to ProjectRoot unless absolute. Default "docs".
	Root string
	// Exclude lists glob patterns of files and folders to leave out (see excluder).
	Exclude []string
	// MaxFileBytes skips larger files. Default 2 MiB.
	MaxFileBytes int64
	// MaxDocs bounds the number of indexed documents. Default 20,000.
	MaxDocs int
	// RefreshInterval is the least time between two automatic refreshes; reads in between use
	// the index as it is. Default 250 ms.
	RefreshInterval time.Duration
}

// CorpusInfo describes the indexed corpus as a whole.
type CorpusInfo struct {
	// Root is the docs root relative to the project root (slash separated), never absolute.
	Root string
	// DocumentCount is the number of indexed documents.
	DocumentCount int
	// Fingerprint changes whenever a document is added, removed, renamed or modified.
	Fingerprint string
	// Skipped counts Markdown files left out, by reason.
	Skipped Skips
}

// Corpus is a Markdown documentation corpus with an in-memory index. It is safe for concurrent
// use. Opening it costs nothing; the first call that needs the index builds it.
type Corpus struct {
	dir      string
	project  string // "" when Options.ProjectRoot was not set: no containment to check
	display  string
	exclude  excluder
	maxBytes int64
	maxDocs  int
	interval time.Duration

	// refreshMu serialises refreshes. Only a refresh mutates idx, so while holding refreshMu
	// it may read idx without mu.
	refreshMu sync.Mutex

	mu          sync.RWMutex
	idx         *index
	skips       Skips
	err         error // the outcome of the last refresh
	lastRefresh time.Time
}

// Open validates the options and returns a corpus that indexes itself on first use. A missing
// docs root is not an error here: it is reported by each call as ErrCorpusNotFound, and picked up
// as soon as the folder appears.
func Open(o Options) (*Corpus, error) {
	if o.MaxFileBytes < 0 || o.MaxDocs < 0 || o.RefreshInterval < 0 {
		return nil, errors.New("open docs corpus: negative limit")
	}
	ex, err := newExcluder(o.Exclude)
	if err != nil {
		return nil, fmt.Errorf("open docs corpus: %w", err)
	}
	project, err := filepath.Abs(firstNonEmpty(o.ProjectRoot, "."))
	if err != nil {
		return nil, fmt.Errorf("open docs corpus: %w", err)
	}
	dir := firstNonEmpty(o.Root, DefaultRoot)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(project, dir)
	}
	dir = filepath.Clean(dir)
	c := &Corpus{
		dir:      dir,
		display:  displayRoot(project, dir),
		exclude:  ex,
		maxBytes: o.MaxFileBytes,
		maxDocs:  o.MaxDocs,
		interval: o.RefreshInterval,
		idx:      newIndex(),
	}
	if o.ProjectRoot != "" {
		c.project = project
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxFileBytes
	}
	if c.maxDocs == 0 {
		c.maxDocs = DefaultMaxDocs
	}
	if c.interval == 0 {
		c.interval = DefaultRefreshInterval
	}
	return c, nil
}

// displayRoot names the docs root for answers: relative to the project when inside it, else just
// its folder name, so no absolute path of the machine reaches a client.
func displayRoot(project, dir string) string {
	rel, err := filepath.Rel(project, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if base := filepath.Base(dir); base != string(filepath.Separator) && base != "." {
			return base
		}
		return "(the file system root)"
	}
	return filepath.ToSlash(rel)
}

// Refresh brings the index up to date now: a stat walk of the root, then a parse of only the
// files that are new or whose size or modification time changed.
func (c *Corpus) Refresh(ctx context.Context) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	return c.refreshLocked(ctx)
}

// fresh makes sure the index is built and at most one refresh interval old. A read that finds
// another refresh running does not wait for it: it answers from the index as it is.
func (c *Corpus) fresh(ctx context.Context) error {
	last, err := c.lastOutcome()
	if !last.IsZero() && time.Since(last) < c.interval {
		return err
	}
	if last.IsZero() {
		c.refreshMu.Lock()
	} else if !c.refreshMu.TryLock() {
		return err
	}
	defer c.refreshMu.Unlock()
	if last, err = c.lastOutcome(); !last.IsZero() && time.Since(last) < c.interval {
		return err
	}
	return c.refreshLocked(ctx)
}

// lastOutcome is when the last refresh finished and what it returned.
func (c *Corpus) lastOutcome() (time.Time, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lastRefresh, c.err
}

// refreshLocked does the work of Refresh; the caller holds refreshMu.
func (c *Corpus) refreshLocked(ctx context.Context) error {
	root, err := c.openRoot()
	if err != nil {
		return c.lost(err)
	}
	defer root.Close()
	files, skips, err := walk(ctx, root, c.exclude, c.maxBytes, c.maxDocs)
	if ctx.Err() != nil {
		return fmt.Errorf("refresh docs index: %w", ctx.Err())
	}
	if err != nil {
		return c.lost(&CorpusNotFoundError{Root: c.display})
	}

	plan := c.idx.diff(files)
	skips.Conflicts += plan.conflicts
	skips.OverLimit += plan.overlong
	parsed, err := parseAll(ctx, root, plan.jobs, c.maxBytes)
	if err != nil {
		return fmt.Errorf("refresh docs index: %w", err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range plan.gone {
		c.idx.remove(d)
	}
	for _, r := range plan.renames {
		c.idx.reslug(r.doc, r.slug)
	}
	for i, p := range parsed {
		old := plan.jobs[i].old
		switch {
		case p.doc == nil:
			// Keep the version indexed before, if any: its size and time no longer match, so
			// the next refresh tries again, and Get always reads afresh with every check.
			skips.Unreadable++
		case old != nil && old.slug == p.doc.slug:
			c.idx.replace(old, p.doc, p.counts)
		default:
			if old != nil {
				c.idx.remove(old)
			}
			c.idx.add(p.doc, p.counts)
		}
	}
	c.idx.settle()
	c.skips = skips
	c.err = nil
	c.lastRefresh = time.Now()
	return nil
}

// lost records that the root cannot be opened or listed, or may not be: the documents it held
// are gone, and every call says why until the folder is back.
func (c *Corpus) lost(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idx = newIndex()
	c.skips = Skips{}
	c.err = err
	c.lastRefresh = time.Now()
	return c.err
}

// openRoot opens the docs root, refusing one that is not inside the project: the folder opened
// must be the very folder its path resolves to, and that folder must be under the project's
// own resolved path. It returns CorpusNotFoundError or RootOutsideError.
func (c *Corpus) openRoot() (*os.Root, error) {
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return nil, &CorpusNotFoundError{Root: c.display}
	}
	if c.project == "" {
		return root, nil
	}
	if err := c.confined(root); err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

func (c *Corpus) confined(root *os.Root) error {
	outside := &RootOutsideError{Root: c.display}
	project, err := filepath.EvalSymlinks(c.project)
	if err != nil {
		return outside
	}
	real, err := filepath.EvalSymlinks(c.dir)
	if err != nil {
		return &CorpusNotFoundError{Root: c.display}
	}
	rel, err := filepath.Rel(project, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return outside
	}
	opened, err := root.Stat(".")
	if err != nil {
		return &CorpusNotFoundError{Root: c.display}
	}
	if checked, err := os.Stat(real); err != nil || !os.SameFile(opened, checked) {
		return outside // swapped between the open and the check: judge it on the next call
	}
	return nil
}

// parsedDoc is the outcome of a parseJob; doc is nil when the file could not be read.
type parsedDoc struct {
	doc    *document
	counts map[string]*fieldCounts
}

// parseAll reads and parses files, spreading a large batch (the first build) over the CPUs.
func parseAll(ctx context.Context, root *os.Root, jobs []parseJob, maxBytes int64) ([]parsedDoc, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	out := make([]parsedDoc, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), 8, 1+len(jobs)/32)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = parseOne(root, jobs[i], maxBytes)
			}
		})
	}
	var err error
	for i := range jobs {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return out, err
}

func parseOne(root *os.Root, j parseJob, maxBytes int64) parsedDoc {
	data, info, err := readFile(root, j.file, maxBytes)
	if errors.Is(err, errChanged) {
		// Replaced since the walk, as an editor's atomic save does: look once more.
		if f, serr := statFile(root, j.file.path); serr == nil && f.size <= maxBytes {
			data, info, err = readFile(root, f, maxBytes)
		}
	}
	if err != nil {
		return parsedDoc{}
	}
	d, _, fm := parseDocument(j.file.path, data)
	d.slug = j.slug
	d.modTime = info.ModTime().UnixNano()
	d.size = info.Size()
	return parsedDoc{doc: d, counts: countTerms(d, fm)}
}

// Info describes the corpus: where it is, how many documents it holds, its fingerprint and what
// it left out.
func (c *Corpus) Info(ctx context.Context) (CorpusInfo, error) {
	if err := c.fresh(ctx); err != nil {
		return CorpusInfo{Root: c.display}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.infoLocked(), nil
}

func (c *Corpus) infoLocked() CorpusInfo {
	return CorpusInfo{
		Root:          c.display,
		DocumentCount: len(c.idx.bySlug),
		Fingerprint:   c.idx.fingerprint(),
		Skipped:       c.skips,
	}
}
