package docs

import (
	"bytes"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestFrontMatter(t *testing.T) {
	tests := []struct {
		name, src          string
		title, description string
		body               string
	}{
		{"plain values", "---\ntitle: Setup\ndescription: How to set up.\n---\n# Body\n", "Setup", "How to set up.", "# Body\n"},
		{"double quotes with escapes", "---\ntitle: \"Say \\\"hi\\\"\"\n---\nx", `Say "hi"`, "", "x"},
		{"single quotes", "---\ntitle: 'It''s here'\n---\nx", "It's here", "", "x"},
		{"a trailing comment on a plain value", "---\ntitle: Setup # draft\n---\nx", "Setup", "", "x"},
		{"a folded block scalar", "---\ndescription: >\n  one\n  two\ntitle: T\n---\nx", "T", "one two", "x"},
		{"other keys and nesting are ignored", "---\ntags:\n  - a\ntitle: T\nauthor: me\n---\nx", "T", "", "x"},
		{"CRLF line endings", "---\r\ntitle: T\r\n---\r\nx", "T", "", "x"},
		{"a byte order mark before the fence", "\uFEFF---\ntitle: T\n---\nx", "T", "", "x"},
		{"the YAML document end marker closes it", "---\ntitle: T\n...\nx", "T", "", "x"},
		{"an unclosed fence is not front matter", "---\ntitle: T\n\nx", "", "", "---\ntitle: T\n\nx"},
		{"a fence that is not on the first line is not front matter", "\n---\ntitle: T\n---\n", "", "", "\n---\ntitle: T\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body := splitFrontMatter([]byte(tt.src))
			if fm.title != tt.title || fm.description != tt.description || string(body) != tt.body {
				t.Fatalf("got {%q, %q} body %q; want {%q, %q} body %q", fm.title, fm.description, body, tt.title, tt.description, tt.body)
			}
		})
	}
}

func TestParseSections(t *testing.T) {
	src := strings.Join([]string{
		"Intro paragraph.",
		"",
		"# Hello, World!",
		"",
		"## C++ & Go",
		"",
		"```md",
		"# not a heading",
		"## nor this",
		"```",
		"",
		"    # indented code, not a heading",
		"",
		"> # quoted heading stays inside its quote",
		"",
		"## Über *uns*",
		"",
		"Setext two",
		"----------",
		"",
		"## Hello, World!",
		"",
	}, "\n")
	d, body, _ := parseDocument("x.md", []byte(src))
	var got []string
	for _, s := range d.sections {
		got = append(got, s.slug)
	}
	want := []string{"hello-world", "c--go", "über-uns", "setext-two", "hello-world-1"}
	if !slices.Equal(got, want) {
		t.Fatalf("section slugs = %q, want %q", got, want)
	}
	if d.title != "Hello, World!" {
		t.Errorf("title = %q, want the first H1", d.title)
	}
	if d.description != "Intro paragraph." {
		t.Errorf("description = %q", d.description)
	}
	h1 := d.sections[0]
	if h1.start != strings.Index(src, "# Hello") || h1.end != len(body) {
		t.Errorf("the H1 spans [%d, %d), want the rest of the document", h1.start, h1.end)
	}
	cpp := d.sections[1]
	if got := string(body[cpp.start:cpp.end]); !strings.HasPrefix(got, "## C++ & Go") || !strings.HasSuffix(got, "its quote\n\n") {
		t.Errorf("section c--go = %q", got)
	}
	setext := d.sections[3]
	if got := string(body[setext.start:setext.end]); !strings.HasPrefix(got, "Setext two\n---") {
		t.Errorf("setext section starts %q", got)
	}
	if !strings.Contains(d.text, "# not a heading") || !strings.Contains(d.text, "quoted heading") {
		t.Errorf("code and quotes are missing from the searchable text: %q", d.text)
	}
}

func TestParseInlineMarkupIsNotText(t *testing.T) {
	d, _, _ := parseDocument("x.md", []byte("# The **bold** [link](https://example.com/path) `code` <span>html</span>\n"))
	if d.title != "The bold link code html" {
		t.Fatalf("title = %q", d.title)
	}
}

func TestParseBoundsTitleAndDescription(t *testing.T) {
	long := strings.Repeat("word ", 100)
	d, _, _ := parseDocument("x.md", []byte("# "+long+"\n\n"+long+"\n"))
	for name, v := range map[string]string{"title": d.title, "description": d.description} {
		if n := utf8.RuneCountInString(v); n > maxTitleRunes+1 || !strings.HasSuffix(v, "word…") {
			t.Errorf("%s has %d runes and ends %q", name, n, v[max(0, len(v)-10):])
		}
	}
}

func TestFileTitle(t *testing.T) {
	tests := map[string]string{
		"setup.md":          "setup",
		"guides/install.md": "install",
		"guides/index.md":   "guides",
		"guides/README.md":  "guides",
		"index.md":          "index",
		"a/b/c/readme.md":   "c",
	}
	for name, want := range tests {
		if got := fileTitle(name); got != want {
			t.Errorf("fileTitle(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"cut at a word boundary please", 12, "cut at a…"},
		{"ünïcödé wörds everywhere", 9, "ünïcödé…"},
		{"averyveryverylongword", 5, "avery…"},
	}
	for _, tt := range tests {
		if got := clip(tt.in, tt.n); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// pathological are inputs the Markdown parser once spent quadratic (or worse) time on: 400 KB of
// "[x](" took 87 s, of "+ " more than an hour.
var pathological = []string{
	"[x](", "![](", "[](", "[x](<", "[x](< ", "[x](<\\>", "[x](()", "[x](\n", "[x](a \"\n", "[x]\n",
	"[x][\n", "[^", "[", "`", "*", "|", "|a|b|\n", ">", "> ", " >", "+ ", "1. ", "1) ", "- > ",
	"* > 1. ", "=\n", "#\n", "a\n=\n", "- [a](#a)\n  ",
}

// Parsing grows linearly: 400 KB of any pathological pattern parses in well under a second, and
// at most about 8 times as long as 50 KB of it.
func TestPathologicalMarkdownParsesInLinearTime(t *testing.T) {
	for _, p := range pathological {
		t.Run(strings.ToValidUTF8(p, "?"), func(t *testing.T) {
			// The fastest of a few parses of each size: a busy machine (or the race detector)
			// slows a run, never speeds one up. Eight times the input takes eight times as long
			// when the parse is linear and 64 times when it is quadratic: the bound sits between.
			timeOf := func(n, runs int) time.Duration {
				src := []byte(strings.Repeat(p, n/len(p)))
				best := time.Duration(math.MaxInt64)
				for range runs {
					start := time.Now()
					parseDocument("p.md", src)
					best = min(best, time.Since(start))
				}
				return best
			}
			small, large := timeOf(25<<10, 3), timeOf(200<<10, 2)
			if large > 20*small+100*time.Millisecond {
				t.Fatalf("25 KB took %v, 200 KB %v: not linear", small, large)
			}
		})
	}
}

// The parser reads ordinary documents exactly as written.
func TestTameLeavesOrdinaryMarkdownAlone(t *testing.T) {
	err := filepath.WalkDir(filepath.Join("testdata", "corpus"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if got := tame(src); !bytes.Equal(got, src) {
			t.Errorf("%s changed", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := "# Title\n\n> quoted > text\n\n- a\n  - b\n    1. c\n\n[link](https://x.test/a_(b)) and [angle](<a b>)\n"
	if got := tame([]byte(doc)); string(got) != doc {
		t.Errorf("tame changed an ordinary document:\n%s", got)
	}
}

// What the parser is kept from seeing is blanked in place, so every offset still points into the
// body: sections of a pathological document still start at their headings.
func TestTameKeepsOffsets(t *testing.T) {
	body := "# One\n\n" + strings.Repeat("[x](", 1000) + "\n\n" + strings.Repeat("> ", 100) + "deep\n\n## Two\n\ntext\n"
	tamed := tame([]byte(body))
	if len(tamed) != len(body) || bytes.Count(tamed, []byte("\n")) != strings.Count(body, "\n") {
		t.Fatal("tame changed the length or the lines")
	}
	d, got, _ := parseDocument("p.md", []byte(body))
	if len(d.sections) != 2 || !strings.HasPrefix(string(got[d.sections[1].start:]), "## Two") {
		t.Fatalf("sections = %+v", d.sections)
	}
	if !strings.Contains(d.text, "deep") {
		t.Errorf("text lost the quoted word: %.200q", d.text)
	}
}
