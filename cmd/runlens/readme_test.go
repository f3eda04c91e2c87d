package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/secretenv"
)

const (
	toolsBegin = "<!-- tools:begin -->"
	toolsEnd   = "<!-- tools:end -->"
)

// toolTable renders the README's tool table from the registry, so the README cannot drift from
// what tools/list serves.
func toolTable() string {
	var b strings.Builder
	b.WriteString("| tool | family | what it answers |\n|---|---|---|\n")
	for _, t := range gen.Tools {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", t.Name, t.Family, t.Description)
	}
	b.WriteString("\nCompact profile (`--profile compact`): ")
	var names []string
	for _, t := range gen.CompactTools {
		names = append(names, "`"+t.Name+"`")
	}
	b.WriteString(strings.Join(names, " and ") + " — the same operations behind one router, for a smaller tools/list.\n")
	return b.String()
}

func TestReadmeToolTableMatchesTheRegistry(t *testing.T) {
	const path = "../../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, toolsBegin), strings.Index(text, toolsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %s … %s markers", toolsBegin, toolsEnd)
	}
	want := text[:i+len(toolsBegin)] + "\n" + toolTable() + text[j:]
	if want == text {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("README.md's tool table is out of date with the registry: run UPDATE_GOLDEN=1 go test ./cmd/runlens")
}

// TestTheReadmeStaysShort keeps README.md a first page: how to use runlens on one's own app and a
// reference that links to docs/ for the long material. Growing past this means moving text to docs/.
func TestTheReadmeStaysShort(t *testing.T) {
	const maxLines = 200
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > maxLines {
		t.Errorf("README.md has %d lines, more than %d: move long material to docs/", n, maxLines)
	}
}

func TestEveryFileTheReadmeLinksToExists(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(data), -1)
	checked := 0
	for _, m := range links {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(target))); err != nil {
			t.Errorf("README.md links to %s, which does not exist", target)
		}
	}
	if checked == 0 {
		t.Fatal("README.md links to no file of the project; the links this test checks are gone")
	}
}

func TestEveryFileTheProjectDocsLinkToExists(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"BENCHMARKS.md"}
	for _, p := range pages {
		docs = append(docs, "docs/"+filepath.Base(p))
	}
	for _, want := range []string{"docs/commands.md", "docs/configuration.md", "docs/conventions.md", "docs/development.md",
		"docs/receivers.md", "docs/semantics.md", "docs/sources.md", "docs/telemetry.md"} {
		if !slices.Contains(docs, want) {
			t.Errorf("%s is gone; the README links to it", want)
		}
	}
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(data), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "..", filepath.Dir(doc), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
			}
		}
	}
}

// readmeCommand is one command line of a README code block.
type readmeCommand struct {
	line int    // in README.md
	text string // without a leading "$ " and a trailing comment
}

// commandBlockLangs are the fence labels of blocks whose lines are shell commands. An unlabeled
// block is one too when every line reads as a command.
var commandBlockLangs = []string{"sh", "bash", "shell", "console", "zsh"}

// commandLineRe is a line that reads as a command: optional VAR=value prefixes, then a program.
var commandLineRe = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:\./)?[a-z][a-z0-9._/-]*(?:\s|$)`)

// readmeCommands returns the command lines of README's fenced code blocks.
func readmeCommands(t *testing.T, readme []byte) []readmeCommand {
	t.Helper()
	var (
		out     []readmeCommand
		inBlock bool
		lang    string
		block   []readmeCommand
	)
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				inBlock, lang, block = true, strings.ToLower(strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))), nil
				continue
			}
			inBlock = false
			switch {
			case slices.Contains(commandBlockLangs, lang):
				out = append(out, block...)
			case lang == "" && len(block) > 0 && !slices.ContainsFunc(block, func(c readmeCommand) bool { return !commandLineRe.MatchString(c.text) }):
				out = append(out, block...)
			}
			continue
		}
		if !inBlock {
			continue
		}
		text := strings.TrimPrefix(trimmed, "$ ")
		if i := regexp.MustCompile(`\s+#`).FindStringIndex(text); i != nil {
			text = text[:i[0]]
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		// A line ending in a backslash goes on on the next one.
		if len(block) > 0 && strings.HasSuffix(block[len(block)-1].text, `\`) {
			last := &block[len(block)-1]
			last.text = strings.TrimSpace(strings.TrimSuffix(last.text, `\`)) + " " + text
			continue
		}
		block = append(block, readmeCommand{line: n, text: text})
	}
	if inBlock {
		t.Fatal("README.md ends inside a code block")
	}
	return out
}

// readmeCommandsRunHere are the README commands this test runs itself, in README order, in a
// fresh project folder: each with the exit status and a piece of output it must give.
var readmeCommandsRunHere = map[string]struct {
	code int
	want string
}{
	"runlens init":   {0, "added .runlens/ to .gitignore"},
	"runlens status": {1, "no receiver is running for the store .runlens/telemetry.db"},
	"runlens stop":   {0, "no receiver is running for the store .runlens/telemetry.db"},
	"runlens doctor": {0, "clients_registered"},
	"runlens --help": {0, "  init "},
}

// readmeCommandsExercisedElsewhere maps README commands that cannot run here (they need the
// network, real apps or minutes) to what exercises them: a test function of the module, or
// "make:TARGET" for a Makefile target, or ".ci/SCRIPT".
var readmeCommandsExercisedElsewhere = map[string]string{
	// Needs the network; make install builds and installs the same package from a clone.
	"go install github.com/runlens/runlens/cmd/runlens@latest": "make:install",
	// Real apps export with exactly these variables, over HTTP and over gRPC; this test also
	// holds the addresses to the defaults.
	"export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318": "TestNodeCorpus",
	"export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf":         "TestNodeCorpus",
	"export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317": "TestNodeCorpus",
	"export OTEL_EXPORTER_OTLP_PROTOCOL=grpc":                  "TestNodeCorpus",
}

// TestEveryReadmeCommandIsExercised holds every command of README.md's code blocks to a test:
// run here against runlens in a temporary project, or mapped to the test, Makefile target or
// CI script that exercises it. A command added to the README without either fails here.
func TestEveryReadmeCommandIsExercised(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeCommands(t, readme)
	if len(commands) == 0 {
		t.Fatal("found no command in README.md's code blocks; the parser or the README changed")
	}

	// Hermetic: a fresh project, HOME and PATH of its own (with a runlens that resolves, so
	// the registration init writes passes the doctor), receivers on free ports nobody uses.
	project, home, bin := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "runlens"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, name := range []string{config.EnvProjectRoot, config.EnvTelemetry, config.EnvAspireDashboardPort} {
		t.Setenv(name, "")
	}
	t.Setenv(config.EnvReceiver, freeAddr(t))
	t.Setenv(config.EnvReceiverGRPC, freeAddr(t))

	seen := map[string]bool{}
	for _, c := range commands {
		seen[c.text] = true
		if want, ok := readmeCommandsRunHere[c.text]; ok {
			args := strings.Fields(c.text)
			var out, errOut bytes.Buffer
			code := run(args[1:], nil, &out, &errOut)
			if code != want.code || !strings.Contains(out.String(), want.want) {
				t.Errorf("README.md:%d: `%s` exited %d with:\n%s%s\nwant exit %d and output containing %q",
					c.line, c.text, code, out.String(), errOut.String(), want.code, want.want)
			}
			continue
		}
		by, ok := readmeCommandsExercisedElsewhere[c.text]
		if !ok {
			t.Errorf("README.md:%d: the command `%s` is exercised by no test. Run it in "+
				"TestEveryReadmeCommandIsExercised (readmeCommandsRunHere in cmd/runlens/readme_test.go) when it is "+
				"safe and offline, or add it to readmeCommandsExercisedElsewhere with the test function, make:TARGET or "+
				".ci script that exercises it", c.line, c.text)
			continue
		}
		if err := exercisedBy(root, by); err != nil {
			t.Errorf("README.md:%d: `%s` is said to be exercised by %s: %v", c.line, c.text, by, err)
		}
	}
	for _, table := range []map[string]bool{keys(readmeCommandsRunHere), keys(readmeCommandsExercisedElsewhere)} {
		for cmd := range table {
			if !seen[cmd] {
				t.Errorf("`%s` is no longer a README command; remove it from cmd/runlens/readme_test.go", cmd)
			}
		}
	}

	// The exporter settings name the receivers' default addresses.
	for _, addr := range []string{config.DefaultReceiverAddress, config.DefaultGRPCAddress} {
		if !seen["export OTEL_EXPORTER_OTLP_ENDPOINT=http://"+addr] {
			t.Errorf("README.md sets no OTEL_EXPORTER_OTLP_ENDPOINT for the default receiver address %s", addr)
		}
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// exercisedBy checks that what a README command is mapped to exists: a Makefile target, a CI
// script, or a test function of the module.
func exercisedBy(root, by string) error {
	switch {
	case strings.HasPrefix(by, "make:"):
		makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
		if err != nil {
			return err
		}
		target := strings.TrimPrefix(by, "make:")
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(makefile) {
			return fmt.Errorf("the Makefile has no target %s", target)
		}
		return nil
	case strings.HasPrefix(by, ".ci/"):
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(by)))
		if err != nil {
			return err
		}
		if info.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not executable", by)
		}
		return nil
	}
	decl := []byte("func " + by + "(")
	found := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = bytes.Contains(data, decl)
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no _test.go file of the module declares func %s", by)
	}
	return nil
}

// The commands page lists the default secretEnv patterns; it must list every one the code has.
func TestTheCommandsPageListsEveryDefaultSecretPattern(t *testing.T) {
	page, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range secretenv.DefaultPatterns() {
		if !bytes.Contains(page, []byte("`"+p+"`")) {
			t.Errorf("docs/commands.md does not list the default secretEnv pattern `%s`", p)
		}
	}
}
