package commands

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"pgregory.net/rapid"
)

// deniedCore is an invocation a deny rule of propertyFixture denies, in its plain spelling.
type deniedCore struct {
	path  string
	words []string // positional arguments the rule names
	flag  string   // without dashes
	value string   // "" for a rule flag without a value
	rule  string
}

var deniedCores = []deniedCore{
	{path: "db migrate", flag: "env", value: "prod", rule: "no-prod"},
	{path: "db migrate", flag: "drop", rule: "no-drop"},
	{path: "db", words: []string{"migrate"}, flag: "drop", rule: "no-drop"},
	{path: "db migrate", flag: "force", rule: "no-force"},
	{path: "db migrate", flag: "yes-really", rule: "no-force"},
	{path: "deploy", flag: "target", value: "production", rule: "no-target-prod"},
	{path: "test", flag: "update", rule: "no-test-update"},
	{path: "deploy", flag: "e", value: "prod", rule: "no-short-env"},
	{path: "deploy", flag: "c", rule: "no-config"},
}

// propertyFixture is a policy whose deny rules use every form of the rule language, over a
// catalog whose commands would create the sentinel file if they ever ran.
func propertyFixture(t *testing.T) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "started")
	touch := helperArgv(t, "touch", sentinel)
	var declared []Command
	for _, p := range []string{"db", "db migrate", "deploy", "test"} {
		declared = append(declared, Command{Path: p, Argv: touch})
	}
	r, err := New(Options{
		Root:     dir,
		Declared: declared,
		Allow: []Rule{
			{Name: "db", Prefix: []string{"db"}},
			{Name: "deploy", Prefix: []string{"deploy"}},
			{Name: "test", Prefix: []string{"test"}},
		},
		Deny: []Rule{
			{Name: "no-prod", Prefix: []string{"db", "migrate", "--env=prod"}},
			{Name: "no-drop", Prefix: []string{"db", "migrate", "--drop"}},
			{Name: "no-force", Prefix: []string{"db", "migrate"}, Flags: []string{"--force", "--yes-really"}},
			{Name: "no-target-prod", Prefix: []string{"deploy", "--target", "production"}},
			{Name: "no-test-update", Prefix: []string{"test", "-update"}},
			{Name: "no-short-env", Prefix: []string{"deploy", "-e", "prod"}},
			{Name: "no-config", Prefix: []string{"deploy", "-c"}},
		},
		MaxTimeout: 30 * time.Second,
		Executor:   Executor{Env: helperEnvironment()},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, sentinel
}

// harmlessArgs are arguments no deny rule of propertyFixture names.
var harmlessArgs = []string{"--dry-run", "-v", "--verbose", "./...", "-run", "TestX", "--env=staging", "staging",
	"--target=eu", "--target:eu", "-count=1", "-cover", "--out", "dir", "--", "-", "x", "--timeout=5s", "prod", "production", "--note=--env=prod"}

// blanks are characters deny matching trims from the ends of a token.
var blanks = []string{" ", "\t", "\n", "\r", "\v", "\u00a0", "\u2003", "\u200b", "\ufeff", "\x1b"}

func TestNoRewritingTurnsADeniedInvocationIntoAnAllowedOne(t *testing.T) {
	r, sentinel := propertyFixture(t)
	denyRules := []string{"no-prod", "no-drop", "no-force", "no-target-prod", "no-test-update", "no-short-env", "no-config"}
	for _, c := range deniedCores {
		if d := r.Decide(c.path, plainCore(c)); d.Allowed || d.Rule != c.rule {
			t.Fatalf("the plain spelling %s %q is not denied by %s: %+v", c.path, plainCore(c), c.rule, d)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		c := rapid.SampledFrom(deniedCores).Draw(rt, "core")
		units := spellCore(rt, c)
		others := rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom(harmlessArgs), otherArg()), 0, 8).Draw(rt, "others")
		for i, o := range others { // split some --name=value into --name value
			if name, value, ok := strings.Cut(o, "="); ok && strings.HasPrefix(o, "-") && rapid.Bool().Draw(rt, "split") {
				others = slices.Replace(others, i, i+1, name+"\x00"+value)
			}
		}
		for _, o := range others {
			units = append(units, strings.Split(o, "\x00"))
		}
		perm := rapid.Permutation(units).Draw(rt, "order")
		var args []string
		for _, u := range perm {
			args = append(args, u...)
		}
		d := r.Decide(c.path, args)
		if d.Allowed || !slices.Contains(denyRules, d.Rule) {
			rt.Fatalf("%s %q was %+v, want denied by a deny rule (it rewrites %s %q)", c.path, args, d, c.path, plainCore(c))
		}
		_ = os.Remove(sentinel)
		_, err := r.Execute(context.Background(), c.path, args, ExecuteOptions{})
		if _, statErr := os.Stat(sentinel); statErr == nil || err == nil {
			rt.Fatalf("the denied call %s %q started the command (err=%v)", c.path, args, err)
		}
	})
}

func plainCore(c deniedCore) []string {
	flag := "--" + c.flag
	if c.value != "" {
		flag += "=" + c.value
	}
	return append(slices.Clone(c.words), flag)
}

// spellCore writes the denied part of an invocation in a random spelling the rule must still
// recognise, as units that stay together when the arguments are reordered (a flag and the
// value that follows it).
func spellCore(rt *rapid.T, c deniedCore) [][]string {
	var units [][]string
	for _, w := range c.words {
		units = append(units, []string{pad(rt, recase(rt, w))})
	}
	dashes := rapid.SampledFrom([]string{"-", "--"}).Draw(rt, "dashes")
	name := c.flag
	if dashes == "--" && rapid.Bool().Draw(rt, "abbreviate") {
		name = name[:rapid.IntRange(1, len(name)).Draw(rt, "abbreviation")]
	}
	flag := dashes + recase(rt, name)
	value := c.value
	if value == "" && rapid.Bool().Draw(rt, "give a value") {
		value = rapid.SampledFrom([]string{"true", "false", "0", "yes", "./prod.yml", "1"}).Draw(rt, "any value")
	}
	// A value glued to a one-letter flag (-eprod) is denied when the rule names it, and when it
	// cannot be a flag name of its own (-c./prod.yml); -ctrue may be Go's flag -ctrue.
	glueable := dashes == "-" && len(c.flag) == 1 && value != "" && (c.value != "" || !isWord(value))
	switch {
	case value == "":
		units = append(units, []string{pad(rt, flag)})
	case glueable && rapid.Bool().Draw(rt, "glued form"):
		units = append(units, []string{pad(rt, flag+recase(rt, value))})
	case rapid.Bool().Draw(rt, "split form"):
		units = append(units, []string{pad(rt, flag), pad(rt, recase(rt, value))})
	default:
		sep := rapid.SampledFrom([]string{"=", " =", "= ", "\t=\t", ":", " :", ": ", "\t:\t"}).Draw(rt, "separator")
		units = append(units, []string{pad(rt, flag+sep+recase(rt, value))})
	}
	return units
}

func recase(rt *rapid.T, s string) string {
	out := []rune(s)
	for i, r := range out {
		if rapid.Bool().Draw(rt, "upper") {
			out[i] = unicode.ToUpper(r)
		}
	}
	return string(out)
}

func pad(rt *rapid.T, s string) string {
	return strings.Join(rapid.SliceOfN(rapid.SampledFrom(blanks), 0, 2).Draw(rt, "before"), "") + s +
		strings.Join(rapid.SliceOfN(rapid.SampledFrom(blanks), 0, 2).Draw(rt, "after"), "")
}

// otherArg is an arbitrary argument without a NUL byte (which is refused on its own).
func otherArg() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.Rune().Filter(func(r rune) bool { return r != 0 }), 0, 12, -1)
}
