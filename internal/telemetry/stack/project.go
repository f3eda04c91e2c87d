package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
)

// maxGitignoreBytes bounds the project's .gitignore; a larger one is not a real one.
const maxGitignoreBytes = 256 << 10

// Options bound a Project. The zero value is a sensible default.
type Options struct {
	// MaxFiles bounds the index of project files; DefaultMaxFiles when zero.
	MaxFiles int
	// MaxFrames is how many frames a Trace keeps; DefaultMaxFrames when zero, at most 4096.
	MaxFrames int
	// Deny lists .gitignore-style patterns of project files Snippet never reads, on top of the
	// project's .gitignore and the secret files that are always refused.
	Deny []string
	// MaxLineBytes bounds one snippet line; DefaultMaxLineBytes when zero.
	MaxLineBytes int
}

// Project maps stack frames onto one project's files. It indexes the project once, when
// opened: files created later are not seen until a new Project is opened. It is safe for
// concurrent use.
type Project struct {
	dir       string
	ix        *index
	gitignore ignoreRules
	// gitignoreBad: .gitignore exists but could not be read safely, so no file can be known
	// not to be ignored and every snippet is refused.
	gitignoreBad bool
	deny         ignoreRules
	maxFrames    int
	maxLine      int
}

// CheckDeny reports the first pattern of a snippet deny list that does not parse, so a
// configuration can be refused when it is loaded rather than when the first stack is read.
func CheckDeny(patterns []string) error {
	if _, err := parseIgnore(strings.Join(patterns, "\n"), true); err != nil {
		return fmt.Errorf("snippet deny list: %w", err)
	}
	return nil
}

// Open indexes the project under dir and reads its top-level .gitignore, all through an
// os.Root and without following symbolic links. A bad Deny pattern or an unreadable dir is an
// error; everything inside the project that cannot be read is simply left out.
func Open(ctx context.Context, dir string, opts Options) (*Project, error) {
	deny, err := parseIgnore(strings.Join(opts.Deny, "\n"), true)
	if err != nil {
		return nil, fmt.Errorf("snippet deny list: %w", err)
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open project root: %w", err)
	}
	defer root.Close()
	maxFiles := opts.MaxFiles
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	ix, err := buildIndex(ctx, root, maxFiles)
	if err != nil {
		return nil, fmt.Errorf("index project files: %w", err)
	}
	p := &Project{dir: dir, ix: ix, deny: deny, maxFrames: DefaultMaxFrames, maxLine: DefaultMaxLineBytes}
	if opts.MaxFrames > 0 {
		p.maxFrames = min(opts.MaxFrames, maxMaxFrames)
	}
	if opts.MaxLineBytes > 0 {
		p.maxLine = opts.MaxLineBytes
	}
	text, err := readGitignore(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		p.gitignoreBad = true
	default:
		p.gitignore, _ = parseIgnore(text, false)
	}
	return p, nil
}

// readGitignore reads the top-level .gitignore if it is a regular file of bounded size.
func readGitignore(root *os.Root) (string, error) {
	info, err := root.Lstat(".gitignore")
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() || info.Size() > maxGitignoreBytes {
		return "", errors.New("gitignore is not a regular file of bounded size")
	}
	data, err := readRegular(root, ".gitignore", info, maxGitignoreBytes)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Stats says how complete the project index is.
func (p *Project) Stats() IndexStats { return p.ix.stats }

// Resolve parses a recorded stack trace (an exception.stacktrace or code.stacktrace value) and
// maps its frames onto the project. Any text is accepted; text that holds no frame of a known
// format gives a Trace with no frames.
func (p *Project) Resolve(stacktrace string) Trace {
	pr := parse(stacktrace, p.maxFrames)
	t := Trace{Format: pr.format, Omitted: pr.omitted, Cut: pr.cut}
	if len(pr.frames) > 0 {
		t.Frames = make([]Frame, len(pr.frames))
	}
	for i, rf := range pr.frames {
		f := p.ix.resolve(rf, pr.format)
		f.Depth = i
		t.Frames[i] = f
		if f.InProject && t.Location == nil {
			loc := f.Location()
			t.Location = &loc
		}
	}
	return t
}

// The code.* attributes of OpenTelemetry's semantic conventions, stable and legacy.
const (
	attrExceptionStacktrace = "exception.stacktrace"
	attrCodeStacktrace      = "code.stacktrace"
	attrCodeFilePath        = "code.file.path"
	attrCodeLineNumber      = "code.line.number"
	attrCodeColumnNumber    = "code.column.number"
	attrCodeFunctionName    = "code.function.name"
	attrCodeFilepathLegacy  = "code.filepath"
	attrCodeLinenoLegacy    = "code.lineno"
	attrCodeColumnLegacy    = "code.column"
	attrCodeFunctionLegacy  = "code.function"
	attrCodeNamespaceLegacy = "code.namespace"
)

// ResolveAttributes resolves the stack a span's or log record's attributes describe: the
// exception.stacktrace (log records carry exception attributes of their own), else the
// code.stacktrace, mapped like Resolve. Where that names no project file, the code.* location
// attributes (code.file.path, code.line.number, code.column.number, code.function.name, or the
// legacy code.filepath, code.lineno, code.column, code.namespace + code.function) give the
// location, and the only frame when there is no stack at all.
func (p *Project) ResolveAttributes(attrs map[string]string) Trace {
	var t Trace
	for _, k := range []string{attrExceptionStacktrace, attrCodeStacktrace} {
		if s := attrs[k]; s != "" {
			if t = p.Resolve(s); len(t.Frames) > 0 {
				break
			}
		}
	}
	if t.Location != nil {
		return t
	}
	f, ok := p.codeFrame(attrs)
	if !ok {
		return t
	}
	if len(t.Frames) == 0 {
		t.Format, t.Frames = FormatCode, []Frame{f}
	}
	if f.InProject {
		loc := f.Location()
		t.Location = &loc
	}
	return t
}

// ResolveSpan resolves a span's failure: the stack of its last exception event that has one
// (the exception that ended it), else its attributes as ResolveAttributes reads them.
func (p *Project) ResolveSpan(span *telemetry.SpanRow) Trace {
	for i := len(span.Events) - 1; i >= 0; i-- {
		e := span.Events[i]
		if e.Name != "exception" || e.Attributes[attrExceptionStacktrace] == "" {
			continue
		}
		if t := p.Resolve(e.Attributes[attrExceptionStacktrace]); len(t.Frames) > 0 {
			if t.Location == nil {
				if f, ok := p.codeFrame(span.Attributes); ok && f.InProject {
					loc := f.Location()
					t.Location = &loc
				}
			}
			return t
		}
	}
	return p.ResolveAttributes(span.Attributes)
}

// codeFrame is the frame the code.* location attributes describe, if they name a file.
func (p *Project) codeFrame(attrs map[string]string) (Frame, bool) {
	file := first(attrs, attrCodeFilePath, attrCodeFilepathLegacy)
	if file == "" {
		return Frame{}, false
	}
	fn := attrs[attrCodeFunctionName]
	if fn == "" {
		fn = attrs[attrCodeFunctionLegacy]
		if ns := attrs[attrCodeNamespaceLegacy]; ns != "" && fn != "" {
			fn = ns + "." + fn
		}
	}
	rf := rawFrame{function: fn, file: file}
	rf.line, _ = positive(first(attrs, attrCodeLineNumber, attrCodeLinenoLegacy))
	rf.column, _ = positive(first(attrs, attrCodeColumnNumber, attrCodeColumnLegacy))
	return p.ix.resolve(rf, FormatCode), true
}

func first(attrs map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(attrs[k]); v != "" {
			return v
		}
	}
	return ""
}

// positive parses an attribute holding a line or column number; values are stored as text
// (and integers may arrive as "45" or "45.0").
func positive(s string) (int, bool) {
	s = strings.TrimSuffix(s, ".0")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<30 {
		return 0, false
	}
	return n, true
}

// readRegular reads a file through root that must be the regular file info describes (so a
// file swapped for a link or a FIFO between the stat and the open is refused), at most max
// bytes.
func readRegular(root *os.Root, rel string, info fs.FileInfo, max int64) ([]byte, error) {
	f, err := openSame(root, rel, info)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errors.New("file grew past its bound")
	}
	return data, nil
}
