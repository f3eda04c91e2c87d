package commands

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeFixture is the policy of the README's configuration example, with every catalog
// command running the touch helper on a sentinel file: if the file exists, the command ran.
func readmeFixture(t *testing.T) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "migrate-ran")
	touch := helperArgv(t, "touch", sentinel)
	r, err := New(Options{
		Root: dir,
		Declared: []Command{
			{Path: "test", Argv: touch},
			{Path: "db migrate", Argv: touch},
		},
		Allow: []Rule{
			{Name: "tests", Prefix: []string{"test"}},
			{Name: "migrations", Prefix: []string{"db", "migrate"}},
		},
		Deny:       []Rule{{Name: "no-prod", Prefix: []string{"db", "migrate", "--env=prod"}}},
		MaxTimeout: 30 * time.Second,
		Executor:   Executor{Env: helperEnvironment()},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, sentinel
}

func TestTheReadmeDenyRuleHoldsWhereverAndHoweverTheFlagIsWritten(t *testing.T) {
	r, sentinel := readmeFixture(t)
	tests := []struct {
		name    string
		args    []string
		allowed bool
	}{
		{"the flag as the first argument is denied", []string{"--env=prod"}, false},
		{"the flag after another flag is denied", []string{"--dry-run", "--env=prod"}, false},
		{"the flag at the end of several arguments is denied", []string{"-v", "--dry-run", "--env=prod"}, false},
		{"the flag with its value as the next argument is denied", []string{"--env", "prod"}, false},
		{"the split flag after another flag is denied", []string{"--dry-run", "--env", "prod"}, false},
		{"a trailing space after the value is denied", []string{"--env=prod "}, false},
		{"a leading tab before the flag is denied", []string{"\t--env=prod"}, false},
		{"a trailing newline after the split value is denied", []string{"--env", "prod\n"}, false},
		{"blanks around the equals sign are denied", []string{"--env = prod"}, false},
		{"upper case is denied", []string{"--ENV=PROD"}, false},
		{"mixed case in the split form is denied", []string{"--Env", "Prod"}, false},
		{"the single-dash spelling Go's flag package accepts is denied", []string{"-env=prod"}, false},
		{"an abbreviation of the long flag is denied", []string{"--en=prod"}, false},
		{"the flag after an end-of-options marker is still denied", []string{"--", "--env=prod"}, false},
		{"the flag repeated with a harmless value first is denied", []string{"--env=staging", "--env=prod"}, false},
		{"another environment is allowed", []string{"--env=staging"}, true},
		{"another environment in the split form is allowed", []string{"--env", "staging"}, true},
		{"a dry run alone is allowed", []string{"--dry-run"}, true},
		{"a value that only starts with the denied one is allowed", []string{"--env=production-replica"}, true},
		{"the denied value under another flag is allowed", []string{"--target=prod"}, true},
		{"no arguments are allowed", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(sentinel)
			d := r.Decide("db migrate", tt.args)
			if d.Allowed != tt.allowed {
				t.Fatalf("Decide(db migrate, %q) = %+v, want allowed=%v", tt.args, d, tt.allowed)
			}
			_, err := r.Execute(context.Background(), "db migrate", tt.args, ExecuteOptions{})
			_, statErr := os.Stat(sentinel)
			started := statErr == nil
			if !tt.allowed {
				checkRefusal(t, err, "no-prod")
				if started {
					t.Fatalf("the denied call %q started ./bin/migrate", tt.args)
				}
				return
			}
			if err != nil || !started {
				t.Fatalf("the allowed call %q did not run: err=%v started=%v", tt.args, err, started)
			}
			if got, _ := os.ReadFile(sentinel); string(got) != strings.Join(tt.args, "\x00") {
				t.Errorf("the command received %q, want the arguments unchanged: %q", got, tt.args)
			}
		})
	}
}

func TestDenyRulesOnPositionalWordsHoldWhereverTheWordAppears(t *testing.T) {
	r, sentinel := policyFixture(t)
	tests := []struct {
		name string
		path string
		args []string
		rule string
	}{
		{"a denied word after a flag is denied", "deploy", []string{"--verbose", "production"}, "no-deploy-production"},
		{"a denied word in upper case is denied", "deploy", []string{"PRODUCTION"}, "no-deploy-production"},
		{"a denied word with blanks around it is denied", "deploy", []string{" production\t"}, "no-deploy-production"},
		{"a denied subcommand after a flag is denied", "db", []string{"--yes", "reset"}, "no-db-reset"},
		{"a denied flag of a subcommand reached through the arguments is denied", "db", []string{"migrate", "-v", "--drop"}, "no-db-drop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(sentinel)
			if d := r.Decide(tt.path, tt.args); d.Allowed || d.Rule != tt.rule {
				t.Fatalf("Decide(%q, %q) = %+v, want denied by %s", tt.path, tt.args, d, tt.rule)
			}
			_, err := r.Execute(context.Background(), tt.path, tt.args, ExecuteOptions{})
			checkRefusal(t, err, tt.rule)
			if _, statErr := os.Stat(sentinel); statErr == nil {
				t.Fatal("a denied call started the command")
			}
		})
	}
}

func TestDenyMatchingNeverChangesTheArgumentsThatRun(t *testing.T) {
	r, sentinel := readmeFixture(t)
	args := []string{" --env=Staging ", "--Dry-Run"}
	if _, err := r.Execute(context.Background(), "db migrate", args, ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitForFile(t, sentinel)
	if !slices.Equal(strings.Split(string(got), "\x00"), args) {
		t.Errorf("the command received %q, want %q unchanged", got, args)
	}
}

func TestDenyRuleFlagsDenyWhenAnyOneAppears(t *testing.T) {
	c, err := NewCatalog([]Command{{Path: "db migrate", Argv: []string{"x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(
		[]Rule{{Name: "migrations", Prefix: []string{"db", "migrate"}}},
		[]Rule{
			{Name: "no-destructive", Prefix: []string{"db", "migrate"}, Flags: []string{"--drop", "-f", "--env=prod"}},
			{Name: "no-prod-and-force", Prefix: []string{"db", "migrate", "--target", "prod", "--force"}},
		})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		rule string
	}{
		{"the first listed flag denies", []string{"--drop"}, "no-destructive"},
		{"a short alias listed beside it denies", []string{"-v", "-f"}, "no-destructive"},
		{"a listed flag with its value denies in the split form", []string{"--env", "PROD"}, "no-destructive"},
		{"a listed flag with a value denies only with that value", []string{"--env", "staging"}, "migrations"},
		{"no listed flag is allowed", []string{"--dry-run"}, "migrations"},
		{"every flag of a prefix must appear, in any order", []string{"--force", "--target=prod"}, "no-prod-and-force"},
		{"one flag of a prefix alone does not deny", []string{"--force"}, "migrations"},
		{"a prefix's flag with another value does not deny", []string{"--target", "staging", "--force"}, "migrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Decide(c, "db migrate", tt.args)
			if d.Rule != tt.rule || d.Allowed != (tt.rule == "migrations") {
				t.Errorf("Decide(db migrate, %q) = %+v, want rule %s", tt.args, d, tt.rule)
			}
		})
	}
}

func TestADenyRuleWhosePrefixStartsWithAFlagCoversEveryCommand(t *testing.T) {
	c, err := NewCatalog([]Command{{Path: "test", Argv: []string{"x"}}, {Path: "db migrate", Argv: []string{"x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy([]Rule{{Name: "all", Prefix: []string{"test"}}, {Name: "db", Prefix: []string{"db"}}},
		[]Rule{{Name: "no-no-verify", Prefix: []string{"--no-verify"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"test", "db migrate"} {
		if d := p.Decide(c, path, []string{"x", "--NO-VERIFY"}); d.Allowed || d.Rule != "no-no-verify" {
			t.Errorf("Decide(%s, --NO-VERIFY) = %+v, want denied by no-no-verify", path, d)
		}
		if d := p.Decide(c, path, []string{"x"}); !d.Allowed {
			t.Errorf("Decide(%s, x) = %+v, want allowed", path, d)
		}
	}
}

func TestNewPolicyRejectsFlagsItCannotMatch(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []Rule
	}{
		{"an allow rule may not list flags", []Rule{{Name: "a", Prefix: []string{"test"}, Flags: []string{"--x"}}}, nil},
		{"a listed flag must start with a dash", nil, []Rule{{Name: "d", Prefix: []string{"test"}, Flags: []string{"force"}}}},
		{"a listed flag must have a name", nil, []Rule{{Name: "d", Prefix: []string{"test"}, Flags: []string{"--=x"}}}},
		{"the end-of-options marker is not a flag", nil, []Rule{{Name: "d", Prefix: []string{"test"}, Flags: []string{"--"}}}},
		{"a blank listed flag is not a flag", nil, []Rule{{Name: "d", Prefix: []string{"test"}, Flags: []string{" "}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewPolicy(tt.allow, tt.deny); !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("NewPolicy error = %v, want ErrInvalidPolicy", err)
			}
		})
	}
}

func TestDenyRulesHoldWhateverSeparatesAFlagFromItsValue(t *testing.T) {
	c, err := NewCatalog([]Command{{Path: "db migrate", Argv: []string{"x"}}, {Path: "git commit", Argv: []string{"x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(
		[]Rule{{Name: "migrations", Prefix: []string{"db", "migrate"}}, {Name: "commits", Prefix: []string{"git", "commit"}}},
		[]Rule{
			{Name: "no-prod", Prefix: []string{"db", "migrate", "--env=prod"}},
			{Name: "no-force", Prefix: []string{"db", "migrate"}, Flags: []string{"--force"}},
			{Name: "no-no-verify", Prefix: []string{"--no-verify"}},
			{Name: "no-short-prod", Prefix: []string{"db", "migrate", "-e", "prod"}},
			{Name: "no-config-file", Prefix: []string{"db", "migrate", "-c"}},
			{Name: "no-target-prod", Prefix: []string{"db", "migrate", "--target:prod"}},
		})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		args []string
		rule string // the deciding rule; an allow rule's name means allowed
	}{
		{"a colon between a long flag and its value is denied", "db migrate", []string{"--env:prod"}, "no-prod"},
		{"a colon after a flag denied whatever its value is denied", "db migrate", []string{"--force:true"}, "no-force"},
		{"a colon after a flag denied for every command is denied", "git commit", []string{"--no-verify:true"}, "no-no-verify"},
		{"a colon with blanks and upper case is denied", "db migrate", []string{"-ENV : Prod"}, "no-prod"},
		{"a colon after an abbreviation is denied", "db migrate", []string{"--fo:yes"}, "no-force"},
		{"a colon with another value is allowed", "db migrate", []string{"--env:staging"}, "migrations"},
		{"a rule written with a colon denies the equals spelling", "db migrate", []string{"--target=prod"}, "no-target-prod"},
		{"a rule written with a colon denies the split spelling", "db migrate", []string{"--target", "prod"}, "no-target-prod"},
		{"a value glued to a denied short flag is denied", "db migrate", []string{"-eprod"}, "no-short-prod"},
		{"a value glued to a denied short flag in upper case is denied", "db migrate", []string{"-EPROD"}, "no-short-prod"},
		{"a colon after a denied short flag is denied", "db migrate", []string{"-e:prod"}, "no-short-prod"},
		{"another value glued to the short flag is allowed", "db migrate", []string{"-estaging"}, "migrations"},
		{"a path glued to a short flag denied whatever its value is denied", "db migrate", []string{"-c./prod.yml"}, "no-config-file"},
		{"a number glued to a short flag denied whatever its value is denied", "db migrate", []string{"-c1"}, "no-config-file"},
		{"a colon after a short flag denied whatever its value is denied", "db migrate", []string{"-c:prod.yml"}, "no-config-file"},
		{"a single-dash long flag that starts with the short flag's letter is allowed", "db migrate", []string{"-count=1", "-cover"}, "migrations"},
		{"a colon inside another flag's value is allowed", "db migrate", []string{"--note=--env:prod"}, "migrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Decide(c, tt.path, tt.args)
			allowed := tt.rule == "migrations" || tt.rule == "commits"
			if d.Rule != tt.rule || d.Allowed != allowed {
				t.Errorf("Decide(%s, %q) = %+v, want rule %s", tt.path, tt.args, d, tt.rule)
			}
		})
	}
}
