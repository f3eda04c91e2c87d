package commands

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// denyRule is a deny rule compiled so that no other spelling of a denied invocation escapes
// it. A program does not care where a flag sits among its arguments, or whether it was written
// --env=prod or --env prod, and many programs trim or case-fold what they read; a deny rule
// compared token by token from the start was escaped by putting another flag first, by
// splitting the flag, by a trailing space or by upper case. So a deny rule compares normalized
// text (see normalize), the same on both sides:
//
//   - words are the rule's plain tokens. As many of them as the call's path has tokens must
//     equal the path; the rest must appear among the arguments, in the rule's order, anywhere
//     (so inserting a flag before a denied subcommand does not escape it);
//   - a flag token is one that starts with a dash. Its number of dashes does not matter
//     (-env is --env: Go's flag package accepts both), and it is found in either form,
//     --name=value or --name followed by the value as the next argument. An argument that
//     starts with two dashes also stands for every longer flag it abbreviates (--en for
//     --env), as GNU getopt_long and Python's argparse accept unambiguous abbreviations.
//     A flag without a value in the rule matches the flag with any value (--drop=false too);
//   - all holds the flags of the rule's prefix, which must all appear; anyOf holds the rule's
//     Flags, of which one is enough;
//   - "--" does not end flag recognition: what a program reads after it is its own business.
//
// The arguments reach the program unchanged: normalization only ever denies more calls. What a
// rule cannot know, and a person must list: a program's aliases (-f for --force), clustered
// short options (-fv) and values glued to a short option (-eprod).
type denyRule struct {
	name  string
	words []string
	all   []flagSpec
	anyOf []flagSpec
}

// flagSpec is one flag of a deny rule, normalized, without its dashes.
type flagSpec struct {
	name     string
	value    string
	hasValue bool
}

// flagUse is one way the arguments of a call may pass a flag: an argument --name=value gives
// one use; an argument --name gives a use without a value and, in case the program reads the
// next argument as its value, one with it.
type flagUse struct {
	name     string
	value    string
	hasValue bool
	long     bool // written with two dashes, so it may abbreviate a longer name
}

// callView is a call as deny rules see it.
type callView struct {
	path, args []string // normalized
	flags      []flagUse
}

var errNotFlag = errors.New("is not a flag: it must start with - and name the flag")

// compileDeny reads a deny rule. Prefix tokens up to the first flag token are words; after it,
// a flag token followed by a plain token takes that token as its value ("--env", "prod" is
// --env=prod), and any other plain token is one more word.
func compileDeny(r Rule) (denyRule, error) {
	d := denyRule{name: r.Name}
	for i := 0; i < len(r.Prefix); i++ {
		t := r.Prefix[i]
		if !isFlag(normalize(t)) {
			d.words = append(d.words, normalize(t))
			continue
		}
		spec, err := parseFlagSpec(t)
		if err != nil {
			return denyRule{}, err
		}
		if !spec.hasValue && i+1 < len(r.Prefix) && !isFlag(normalize(r.Prefix[i+1])) {
			spec.value, spec.hasValue = normalize(r.Prefix[i+1]), true
			i++
		}
		d.all = append(d.all, spec)
	}
	for _, f := range r.Flags {
		spec, err := parseFlagSpec(f)
		if err != nil {
			return denyRule{}, err
		}
		d.anyOf = append(d.anyOf, spec)
	}
	return d, nil
}

func parseFlagSpec(t string) (flagSpec, error) {
	n := normalize(t)
	if !isFlag(n) {
		return flagSpec{}, fmt.Errorf("flag %s %w", quoteBounded(t), errNotFlag)
	}
	name, value, eq := strings.Cut(strings.TrimLeft(n, "-"), "=")
	if name = normalize(name); name == "" {
		return flagSpec{}, fmt.Errorf("flag %s %w", quoteBounded(t), errNotFlag)
	}
	return flagSpec{name: name, value: normalize(value), hasValue: eq}, nil
}

func newCallView(path, args []string) callView {
	v := callView{path: make([]string, len(path)), args: make([]string, len(args))}
	for i, p := range path {
		v.path[i] = normalize(p)
	}
	for i, a := range args {
		v.args[i] = normalize(a)
	}
	for i, a := range v.args {
		if !isFlag(a) {
			continue
		}
		body := strings.TrimLeft(a, "-")
		long := len(a)-len(body) >= 2
		name, value, eq := strings.Cut(body, "=")
		if name = normalize(name); name == "" {
			continue
		}
		if eq {
			v.flags = append(v.flags, flagUse{name: name, value: normalize(value), hasValue: true, long: long})
			continue
		}
		v.flags = append(v.flags, flagUse{name: name, long: long})
		if i+1 < len(v.args) {
			v.flags = append(v.flags, flagUse{name: name, value: v.args[i+1], hasValue: true, long: long})
		}
	}
	return v
}

func (r denyRule) matches(c callView) bool {
	n := min(len(r.words), len(c.path))
	if !slices.Equal(r.words[:n], c.path[:n]) || !subsequence(r.words[n:], c.args) {
		return false
	}
	for _, f := range r.all {
		if !c.passes(f) {
			return false
		}
	}
	return len(r.anyOf) == 0 || slices.ContainsFunc(r.anyOf, c.passes)
}

// passes reports whether any use of the call's arguments may pass flag f to the program.
func (c callView) passes(f flagSpec) bool {
	for _, u := range c.flags {
		named := u.name == f.name || u.long && strings.HasPrefix(f.name, u.name)
		if named && (!f.hasValue || u.hasValue && u.value == f.value) {
			return true
		}
	}
	return false
}

// subsequence reports whether words appear in args in order, not necessarily side by side.
func subsequence(words, args []string) bool {
	i := 0
	for _, a := range args {
		if i < len(words) && a == words[i] {
			i++
		}
	}
	return i == len(words)
}

// isFlag reports whether a normalized token is a flag: a dash followed by something, but not
// the end-of-options marker "--" alone.
func isFlag(n string) bool {
	return len(n) >= 2 && n[0] == '-' && n != "--"
}

// normalize is the form deny rules compare: without surrounding white space, control and
// format characters (zero-width spaces, byte-order marks), and case-folded, so "--ENV=Prod\n"
// and "--env=prod" are the same flag.
func normalize(s string) string {
	return strings.Map(foldRune, strings.TrimFunc(s, isBlank))
}

func isBlank(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// foldRune maps r to one representative of its Unicode simple case-folding orbit (the smallest
// rune in it), so that two strings fold to the same text exactly when strings.EqualFold holds
// rune by rune, and prefixes of folded text are prefixes of folded names.
func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}
