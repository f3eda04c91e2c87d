package commands

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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
//     (-env is --env: Go's flag package accepts both), and it is found in every form a
//     common parser reads: --name=value, --name:value (.NET's System.CommandLine, which
//     Aspire apps use, reads it as --name value), and --name followed by the value as the
//     next argument. An argument that starts with two dashes also stands for every longer
//     flag it abbreviates (--en for --env), as GNU getopt_long and Python's argparse accept
//     unambiguous abbreviations. A flag without a value in the rule matches the flag with
//     any value (--drop=false too);
//   - a one-letter flag (-e) is also found with its value glued on (-eprod), as getopt and
//     System.CommandLine read it; see gluedUse for where that reading stops;
//   - all holds the flags of the rule's prefix, which must all appear; anyOf holds the rule's
//     Flags, of which one is enough;
//   - "--" does not end flag recognition: what a program reads after it is its own business.
//
// The arguments reach the program unchanged: normalization only ever denies more calls. What a
// rule cannot know, and a person must list: a program's aliases (-f for --force), clustered
// short options (-vf), and a glued value that reads as a word (-fprod under a rule -f that
// names no value, see gluedUse).
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
	glued    bool // a one-letter name with the rest of a single-dash argument as its value
	word     bool // glued, and the rest reads as a flag name of its own (see gluedUse)
}

// separators are what common parsers accept between a flag and its value in one argument:
// "=" (getopt_long, Go's flag package, argparse) and ":" (System.CommandLine).
const separators = "=:"

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
	name, value, eq := cutSeparator(strings.TrimLeft(n, "-"))
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
		if !long {
			if u, ok := gluedUse(body); ok {
				v.flags = append(v.flags, u)
			}
		}
		separated := false
		for _, sep := range separators {
			name, value, ok := strings.Cut(body, string(sep))
			if !ok {
				continue
			}
			separated = true
			if name = normalize(name); name != "" {
				v.flags = append(v.flags, flagUse{name: name, value: normalize(value), hasValue: true, long: long})
			}
		}
		if separated || normalize(body) == "" {
			continue
		}
		name := normalize(body)
		v.flags = append(v.flags, flagUse{name: name, long: long})
		if i+1 < len(v.args) {
			v.flags = append(v.flags, flagUse{name: name, value: v.args[i+1], hasValue: true, long: long})
		}
	}
	return v
}

// cutSeparator cuts a flag's text at its first separator, as a rule's flag is read.
func cutSeparator(s string) (name, value string, found bool) {
	if i := strings.IndexAny(s, separators); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// gluedUse reads the body of a single-dash argument -xREST as the one-letter flag x with REST
// glued on as its value, the way getopt and System.CommandLine read -eprod. A rule that names
// the value (-e prod) compares it, which is precise. A rule that names no value (-c) cannot
// tell -c./prod.yml from -count: the same text is the glued form to getopt and a flag of its
// own to Go's flag package (go test -c beside -count, -cover, -cpu), so denying every
// single-dash argument that starts with the letter would deny innocent flags. Such a rule
// therefore denies the glued form only when REST, up to a separator, cannot be a flag name —
// it holds something other than letters, digits, '-' and '_', or starts with a digit
// (-c./prod.yml, -c1) — and leaves -cfoo, a word, to a rule that lists it; word records which.
func gluedUse(body string) (flagUse, bool) {
	r, size := utf8.DecodeRuneInString(body) // body is normalized: an invalid byte is U+FFFD
	rest := body[size:]
	if rest == "" {
		return flagUse{}, false
	}
	name := normalize(string(r))
	if name == "" || strings.ContainsAny(name, separators) {
		return flagUse{}, false
	}
	head, _, _ := cutSeparator(rest)
	return flagUse{name: name, value: normalize(rest), hasValue: true, glued: true, word: isWord(head)}, true
}

// isWord reports whether s could be (the rest of) a flag's name: a letter, then letters,
// digits, '-' and '_'.
func isWord(s string) bool {
	for i, r := range s {
		if !(unicode.IsLetter(r) || i > 0 && (unicode.IsDigit(r) || r == '-' || r == '_')) {
			return false
		}
	}
	return s != ""
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
		switch {
		case !named:
		case u.glued && !f.hasValue:
			if !u.word {
				return true
			}
		case !f.hasValue || u.hasValue && u.value == f.value:
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
