package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runlens/runlens/internal/golden"
	"golang.org/x/tools/txtar"
)

// Transcripts live in testdata/*.txtar. The comment holds "key: value" settings (pagesize,
// workers, drain, cancelled); the "client" section holds the lines sent, one per line, and
// directives starting with "!"; the "server" section holds the exact lines expected in order,
// or, named "server (any order)", as a set. ${BIG} stands for the 5 MiB payload of the big tool.
//
// Directives: "!long N" sends a line of N bytes that is not JSON; "!noeol LINE" sends LINE
// without a trailing newline; "!nest N LINE" sends LINE with @@ replaced by N nested empty
// arrays; "!bytes LINE" sends LINE with each \xHH replaced by that byte (for invalid UTF-8);
// "!wait-started" waits until a slow call runs; "!wait-output N" waits until the server wrote
// N lines; "!release" lets one slow call finish.
//
// Every line the server writes must be valid UTF-8, whatever the client sent.
//
// UPDATE_GOLDEN=1 rewrites the server sections with what the server wrote.

const waitDeadline = 10 * time.Second

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts found: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

type transcript struct {
	settings map[string]string
	client   []string
	server   []string
	anyOrder bool
	archive  *txtar.Archive
	section  int // index of the server section in archive.Files
}

func loadTranscript(t *testing.T, file string) *transcript {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	tr := &transcript{settings: map[string]string{}, archive: ar, section: -1}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			tr.settings[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	for i, f := range ar.Files {
		switch f.Name {
		case "client":
			tr.client = splitLines(string(f.Data))
		case "server", "server (any order)":
			tr.server = splitLines(string(f.Data))
			tr.anyOrder = f.Name != "server"
			tr.section = i
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
	}
	if tr.client == nil || tr.section < 0 {
		t.Fatalf("%s: needs a client and a server section", file)
	}
	return tr
}

func splitLines(s string) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func (tr *transcript) intSetting(t *testing.T, key string) int {
	v, ok := tr.settings[key]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("setting %s: %v", key, err)
	}
	return n
}

func runTranscript(t *testing.T, file string) {
	tr := loadTranscript(t, file)
	h := newFakeHandler()
	opts := testOptions()
	opts.PageSize = tr.intSetting(t, "pagesize")
	opts.Workers = tr.intSetting(t, "workers")
	if d, ok := tr.settings["drain"]; ok {
		var err error
		if opts.DrainTimeout, err = time.ParseDuration(d); err != nil {
			t.Fatalf("setting drain: %v", err)
		}
	}
	srv := NewServer(h, opts)

	in, feed := io.Pipe()
	out := newFrameRecorder()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), in, out) }()

	for _, line := range tr.client {
		directive, arg, _ := strings.Cut(line, " ")
		var err error
		switch directive {
		case "!long":
			n, _ := strconv.Atoi(arg)
			err = writeLong(feed, n)
		case "!noeol":
			_, err = io.WriteString(feed, arg)
		case "!nest":
			n, template, _ := strings.Cut(arg, " ")
			depth, _ := strconv.Atoi(n)
			nested := strings.Repeat("[", depth) + strings.Repeat("]", depth)
			_, err = io.WriteString(feed, strings.Replace(template, "@@", nested, 1)+"\n")
		case "!bytes":
			_, err = feed.Write(append(hexEscapes(t, arg), '\n'))
		case "!wait-started":
			select {
			case <-h.started:
			case <-time.After(waitDeadline):
				t.Fatalf("no slow call started within %s", waitDeadline)
			}
		case "!wait-output":
			n, _ := strconv.Atoi(arg)
			if !out.waitLines(n, waitDeadline) {
				t.Fatalf("the server wrote fewer than %d lines within %s:\n%s", n, waitDeadline, clip(out.String()))
			}
		case "!release":
			h.release <- struct{}{}
		default:
			_, err = io.WriteString(feed, line+"\n")
		}
		if err != nil {
			t.Fatalf("send %q: %v", clip(line), err)
		}
	}
	feed.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve returned %v, want nil on EOF", err)
		}
	case <-time.After(waitDeadline):
		t.Fatalf("Serve did not return within %s of EOF", waitDeadline)
	}

	if bad := out.splitFrames(); bad != "" {
		t.Errorf("a write was not exactly one whole frame: %q", clip(bad))
	}
	for i, line := range splitLines(out.String()) {
		if !utf8.ValidString(line) {
			t.Errorf("server line %d is not valid UTF-8: %q", i+1, clip(line))
		}
	}
	got := splitLines(strings.ReplaceAll(out.String(), bigText, "${BIG}"))
	if tr.anyOrder {
		slices.Sort(got)
		slices.Sort(tr.server)
	}
	if golden.Updating() {
		tr.archive.Files[tr.section].Data = []byte(strings.Join(got, "\n") + "\n")
		if err := os.WriteFile(file, txtar.Format(tr.archive), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff := lineDiff(tr.server, got); diff != "" {
		t.Errorf("server lines differ (-want +got):\n%s", diff)
	}
	if want, ok := tr.settings["cancelled"]; ok {
		if got := fmt.Sprint(h.cancelled.Load()); got != want {
			t.Errorf("slow calls that saw cancellation = %s, want %s", got, want)
		}
	}
}

func testOptions() Options {
	return Options{
		Name: "runlens-test", Title: "Runlens Test", Version: "0.0.1",
		Instructions: "Start with echo.",
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// writeLong sends a line of n bytes of 'x' without holding it in memory at once.
func writeLong(w io.Writer, n int) error {
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// hexEscapes returns s with every \xHH replaced by the byte it names; other text, including
// JSON's own escapes, is kept as written.
func hexEscapes(t *testing.T, s string) []byte {
	t.Helper()
	var out []byte
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], `\x`) && i+4 <= len(s) {
			b, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				t.Fatalf("bad escape in %q: %v", s, err)
			}
			out = append(out, byte(b))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func lineDiff(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, clip(w), clip(g))
		}
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// frameRecorder records every Write of the server, so a test can check that each one is a
// whole frame, and lets a test wait for a number of lines.
type frameRecorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes [][]byte
	lines  int
	grew   chan struct{}
}

func newFrameRecorder() *frameRecorder { return &frameRecorder{grew: make(chan struct{})} }

func (r *frameRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.Write(p)
	r.writes = append(r.writes, bytes.Clone(p))
	r.lines += bytes.Count(p, []byte("\n"))
	close(r.grew)
	r.grew = make(chan struct{})
	return len(p), nil
}

func (r *frameRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// waitLines waits until at least n lines were written.
func (r *frameRecorder) waitLines(n int, d time.Duration) bool {
	deadline := time.After(d)
	for {
		r.mu.Lock()
		lines, grew := r.lines, r.grew
		r.mu.Unlock()
		if lines >= n {
			return true
		}
		select {
		case <-grew:
		case <-deadline:
			return false
		}
	}
}

// splitFrames returns the first write that is not exactly one newline-terminated frame.
func (r *frameRecorder) splitFrames() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.writes {
		if bytes.Count(w, []byte("\n")) != 1 || w[len(w)-1] != '\n' {
			return string(w)
		}
	}
	return ""
}
