package commands

import (
	"errors"
	"testing"
	"time"
)

func TestNewCatalogRejectsMalformedDeclaredCommands(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
	}{
		{"an empty path", Command{Path: "", Argv: []string{"go"}}},
		{"a path with a double space", Command{Path: "db  migrate", Argv: []string{"go"}}},
		{"a path with a leading space", Command{Path: " test", Argv: []string{"go"}}},
		{"a path starting with a flag", Command{Path: "-x", Argv: []string{"go"}}},
		{"a path token with a tab", Command{Path: "db\tmigrate", Argv: []string{"go"}}},
		{"no argv", Command{Path: "test"}},
		{"an empty program", Command{Path: "test", Argv: []string{""}}},
		{"a NUL byte in argv", Command{Path: "test", Argv: []string{"go", "a\x00b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewCatalog([]Command{tt.cmd}, nil); !errors.Is(err, ErrInvalidCatalog) {
				t.Errorf("NewCatalog error = %v, want ErrInvalidCatalog", err)
			}
		})
	}
}

func TestNewCatalogRejectsADuplicateDeclaredPath(t *testing.T) {
	_, err := NewCatalog([]Command{{Path: "test", Argv: []string{"a"}}, {Path: "test", Argv: []string{"b"}}}, nil)
	if !errors.Is(err, ErrInvalidCatalog) {
		t.Errorf("error = %v, want ErrInvalidCatalog", err)
	}
}

func TestDeclaredCommandsWinOverDiscoveredOnes(t *testing.T) {
	c, err := NewCatalog(
		[]Command{{Path: "make test", Argv: []string{"go", "test", "./..."}, Origin: OriginConfig}},
		[]Command{
			{Path: "make test", Argv: []string{"make", "test"}, Origin: OriginMakefile},
			{Path: "make build", Argv: []string{"make", "build"}, Origin: OriginMakefile},
			{Path: "bad  path", Argv: []string{"x"}, Origin: OriginMakefile},
		})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.Lookup("make test")
	if got.Origin != OriginConfig {
		t.Errorf("make test comes from %s, want the configuration", got.Origin)
	}
	if c.Len() != 2 {
		t.Errorf("catalog has %d commands, want 2 (a malformed discovered one is dropped)", c.Len())
	}
	cmds := c.Commands()
	if cmds[0].Path != "make build" || cmds[1].Path != "make test" {
		t.Errorf("commands are not sorted by path: %q, %q", cmds[0].Path, cmds[1].Path)
	}
}

func TestTheFingerprintFollowsTheContent(t *testing.T) {
	base := []Command{{Path: "test", Argv: []string{"go", "test"}}, {Path: "build", Argv: []string{"go", "build"}}}
	fp := func(cmds []Command) string {
		t.Helper()
		c, err := NewCatalog(cmds, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Fingerprint()
	}
	reordered := []Command{base[1], base[0]}
	if fp(base) != fp(reordered) {
		t.Error("declaration order changed the fingerprint of the same catalog")
	}
	changes := map[string][]Command{
		"an added command":   append(append([]Command(nil), base...), Command{Path: "lint", Argv: []string{"x"}}),
		"a removed command":  base[:1],
		"a changed argv":     {{Path: "test", Argv: []string{"go", "test", "-race"}}, base[1]},
		"a changed timeout":  {{Path: "test", Argv: []string{"go", "test"}, Timeout: time.Second}, base[1]},
		"a changed describe": {{Path: "test", Argv: []string{"go", "test"}, Description: "x"}, base[1]},
	}
	for name, cmds := range changes {
		if fp(cmds) == fp(base) {
			t.Errorf("%s left the fingerprint unchanged", name)
		}
	}
}

func TestCatalogCopiesAreIndependent(t *testing.T) {
	argv := []string{"go", "test"}
	c, err := NewCatalog([]Command{{Path: "test", Argv: argv}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	argv[0] = "rm"
	cmds := c.Commands()
	cmds[0].Path = "changed"
	got, ok := c.Lookup("test")
	if !ok || got.Argv[0] != "go" {
		t.Errorf("catalog changed through a caller's slice: %+v", got)
	}
}
