package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseMakefile(t *testing.T) {
	makefile := strings.Join([]string{
		"# Build and test.",
		"SHELL := bash",
		"VERSION ?= dev",
		"CFLAGS += -O2",
		"GOFLAGS = -trimpath",
		"EXPORTED ::= x",
		"export PATH := $(PATH):bin",
		".PHONY: build test lint",
		".DEFAULT_GOAL := build",
		"",
		"build: ## Build the binary.",
		"\tgo build ./...",
		"test: build ## Run the tests.",
		"\tgo test ./...",
		"lint fmt: # a plain comment is not a description",
		"\tstaticcheck ./...",
		"%.o: %.c",
		"\tcc -c $<",
		"bin/runlens: $(SOURCES)",
		"$(OUTPUTS): deps",
		"clean::",
		"\trm -rf bin",
		"check: VERBOSE = 1",
		"test: more-deps",
		"define RECIPE",
		"inside-define: x",
		"endef",
		"ifeq ($(OS),Windows_NT)",
		"endif",
	}, "\n")
	got := parseMakefile([]byte(makefile))
	var paths []string
	for _, c := range got {
		paths = append(paths, c.Path)
		if c.Origin != OriginMakefile || !slices.Equal(c.Argv, []string{"make", strings.TrimPrefix(c.Path, "make ")}) {
			t.Errorf("%s: argv %q origin %q", c.Path, c.Argv, c.Origin)
		}
	}
	want := []string{"make build", "make test", "make lint", "make fmt", "make clean", "make check"}
	if !slices.Equal(paths, want) {
		t.Fatalf("targets = %q, want %q", paths, want)
	}
	descs := map[string]string{}
	for _, c := range got {
		descs[c.Path] = c.Description
	}
	if descs["make build"] != "Build the binary." || descs["make test"] != "Run the tests." {
		t.Errorf("## comments not used as descriptions: %q", descs)
	}
	if descs["make lint"] != "Makefile target lint." || descs["make fmt"] != "Makefile target fmt." {
		t.Errorf("targets sharing a line got %q and %q", descs["make lint"], descs["make fmt"])
	}
}

func TestParseMakefileIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range maxDiscovered + 50 {
		b.WriteString("target" + strconv.Itoa(i) + ":\n")
	}
	if got := parseMakefile([]byte(b.String())); len(got) != maxDiscovered {
		t.Errorf("got %d targets, want the bound %d", len(got), maxDiscovered)
	}
}

func TestDiscoverMakefileFindsTheFileMakeWouldRead(t *testing.T) {
	root := t.TempDir()
	if cmds, err := DiscoverMakefile(root); err != nil || cmds != nil {
		t.Fatalf("no Makefile: got %v, %v; want nothing and no error", cmds, err)
	}
	writeProjectFile(t, root, "Makefile", "from-makefile:\n")
	writeProjectFile(t, root, "GNUmakefile", "from-gnumakefile:\n")
	cmds, err := DiscoverMakefile(root)
	if err != nil || len(cmds) != 1 || cmds[0].Path != "make from-gnumakefile" {
		t.Errorf("got %+v, %v; want GNUmakefile's target, as make prefers it", cmds, err)
	}
}

func TestDiscoveryDoesNotFollowSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeProjectFile(t, outside, "Makefile", "secret-target:\n")
	if err := os.Symlink(filepath.Join(outside, "Makefile"), filepath.Join(root, "Makefile")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	cmds, err := DiscoverMakefile(root)
	if err == nil || len(cmds) != 0 {
		t.Errorf("got %+v, %v; want an error and no commands for a symlinked Makefile", cmds, err)
	}
}

func TestDiscoverPackageJSON(t *testing.T) {
	root := t.TempDir()
	if cmds, err := DiscoverPackageJSON(root); err != nil || cmds != nil {
		t.Fatalf("no package.json: got %v, %v; want nothing and no error", cmds, err)
	}
	writeProjectFile(t, root, "package.json", `{"name": "app", "scripts": {
		"test": "vitest", "build:prod": "vite build", "lint": "TOKEN=abc eslint .",
		"bad name": "x", "-flag": "y", "ünicode": "z"}}`)
	cmds, err := DiscoverPackageJSON(root)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range cmds {
		paths = append(paths, c.Path)
		if strings.Contains(c.Description, "TOKEN") || strings.Contains(c.Description, "eslint") {
			t.Errorf("%s description %q reveals the script text", c.Path, c.Description)
		}
	}
	if want := []string{"npm run build:prod", "npm run lint", "npm run test"}; !slices.Equal(paths, want) {
		t.Errorf("scripts = %q, want %q", paths, want)
	}
	if !slices.Equal(cmds[2].Argv, []string{"npm", "run", "test", "--"}) {
		t.Errorf("argv = %q, want npm run test -- so arguments reach the script", cmds[2].Argv)
	}
}

func TestDiscoverPackageJSONReportsInvalidJSON(t *testing.T) {
	root := t.TempDir()
	writeProjectFile(t, root, "package.json", `{"scripts": `)
	if _, err := DiscoverPackageJSON(root); err == nil {
		t.Error("invalid package.json gave no error")
	}
}

func writeProjectFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
