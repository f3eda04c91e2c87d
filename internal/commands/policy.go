package commands

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Rule is one policy rule.
//
// An allow rule matches when the command path tokens followed by the arguments begin with
// Prefix, token by token, exactly and case-sensitively.
//
// A deny rule is read so that no spelling of the same invocation escapes it (see denyRule):
// its tokens up to the first flag are the command path and positional words, and every flag
// token after them (with the plain token that follows it as its value: "--env", "prod" is
// --env=prod) must appear somewhere in the arguments, in any of the forms --flag=value,
// --flag:value and --flag value (a one-letter flag also as -fvalue). Flags, which only deny
// rules may have, lists further flags of which any one denies.
type Rule struct {
	Name   string
	Prefix []string
	Flags  []string
}

// Decision is the policy's answer for one call. Rule names the rule that decided: an allow or
// deny rule's name, or one of the built-in Rule* names below.
type Decision struct {
	Allowed bool
	Rule    string
	// Reason is one sentence for the agent: why, and what a person could change.
	Reason string
}

// Built-in rule names; configured rules may not use them, so a Decision's Rule is unambiguous.
const (
	RuleDefaultDeny     = "default_deny"
	RuleEmptyCommand    = "empty_command"
	RuleLeadingFlag     = "leading_flag"
	RuleNotInCatalog    = "not_in_catalog"
	RuleInvalidArgument = "invalid_argument"
)

// Argument bounds of the execute_command contract, enforced here too so the policy never
// depends on the caller having validated its input.
const (
	MaxArgs      = 32
	MaxArgLength = 1000
)

var reserved = []string{RuleDefaultDeny, RuleEmptyCommand, RuleLeadingFlag, RuleNotInCatalog, RuleInvalidArgument}

// ErrInvalidPolicy marks a rule that cannot be part of a policy.
var ErrInvalidPolicy = errors.New("invalid command policy")

// Policy is an ordered, default-deny rule set: any matching deny rule wins, then the first
// matching allow rule; anything else is denied by default_deny.
type Policy struct {
	allow []Rule
	deny  []denyRule
}

// NewPolicy checks and copies the rules. A rule needs a name that is not a built-in one and a
// non-empty prefix of non-empty tokens (an empty prefix would match everything); only deny
// rules may list flags, each a flag with a name (-x, --name, --name=value).
func NewPolicy(allow, deny []Rule) (*Policy, error) {
	p := &Policy{}
	check := func(kind string, i int, r Rule) error {
		if r.Name == "" || slices.Contains(reserved, r.Name) {
			return fmt.Errorf("%w: %s rule %d: name %q is empty or reserved", ErrInvalidPolicy, kind, i, r.Name)
		}
		if len(r.Prefix) == 0 || slices.Contains(r.Prefix, "") {
			return fmt.Errorf("%w: %s rule %q: prefix needs at least one token and no empty token", ErrInvalidPolicy, kind, r.Name)
		}
		return nil
	}
	for i, r := range allow {
		if err := check("allow", i, r); err != nil {
			return nil, err
		}
		if len(r.Flags) > 0 {
			return nil, fmt.Errorf("%w: allow rule %q: flags are for deny rules; an allow rule matches by prefix only", ErrInvalidPolicy, r.Name)
		}
		p.allow = append(p.allow, Rule{Name: r.Name, Prefix: slices.Clone(r.Prefix)})
	}
	for i, r := range deny {
		if err := check("deny", i, r); err != nil {
			return nil, err
		}
		d, err := compileDeny(r)
		if err != nil {
			return nil, fmt.Errorf("%w: deny rule %q: %v", ErrInvalidPolicy, r.Name, err)
		}
		p.deny = append(p.deny, d)
	}
	return p, nil
}

// Decide applies the whole policy to a call: the shape checks (empty command, leading flag,
// argument bounds), catalog membership, then the rules. Nothing here interprets shell syntax:
// ";", "&&", "$(…)", backticks and newlines are ordinary characters of a token.
func (p *Policy) Decide(c *Catalog, path string, args []string) Decision {
	if strings.TrimSpace(path) == "" {
		return deny(RuleEmptyCommand, "the command is empty; call list_commands to see what exists")
	}
	tokens := splitPath(path)
	if strings.HasPrefix(tokens[0], "-") {
		return deny(RuleLeadingFlag, "a command cannot start with a flag; name a command from list_commands")
	}
	if d, bad := checkArgs(args); bad {
		return d
	}
	if _, ok := c.Lookup(canonicalPath(path)); !ok {
		return deny(RuleNotInCatalog, fmt.Sprintf("%s is not in the command catalog; call list_commands to see what exists", quoteBounded(path)))
	}
	return p.Match(tokens, args)
}

// Match applies the rules to a command path's tokens and the call's arguments without the
// catalog and shape checks. Deny rules see the arguments normalized (see denyRule); allow
// rules see path and arguments as they are, so normalization can only ever deny more.
func (p *Policy) Match(path, args []string) Decision {
	if len(p.deny) > 0 {
		call := newCallView(path, args)
		for _, r := range p.deny {
			if r.matches(call) {
				return deny(r.name, fmt.Sprintf("denied by policy rule %q; only a person can change the policy in runlens.json", r.name))
			}
		}
	}
	tokens := append(slices.Clip(path), args...)
	for _, r := range p.allow {
		if hasPrefix(tokens, r.Prefix) {
			return Decision{Allowed: true, Rule: r.Name, Reason: fmt.Sprintf("allowed by policy rule %q", r.Name)}
		}
	}
	return deny(RuleDefaultDeny, "no allow rule matches this command and its arguments; only a person can change the policy in runlens.json")
}

// UnusedAllowRules names the allow rules that can match no command of the catalog, whatever
// the arguments: a sign of a typo in the policy, which the doctor reports.
func (p *Policy) UnusedAllowRules(c *Catalog) []string {
	var out []string
	for _, r := range p.allow {
		used := false
		for _, cmd := range c.cmds {
			t := splitPath(cmd.Path)
			// The rule can match if one of prefix and path is a prefix of the other: any
			// remaining rule tokens can be supplied as arguments.
			if hasPrefix(t, r.Prefix) || hasPrefix(r.Prefix, t) {
				used = true
				break
			}
		}
		if !used {
			out = append(out, r.Name)
		}
	}
	return out
}

func checkArgs(args []string) (Decision, bool) {
	if len(args) > MaxArgs {
		return deny(RuleInvalidArgument, fmt.Sprintf("at most %d arguments are accepted", MaxArgs)), true
	}
	for i, a := range args {
		if len(a) > MaxArgLength {
			return deny(RuleInvalidArgument, fmt.Sprintf("argument %d is longer than %d bytes", i, MaxArgLength)), true
		}
		if strings.ContainsRune(a, 0) {
			return deny(RuleInvalidArgument, fmt.Sprintf("argument %d contains a NUL byte, which no program can receive", i)), true
		}
	}
	return Decision{}, false
}

func hasPrefix(tokens, prefix []string) bool {
	return len(tokens) >= len(prefix) && slices.Equal(tokens[:len(prefix)], prefix)
}

func deny(rule, reason string) Decision {
	return Decision{Allowed: false, Rule: rule, Reason: reason}
}

// quoteBounded quotes a caller-supplied string for a message, shortened so a hostile value
// cannot flood the answer.
func quoteBounded(s string) string {
	const limit = 80
	if r := []rune(s); len(r) > limit {
		return fmt.Sprintf("%q…", string(r[:limit]))
	}
	return fmt.Sprintf("%q", s)
}
