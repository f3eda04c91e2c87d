// Package commands is the command catalog, the default-deny policy that decides what may run,
// and the executor that runs an allowed command without a shell, bounded in time and output.
// It knows nothing of MCP: internal/flows maps its types and errors onto the tool contracts.
package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Origin says where a catalog entry came from.
type Origin string

// Where catalog entries come from.
const (
	OriginConfig      Origin = "config"
	OriginMakefile    Origin = "makefile"
	OriginPackageJSON Origin = "package.json"
)

// Command is one catalog entry: the path an agent asks for and the argv that runs it.
type Command struct {
	// Path is the canonical command path: tokens separated by single spaces ("db migrate").
	Path string
	// Argv is the program and its fixed arguments; call arguments are appended.
	Argv        []string
	Description string
	Usage       string
	// Timeout is the entry's own timeout; zero when it declares none.
	Timeout time.Duration
	Origin  Origin
	// NoTelemetry: the entry opted out of having its telemetry pointed at runlens.
	NoTelemetry bool
}

// Catalog is an immutable, path-sorted set of commands with a fingerprint, so cursors over it
// fail closed when it changes.
type Catalog struct {
	cmds        []Command
	index       map[string]int
	fingerprint string
}

// ErrInvalidCatalog marks a declared command that cannot be in a catalog.
var ErrInvalidCatalog = errors.New("invalid command catalog")

// NewCatalog builds a catalog from the declared commands and the discovered ones. A declared
// path appearing twice, an empty argv or a malformed path is an error; a discovered command
// whose path is already declared is dropped, so configuration always wins over discovery.
func NewCatalog(declared, discovered []Command) (*Catalog, error) {
	c := &Catalog{index: map[string]int{}}
	for _, cmd := range declared {
		if err := checkCommand(cmd); err != nil {
			return nil, err
		}
		if _, dup := c.index[cmd.Path]; dup {
			return nil, fmt.Errorf("%w: command %q is declared twice", ErrInvalidCatalog, cmd.Path)
		}
		c.add(cmd)
	}
	for _, cmd := range discovered {
		if _, dup := c.index[cmd.Path]; dup || checkCommand(cmd) != nil {
			continue
		}
		c.add(cmd)
	}
	slices.SortFunc(c.cmds, func(a, b Command) int { return strings.Compare(a.Path, b.Path) })
	for i, cmd := range c.cmds {
		c.index[cmd.Path] = i
	}
	c.fingerprint = fingerprint(c.cmds)
	return c, nil
}

func (c *Catalog) add(cmd Command) {
	cmd.Argv = slices.Clone(cmd.Argv)
	c.index[cmd.Path] = len(c.cmds)
	c.cmds = append(c.cmds, cmd)
}

func checkCommand(cmd Command) error {
	tokens := splitPath(cmd.Path)
	if len(tokens) == 0 || strings.Join(tokens, " ") != cmd.Path {
		return fmt.Errorf("%w: path %q is not tokens separated by single spaces", ErrInvalidCatalog, cmd.Path)
	}
	for _, t := range tokens {
		if strings.HasPrefix(t, "-") || strings.ContainsFunc(t, isSpaceOrControl) {
			return fmt.Errorf("%w: path %q has a token that starts with - or holds a blank", ErrInvalidCatalog, cmd.Path)
		}
	}
	if len(cmd.Argv) == 0 || cmd.Argv[0] == "" {
		return fmt.Errorf("%w: command %q has no program to run", ErrInvalidCatalog, cmd.Path)
	}
	for _, a := range cmd.Argv {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("%w: command %q has an argument with a NUL byte", ErrInvalidCatalog, cmd.Path)
		}
	}
	return nil
}

// Commands returns the commands sorted by path. The slice is a copy.
func (c *Catalog) Commands() []Command {
	return slices.Clone(c.cmds)
}

// Len is the number of commands.
func (c *Catalog) Len() int { return len(c.cmds) }

// Lookup finds a command by its canonical path.
func (c *Catalog) Lookup(path string) (Command, bool) {
	i, ok := c.index[path]
	if !ok {
		return Command{}, false
	}
	return c.cmds[i], true
}

// Fingerprint identifies the catalog's content; it changes whenever a command is added,
// removed or altered.
func (c *Catalog) Fingerprint() string { return c.fingerprint }

func fingerprint(cmds []Command) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, cmd := range cmds {
		_ = enc.Encode(cmd) // hashing cannot fail to write
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// splitPath splits a command path on ASCII spaces only. Any other character, including tabs,
// no-break spaces and other Unicode blanks, stays inside a token, so a look-alike path never
// normalizes into a catalog path.
func splitPath(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == ' ' })
}

// canonicalPath is the catalog form of a requested path: its tokens joined by single spaces.
func canonicalPath(path string) string {
	return strings.Join(splitPath(path), " ")
}

func isSpaceOrControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r == ' '
}
