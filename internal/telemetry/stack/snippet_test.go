package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// redactToken stands in for the server's redactor: it hides one known secret.
func redactToken(s string) string { return strings.ReplaceAll(s, "sk_live_123", "[REDACTED]") }

const checkoutTS = "export function applyDiscount(cart) {\n" +
	"  const key = 'sk_live_123';\n" +
	"  return cart.total * cart.discount.pct;\n" +
	"}\n"

func snippetProject(t *testing.T, extra map[string]string, opts Options) (*Project, string) {
	t.Helper()
	files := map[string]string{
		"src/cart/checkout.ts":    checkoutTS,
		"src/crlf.ts":             "a\r\nb\r\nc\r\n",
		".gitignore":              "# build output\ngenerated/\n*.gen.go\n!keep.gen.go\n!.env\n",
		"generated/api.ts":        "x\n",
		"internal/x.gen.go":       "x\n",
		"internal/keep.gen.go":    "kept\n",
		"internal/secret/a.go":    "x\n",
		"node_modules/lib/a.js":   "x\n",
		".env":                    "TOKEN=1\n",
		".env.local":              "TOKEN=1\n",
		"config/deploy.pem":       "x\n",
		"config/server.key":       "x\n",
		"id_rsa":                  "x\n",
		"id_ed25519.pub":          "x\n",
		".npmrc":                  "x\n",
		".netrc":                  "x\n",
		"config/credentials.json": "x\n",
		".aws/config":             "x\n",
		"src/long.ts":             "short\n" + strings.Repeat("x", 1000) + "\nshort\n",
		"src/bin.ts":              "a\nb\x00c\nd\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	dir := writeProject(t, files)
	return openProject(t, dir, opts), dir
}

func TestSnippetReadsTheLineAndItsNeighboursRedacted(t *testing.T) {
	p, _ := snippetProject(t, nil, Options{})
	cases := []struct {
		name   string
		loc    Location
		around int
		want   []string
	}{
		{"the line alone", Location{File: "src/cart/checkout.ts", Line: 3}, 0, []string{"3:  return cart.total * cart.discount.pct;"}},
		{"one line either side, redacted", Location{File: "src/cart/checkout.ts", Line: 3}, 1, []string{"2:  const key = '[REDACTED]';", "3:  return cart.total * cart.discount.pct;", "4:}"}},
		{"more than one line either side is clamped to one", Location{File: "src/cart/checkout.ts", Line: 1}, 5, []string{"1:export function applyDiscount(cart) {", "2:  const key = '[REDACTED]';"}},
		{"the last line has no neighbour after it", Location{File: "src/cart/checkout.ts", Line: 4}, 1, []string{"3:  return cart.total * cart.discount.pct;", "4:}"}},
		{"carriage returns are not part of a line", Location{File: "src/crlf.ts", Line: 2}, 1, []string{"1:a", "2:b", "3:c"}},
		{"a negated ignore rule lets a file be read", Location{File: "internal/keep.gen.go", Line: 1}, 0, []string{"1:kept"}},
		{"a neighbouring line too long to show is left out", Location{File: "src/long.ts", Line: 1}, 1, []string{"1:short"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := p.Snippet(tc.loc, tc.around, redactToken)
			if !s.OK() {
				t.Fatalf("refused: %s", s.Refused)
			}
			var got []string
			for _, l := range s.Lines {
				got = append(got, fmt.Sprintf("%d:%s", l.Number, l.Text))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("lines = %q, want %q", got, tc.want)
			}
			if s.File != tc.loc.File || s.Line != tc.loc.Line {
				t.Errorf("snippet names %s:%d, want %s:%d", s.File, s.Line, tc.loc.File, tc.loc.Line)
			}
		})
	}
}

func TestSnippetRefusals(t *testing.T) {
	p, _ := snippetProject(t, nil, Options{Deny: []string{"internal/secret/**"}})
	cases := []struct {
		name   string
		file   string
		line   int
		redact func(string) string
		want   Reason
	}{
		{".env is a secret even when the .gitignore re-includes it", ".env", 1, redactToken, ReasonSecret},
		{".env.local is a secret", ".env.local", 1, redactToken, ReasonSecret},
		{"a .pem file is a secret", "config/deploy.pem", 1, redactToken, ReasonSecret},
		{"a .key file is a secret", "config/server.key", 1, redactToken, ReasonSecret},
		{"an ssh private key is a secret", "id_rsa", 1, redactToken, ReasonSecret},
		{"an ssh public key file is refused with the private ones", "id_ed25519.pub", 1, redactToken, ReasonSecret},
		{".npmrc is a secret", ".npmrc", 1, redactToken, ReasonSecret},
		{".netrc is a secret", ".netrc", 1, redactToken, ReasonSecret},
		{"a credentials file is a secret", "config/credentials.json", 1, redactToken, ReasonSecret},
		{"anything under .aws is a secret", ".aws/config", 1, redactToken, ReasonSecret},
		{"a file in an ignored folder is refused", "generated/api.ts", 1, redactToken, ReasonIgnored},
		{"a file matching an ignored pattern is refused", "internal/x.gen.go", 1, redactToken, ReasonIgnored},
		{"a file on the deny list is refused", "internal/secret/a.go", 1, redactToken, ReasonDenied},
		{"a dependency file is not in the project", "node_modules/lib/a.js", 1, redactToken, ReasonNotInProject},
		{"a path climbing out of the project is refused", "../etc/passwd", 1, redactToken, ReasonNotInProject},
		{"an absolute path is refused", "/etc/passwd", 1, redactToken, ReasonNotInProject},
		{"a Windows path is refused", `src\cart\checkout.ts`, 1, redactToken, ReasonNotInProject},
		{"a file the index does not hold is refused", "src/missing.ts", 1, redactToken, ReasonNotInProject},
		{"line zero is no line", "src/cart/checkout.ts", 0, redactToken, ReasonNoLine},
		{"a line past the end is no line", "src/cart/checkout.ts", 9, redactToken, ReasonNoLine},
		{"an oversized line is refused", "src/long.ts", 2, redactToken, ReasonLineTooLong},
		{"a line holding a NUL byte is refused as binary", "src/bin.ts", 2, redactToken, ReasonBinary},
		{"no redactor, no snippet", "src/cart/checkout.ts", 1, nil, ReasonNoRedactor},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := p.Snippet(Location{File: tc.file, Line: tc.line}, 1, tc.redact)
			if s.Refused != tc.want || len(s.Lines) != 0 {
				t.Fatalf("snippet = %+v, want refused with %q and no lines", s, tc.want)
			}
		})
	}
}

func TestSnippetRefusesLinksSwappedInAfterIndexing(t *testing.T) {
	outside := writeProject(t, map[string]string{"checkout.ts": "stolen\n", "cart/checkout.ts": "stolen\n"})
	cases := []struct {
		name string
		swap func(dir string) error
		want Reason
	}{
		{"a file replaced by a link out of the project", func(dir string) error {
			f := filepath.Join(dir, "src", "cart", "checkout.ts")
			if err := os.Remove(f); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(outside, "checkout.ts"), f)
		}, ReasonSymlink},
		{"a folder replaced by a link out of the project", func(dir string) error {
			d := filepath.Join(dir, "src", "cart")
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(outside, "cart"), d)
		}, ReasonSymlink},
		{"a file replaced by another file", func(dir string) error {
			f := filepath.Join(dir, "src", "cart", "checkout.ts")
			if err := os.Remove(f); err != nil {
				return err
			}
			return os.Mkdir(f, 0o755)
		}, ReasonNotRegular},
		{"a file removed", func(dir string) error {
			return os.Remove(filepath.Join(dir, "src", "cart", "checkout.ts"))
		}, ReasonNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			p, dir := snippetProject(t, nil, Options{})
			if err := tc.swap(dir); err != nil {
				t.Fatal(err)
			}
			s := p.Snippet(Location{File: "src/cart/checkout.ts", Line: 1}, 0, redactToken)
			if s.Refused != tc.want {
				t.Fatalf("snippet = %+v, want refused with %q", s, tc.want)
			}
		})
	}
	t.Run("a link present when indexing is not in the project", func(t *testing.T) {
		_, dir := snippetProject(t, nil, Options{})
		if err := os.Symlink(filepath.Join(outside, "checkout.ts"), filepath.Join(dir, "src", "link.ts")); err != nil {
			t.Fatal(err)
		}
		p := openProject(t, dir, Options{})
		if s := p.Snippet(Location{File: "src/link.ts", Line: 1}, 0, redactToken); s.Refused != ReasonNotInProject {
			t.Fatalf("snippet = %+v, want refused as not in the project", s)
		}
	})
}

func TestSnippetRefusesEverythingWhenTheGitignoreCannotBeRead(t *testing.T) {
	dir := writeProject(t, map[string]string{"src/a.ts": "x\n", "rules": "src/\n"})
	if err := os.Symlink(filepath.Join(dir, "rules"), filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	p := openProject(t, dir, Options{})
	if s := p.Snippet(Location{File: "src/a.ts", Line: 1}, 0, redactToken); s.Refused != ReasonIgnoreUnreadable {
		t.Fatalf("snippet = %+v, want refused: the ignore rules are unknown", s)
	}
}

func TestSnippetIsBoundedInBytes(t *testing.T) {
	t.Run("a redaction that lengthens a line is cut to the bound", func(t *testing.T) {
		p, _ := snippetProject(t, map[string]string{"src/a.ts": strings.Repeat("pw ", 90) + "\n"}, Options{MaxLineBytes: 300})
		s := p.Snippet(Location{File: "src/a.ts", Line: 1}, 0, func(s string) string { return strings.ReplaceAll(s, "pw", "[REDACTED]") })
		if !s.OK() || len(s.Lines) != 1 {
			t.Fatalf("snippet = %+v", s)
		}
		if text := s.Lines[0].Text; len(text) > 300+len("…") || !strings.HasSuffix(text, "…") || strings.Contains(text, "pw") {
			t.Fatalf("line = %q (%d bytes), want redacted and cut at 300 bytes", text, len(text))
		}
	})
	t.Run("a line beyond how far a snippet reads is refused", func(t *testing.T) {
		big := strings.Repeat(strings.Repeat("y", 99)+"\n", maxSnippetScanBytes/100+10) + "target\n"
		p, _ := snippetProject(t, map[string]string{"src/big.ts": big}, Options{})
		n := maxSnippetScanBytes/100 + 11
		if s := p.Snippet(Location{File: "src/big.ts", Line: n}, 0, redactToken); s.Refused != ReasonTooFar {
			t.Fatalf("snippet of line %d = %+v, want refused as too far", n, s)
		}
		if s := p.Snippet(Location{File: "src/big.ts", Line: 2}, 0, redactToken); !s.OK() {
			t.Fatalf("an early line of a big file was refused: %s", s.Refused)
		}
	})
	t.Run("control characters are not shown", func(t *testing.T) {
		p, _ := snippetProject(t, map[string]string{"src/esc.ts": "\tok\x1b[31m\n"}, Options{})
		s := p.Snippet(Location{File: "src/esc.ts", Line: 1}, 0, redactToken)
		if !s.OK() || s.Lines[0].Text != "\tok?[31m" {
			t.Fatalf("snippet = %+v, want the escape replaced and the tab kept", s)
		}
	})
}

func TestAProjectServesConcurrentCallers(t *testing.T) {
	p, _ := snippetProject(t, nil, Options{})
	trace := "Error: x\n    at applyDiscount (/app/src/cart/checkout.ts:3:7)\n"
	const workers = 8
	results := make(chan string, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := p.Resolve(trace)
			s := p.Snippet(*tr.Location, 1, redactToken)
			results <- tr.Location.String() + "|" + string(s.Refused) + "|" + fmt.Sprint(len(s.Lines))
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r != "src/cart/checkout.ts:3 in applyDiscount||3" {
			t.Errorf("a concurrent caller got %q", r)
		}
	}
}
