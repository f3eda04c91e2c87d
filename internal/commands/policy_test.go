package commands

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// policyFixture is a runner whose every catalog command runs the touch helper on one sentinel
// file, so a test can tell whether anything was started, and with which arguments.
func policyFixture(t *testing.T) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "started")
	touch := helperArgv(t, "touch", sentinel)
	var declared []Command
	for _, p := range []string{"test", "build", "lint", "db", "db migrate", "db reset", "db seed",
		"deploy", "make test", "make lint", "npm run build", "git status"} {
		declared = append(declared, Command{Path: p, Argv: touch, Origin: OriginConfig})
	}
	r, err := New(Options{
		Root:     dir,
		Declared: declared,
		Allow: []Rule{
			{Name: "test", Prefix: []string{"test"}},
			{Name: "build", Prefix: []string{"build"}},
			{Name: "db", Prefix: []string{"db"}},
			{Name: "make-test", Prefix: []string{"make", "test"}},
			{Name: "deploy-staging", Prefix: []string{"deploy", "staging"}},
			{Name: "lint-fix", Prefix: []string{"lint", "--fix"}},
		},
		Deny: []Rule{
			{Name: "no-db-reset", Prefix: []string{"db", "reset"}},
			{Name: "no-db-drop", Prefix: []string{"db", "migrate", "--drop"}},
			{Name: "no-deploy-production", Prefix: []string{"deploy", "production"}},
			{Name: "no-test-update", Prefix: []string{"test", "-update"}},
		},
		MaxTimeout: 30 * time.Second,
		Executor:   Executor{Env: helperEnvironment()},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, sentinel
}

func TestPolicy(t *testing.T) {
	r, sentinel := policyFixture(t)
	many := make([]string, MaxArgs+1)
	for i := range many {
		many[i] = "x"
	}
	tests := []struct {
		name    string
		path    string
		args    []string
		allowed bool
		rule    string
	}{
		// Allow rules.
		{"a catalog command under an allow rule runs", "test", nil, true, "test"},
		{"arguments after an allowed path are accepted", "test", []string{"./..."}, true, "test"},
		{"a two-token path matches its rule", "db migrate", nil, true, "db"},
		{"a bare path that an allow rule covers runs", "db", nil, true, "db"},
		{"a discovered-style make path matches a two-token rule", "make test", nil, true, "make-test"},
		{"an allow rule can require an argument", "lint", []string{"--fix"}, true, "lint-fix"},
		{"an allow rule's argument token is matched through the arguments", "deploy", []string{"staging"}, true, "deploy-staging"},
		{"leading and trailing ASCII spaces are ignored", "  test  ", nil, true, "test"},
		{"repeated ASCII spaces between tokens collapse", "db  migrate", nil, true, "db"},
		{"a denied flag's name must match whole, not as a prefix of a longer flag", "db migrate", []string{"--dropdb"}, true, "db"},
		{"a word of a deny rule must match a whole argument", "db", []string{"resets"}, true, "db"},
		{"a look-alike argument is not the denied token and reaches the program as itself", "db", []string{"rеset"}, true, "db"},
		// Deny rules win.
		{"deny beats a broader allow on the path", "db reset", nil, false, "no-db-reset"},
		{"deny beats a broader allow through the arguments", "db", []string{"reset"}, false, "no-db-reset"},
		{"deny still applies with more arguments after it", "db reset", []string{"--force"}, false, "no-db-reset"},
		{"a three-token deny prefix spans path and arguments", "db migrate", []string{"--drop"}, false, "no-db-drop"},
		{"a deny rule on an argument wins over the allow rule of its path", "test", []string{"-update"}, false, "no-test-update"},
		{"deny applies even where no allow rule would", "deploy", []string{"production"}, false, "no-deploy-production"},
		{"a denied flag is denied wherever it appears", "test", []string{"-run", "X", "-update"}, false, "no-test-update"},
		{"a denied flag is denied with a value too", "db migrate", []string{"--drop=true"}, false, "no-db-drop"},
		// Default deny.
		{"a catalog command no rule allows is denied by default", "git status", nil, false, RuleDefaultDeny},
		{"an allow rule that needs an argument does not cover the bare command", "lint", nil, false, RuleDefaultDeny},
		{"an argument differing in case does not match", "lint", []string{"--FIX"}, false, RuleDefaultDeny},
		{"an argument token differing in case does not match", "deploy", []string{"Staging"}, false, RuleDefaultDeny},
		{"a bare command whose rule needs an argument is denied", "deploy", nil, false, RuleDefaultDeny},
		{"a catalog make target without a rule is denied", "make lint", nil, false, RuleDefaultDeny},
		{"a catalog npm script without a rule is denied", "npm run build", nil, false, RuleDefaultDeny},
		// Shape of the command.
		{"an empty command is denied", "", nil, false, RuleEmptyCommand},
		{"a spaces-only command is denied", "   ", nil, false, RuleEmptyCommand},
		{"a tabs-and-newlines command is denied", "\t\n", nil, false, RuleEmptyCommand},
		{"a Unicode-blank-only command is denied", "\u00a0\u2003", nil, false, RuleEmptyCommand},
		{"a leading short flag is denied", "-x", nil, false, RuleLeadingFlag},
		{"a leading long flag is denied", "--help", nil, false, RuleLeadingFlag},
		{"a lone dash is denied", "-", nil, false, RuleLeadingFlag},
		{"a flag after leading spaces is still leading", "  -x test", nil, false, RuleLeadingFlag},
		{"a flag before a catalog path is denied", "--exec test", nil, false, RuleLeadingFlag},
		// Paths outside the catalog, including shell syntax and look-alikes.
		{"an unknown path is not in the catalog", "unknown", nil, false, RuleNotInCatalog},
		{"a path differing in case is not in the catalog", "Test", nil, false, RuleNotInCatalog},
		{"an upper-case path is not in the catalog", "TEST", nil, false, RuleNotInCatalog},
		{"a path with a semicolon is one unknown token", "test;", nil, false, RuleNotInCatalog},
		{"a path chaining a second command is not in the catalog", "test; rm -rf /", nil, false, RuleNotInCatalog},
		{"a path with && is not in the catalog", "test && deploy", nil, false, RuleNotInCatalog},
		{"a path with command substitution is not in the catalog", "$(deploy)", nil, false, RuleNotInCatalog},
		{"a path with backticks is not in the catalog", "`deploy`", nil, false, RuleNotInCatalog},
		{"a path with a newline is one unknown token", "test\nrm", nil, false, RuleNotInCatalog},
		{"a path with a tab between tokens is not in the catalog", "db\tmigrate", nil, false, RuleNotInCatalog},
		{"a no-break space between tokens is not a separator", "db\u00a0migrate", nil, false, RuleNotInCatalog},
		{"a Cyrillic look-alike letter is not in the catalog", "tеst", nil, false, RuleNotInCatalog},
		{"fullwidth letters are not in the catalog", "ｔｅｓｔ", nil, false, RuleNotInCatalog},
		{"a zero-width space makes a different token", "test\u200b", nil, false, RuleNotInCatalog},
		{"a look-alike in the second token is not in the catalog", "db mіgrate", nil, false, RuleNotInCatalog},
		{"a flag written into the path is not in the catalog", "test -update", nil, false, RuleNotInCatalog},
		{"a rule's first token alone is not a catalog path", "make", []string{"test"}, false, RuleNotInCatalog},
		{"an argument-only path from a deny rule is not in the catalog", "deploy production", nil, false, RuleNotInCatalog},
		{"a NUL byte in the path is not in the catalog", "te\x00st", nil, false, RuleNotInCatalog},
		// Argument bounds.
		{"more than the maximum number of arguments is denied", "build", many, false, RuleInvalidArgument},
		{"an over-long argument is denied", "build", []string{strings.Repeat("a", MaxArgLength+1)}, false, RuleInvalidArgument},
		{"an argument with a NUL byte is denied", "build", []string{"a\x00b"}, false, RuleInvalidArgument},
		// Shell syntax inside arguments is passed literally.
		{"a semicolon argument is passed literally", "test", []string{";", "rm", "-rf", "/"}, true, "test"},
		{"an && argument is passed literally", "test", []string{"&& touch /tmp/pwned"}, true, "test"},
		{"a command substitution argument is passed literally", "test", []string{"$(touch pwned)"}, true, "test"},
		{"a backtick argument is passed literally", "test", []string{"`touch pwned`"}, true, "test"},
		{"a newline argument is passed literally", "test", []string{"a\nb; touch pwned"}, true, "test"},
		{"redirections and globs are passed literally", "test", []string{">", "out", "*", "|", "cat"}, true, "test"},
		{"the longest allowed argument is passed whole", "build", []string{strings.Repeat("é", MaxArgLength/2)}, true, "build"},
	}
	if len(tests) < 50 {
		t.Fatalf("the policy table must keep at least 50 cases, has %d", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(sentinel)
			d := r.Decide(tt.path, tt.args)
			if d.Allowed != tt.allowed || d.Rule != tt.rule {
				t.Fatalf("Decide(%q, %q) = %+v, want allowed=%v rule=%q", tt.path, tt.args, d, tt.allowed, tt.rule)
			}
			if d.Reason == "" {
				t.Errorf("decision has no reason")
			}
			res, err := r.Execute(context.Background(), tt.path, tt.args, ExecuteOptions{})
			_, statErr := os.Stat(sentinel)
			started := statErr == nil
			if !tt.allowed {
				checkRefusal(t, err, tt.rule)
				if started {
					t.Fatalf("a denied call started the command")
				}
				return
			}
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Execute = %+v, %v; want exit 0", res, err)
			}
			got, _ := os.ReadFile(sentinel)
			if want := strings.Join(tt.args, "\x00"); string(got) != want {
				t.Errorf("the command received %q, want the arguments literally: %q", got, want)
			}
		})
	}
}

func checkRefusal(t *testing.T, err error, rule string) {
	t.Helper()
	if rule == RuleNotInCatalog {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Execute error = %v, want ErrNotFound", err)
		}
		return
	}
	var denied *DeniedError
	if !errors.As(err, &denied) || !errors.Is(err, ErrDenied) {
		t.Fatalf("Execute error = %v, want a *DeniedError", err)
	}
	if denied.Decision.Rule != rule {
		t.Errorf("denied by %q, want %q", denied.Decision.Rule, rule)
	}
}

func TestNewPolicyRejectsUnsafeRules(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []Rule
	}{
		{"an allow rule with an empty prefix would allow everything", []Rule{{Name: "all", Prefix: nil}}, nil},
		{"a rule with an empty token cannot match", []Rule{{Name: "x", Prefix: []string{"test", ""}}}, nil},
		{"a rule needs a name", []Rule{{Name: "", Prefix: []string{"test"}}}, nil},
		{"a rule may not take a built-in name", nil, []Rule{{Name: RuleDefaultDeny, Prefix: []string{"test"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewPolicy(tt.allow, tt.deny); !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("NewPolicy error = %v, want ErrInvalidPolicy", err)
			}
		})
	}
}

func TestUnusedAllowRulesNamesRulesThatMatchNoCommand(t *testing.T) {
	c, err := NewCatalog([]Command{
		{Path: "db migrate", Argv: []string{"x"}},
		{Path: "test", Argv: []string{"x"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy([]Rule{
		{Name: "db", Prefix: []string{"db"}},                          // covers db migrate
		{Name: "migrate-up", Prefix: []string{"db", "migrate", "up"}}, // reachable with an argument
		{Name: "tset", Prefix: []string{"tset"}},                      // a typo
		{Name: "db-seed", Prefix: []string{"db", "seed"}},             // no such command
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := p.UnusedAllowRules(c)
	if strings.Join(got, ",") != "tset,db-seed" {
		t.Errorf("UnusedAllowRules = %q, want [tset db-seed]", got)
	}
}
