package stack

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Snippet bounds.
const (
	// DefaultMaxLineBytes bounds one snippet line when Options.MaxLineBytes is zero: a source
	// line is read to show a statement, not a minified bundle.
	DefaultMaxLineBytes = 400
	// maxSnippetScanBytes is how far into a file a snippet reads to reach its line.
	maxSnippetScanBytes = 4 << 20
	// maxAround is how many lines either side of the location a snippet may show.
	maxAround = 1
)

// Reason says why a snippet was refused. Refusals are ordinary answers, not failures: the
// location still stands, only its source line is not shown.
type Reason string

// The reasons a snippet is refused.
const (
	// ReasonNoRedactor: no redactor was given, and no line is shown unredacted.
	ReasonNoRedactor Reason = "no-redactor"
	// ReasonNotInProject: the file is not one of the indexed project files (a path leaving the
	// project, a dependency folder, a file beyond the index bound).
	ReasonNotInProject Reason = "not-in-project"
	// ReasonSecret: the file's name marks it as a secret (.env, keys, credentials); never read.
	ReasonSecret Reason = "secret-file"
	// ReasonIgnored: the project's .gitignore ignores the file.
	ReasonIgnored Reason = "gitignored"
	// ReasonIgnoreUnreadable: the project has a .gitignore that could not be read safely
	// (a link, too large), so no file can be known not to be ignored.
	ReasonIgnoreUnreadable Reason = "gitignore-unreadable"
	// ReasonDenied: the configured deny list matches the file.
	ReasonDenied Reason = "denied"
	// ReasonSymlink: the file or one of its folders is a symbolic link.
	ReasonSymlink Reason = "symlink"
	// ReasonNotRegular: the path is not a regular file (or changed while being read).
	ReasonNotRegular Reason = "not-regular-file"
	// ReasonNotFound: the file is no longer there.
	ReasonNotFound Reason = "not-found"
	// ReasonNoLine: the file has no such line.
	ReasonNoLine Reason = "no-such-line"
	// ReasonTooFar: the line lies beyond how far a snippet reads into a file.
	ReasonTooFar Reason = "line-too-far"
	// ReasonLineTooLong: the line is longer than the snippet bound (minified or generated code).
	ReasonLineTooLong Reason = "line-too-long"
	// ReasonBinary: the line holds a NUL byte; the file is not text.
	ReasonBinary Reason = "binary"
	// ReasonUnreadable: the file could not be read.
	ReasonUnreadable Reason = "unreadable"
)

// SnippetLine is one source line.
type SnippetLine struct {
	// Number is 1-based.
	Number int
	// Text is the line without its line ending, redacted and bounded.
	Text string
}

// Snippet is the source line a location points at, with up to one line either side, or the
// reason it is not shown.
type Snippet struct {
	// File is the location's file, relative to the project root.
	File string
	// Line is the location's line.
	Line int
	// Lines are in file order; empty when refused. A neighbouring line that is too long or not
	// text is left out; the location's own line is always present when not refused.
	Lines []SnippetLine
	// Refused is empty when the snippet was read.
	Refused Reason
}

// OK reports whether the snippet was read.
func (s Snippet) OK() bool { return s.Refused == "" }

// Snippet reads the source line loc points at, and around (0 or 1) lines either side. It
// reads only indexed project files that neither the project's .gitignore nor the deny list
// excludes and that are not secrets, through an os.Root, refusing symbolic links anywhere on
// the path and any file that is not the regular file it was when checked. Every line goes
// through redact before it is returned; a nil redact refuses.
func (p *Project) Snippet(loc Location, around int, redact func(string) string) Snippet {
	s := Snippet{File: loc.File, Line: loc.Line}
	refuse := func(r Reason) Snippet {
		s.Refused = r
		return s
	}
	rel := loc.File
	switch {
	case redact == nil:
		return refuse(ReasonNoRedactor)
	case rel == "" || rel == "." || !fs.ValidPath(rel) || strings.ContainsAny(rel, "\\\x00"):
		return refuse(ReasonNotInProject)
	case isSecretPath(rel):
		return refuse(ReasonSecret)
	case p.gitignoreBad:
		return refuse(ReasonIgnoreUnreadable)
	case p.gitignore.ignored(rel):
		return refuse(ReasonIgnored)
	case p.deny.ignored(rel):
		return refuse(ReasonDenied)
	case !p.ix.has(rel):
		return refuse(ReasonNotInProject)
	case loc.Line <= 0:
		return refuse(ReasonNoLine)
	}
	around = max(0, min(around, maxAround))
	lines, reason := p.readLines(rel, loc.Line-around, loc.Line+around, loc.Line)
	if reason != "" {
		return refuse(reason)
	}
	for i := range lines {
		lines[i].Text = boundLine(redact(lines[i].Text), p.maxLine)
	}
	s.Lines = lines
	return s
}

// readLines reads lines from..to (1-based, inclusive) of rel; target must be among them.
func (p *Project) readLines(rel string, from, to, target int) ([]SnippetLine, Reason) {
	root, err := os.OpenRoot(p.dir)
	if err != nil {
		return nil, ReasonUnreadable
	}
	defer root.Close()
	info, reason := lstatPath(root, rel)
	if reason != "" {
		return nil, reason
	}
	f, err := openSame(root, rel, info)
	if err != nil {
		if errors.Is(err, errNotSame) {
			return nil, ReasonNotRegular
		}
		return nil, ReasonUnreadable
	}
	defer f.Close()

	r := bufio.NewReaderSize(io.LimitReader(f, maxSnippetScanBytes), max(p.maxLine+2, 64))
	var out []SnippetLine
	for n := 1; n <= to; n++ {
		line, long, err := readLine(r)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil, ReasonUnreadable
		}
		if eof && n <= target {
			// The reader ended at or before the line: the scan bound cut it, or the file ends.
			if info, err := f.Stat(); err == nil && info.Size() > maxSnippetScanBytes {
				return nil, ReasonTooFar
			}
		}
		if eof && len(line) == 0 && !long {
			if n > target {
				break
			}
			return nil, ReasonNoLine
		}
		if n >= from {
			nul := bytes.IndexByte(line, 0) >= 0
			switch {
			case n == target && long:
				return nil, ReasonLineTooLong
			case n == target && nul:
				return nil, ReasonBinary
			case !long && !nul:
				out = append(out, SnippetLine{Number: n, Text: string(line)})
			}
		}
		if eof {
			if n < target {
				return nil, ReasonNoLine
			}
			break
		}
	}
	return out, ""
}

// readLine reads one line without its ending. A line longer than the reader's buffer is
// consumed to its end and reported long, with no content.
func readLine(r *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = true
			continue
		case long:
			return nil, true, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(chunk, []byte("\n")), []byte("\r"))
		return append([]byte(nil), line...), false, err
	}
}

// lstatPath checks every element of rel without following links: a link anywhere on the path
// is refused, even one that stays inside the project (os.Root would follow those).
func lstatPath(root *os.Root, rel string) (fs.FileInfo, Reason) {
	var info fs.FileInfo
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			continue
		}
		var err error
		info, err = root.Lstat(rel[:i])
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, ReasonNotFound
		case err != nil:
			return nil, ReasonUnreadable
		case info.Mode()&fs.ModeSymlink != 0:
			return nil, ReasonSymlink
		case i < len(rel) && !info.IsDir():
			return nil, ReasonNotRegular
		}
	}
	if !info.Mode().IsRegular() {
		return nil, ReasonNotRegular
	}
	return info, ""
}

// errNotSame: the file opened is not the regular file that was checked.
var errNotSame = errors.New("file changed between check and open")

// openSame opens rel through root, non-blocking (a FIFO swapped in cannot stall the read), and
// checks it is the very regular file info describes.
func openSame(root *os.Root, rel string, info fs.FileInfo) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(got, info) {
		f.Close()
		return nil, errNotSame
	}
	return f, nil
}

// boundLine makes a line safe to show after redaction: valid UTF-8, no control characters but
// tabs, at most max bytes (cut at a rune boundary, marked with "…").
func boundLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r != '\t' && unicode.IsControl(r) {
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
