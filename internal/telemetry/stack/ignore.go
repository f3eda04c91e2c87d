package stack

import (
	"fmt"
	"path"
	"strings"
)

// isSecretName reports a file whose name marks it as holding secrets: never indexed as a
// location, never read for a snippet, whatever the ignore rules and the deny list say.
func isSecretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case ".npmrc", ".yarnrc", ".yarnrc.yml", ".netrc", "_netrc", ".pypirc", ".git-credentials",
		".htpasswd", ".pgpass", ".my.cnf", ".dockercfg", ".boto", ".s3cfg", ".secrets",
		"credentials", "secrets.json", "secrets.yml", "secrets.yaml", "secrets.toml",
		"terraform.tfstate", "terraform.tfstate.backup", "auth.json":
		return true
	}
	switch {
	case n == ".env" || strings.HasPrefix(n, ".env.") || strings.HasSuffix(n, ".env") || n == ".envrc":
		return true
	case strings.HasPrefix(n, "credentials."), strings.HasSuffix(n, ".credentials"), strings.HasSuffix(n, "-credentials.json"):
		return true
	case strings.HasPrefix(n, "id_rsa"), strings.HasPrefix(n, "id_dsa"), strings.HasPrefix(n, "id_ecdsa"),
		strings.HasPrefix(n, "id_ed25519"):
		return true
	}
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".tfvars", ".gpg", ".ppk"} {
		if strings.HasSuffix(n, ext) {
			return true
		}
	}
	return false
}

// secretDirs are folders whose every file is a secret (keys, cloud credentials).
var secretDirs = map[string]bool{".ssh": true, ".aws": true, ".gnupg": true, ".kube": true, ".docker": true, ".azure": true}

// isSecretPath reports a path any element of which marks it as a secret.
func isSecretPath(rel string) bool {
	segs := strings.Split(rel, "/")
	for _, s := range segs[:len(segs)-1] {
		if secretDirs[strings.ToLower(s)] {
			return true
		}
	}
	return isSecretName(segs[len(segs)-1])
}

// ignoreRules is a list of .gitignore-style patterns: the project's top-level .gitignore, or a
// configured deny list. internal/docs has a pattern matcher too, but it always leaves out
// names starting with "_" or "." (a rule for documentation, wrong for source: __init__.py) and
// knows neither negation nor folder-only patterns, which a real .gitignore uses.
//
// Supported: "#" comments, blank lines, "!" negation (the last matching rule wins, and a file
// under an ignored folder stays ignored, as in git), a trailing "/" for folders only, a leading
// or inner "/" anchoring the pattern to the root, "*", "?", "[…]" within a path element and
// "**" for any number of folders.
type ignoreRules struct {
	rules []ignoreRule
}

type ignoreRule struct {
	segs     []string
	negate   bool
	dirOnly  bool
	anchored bool
}

// parseIgnore compiles .gitignore text; strict makes a malformed pattern an error (for the
// configured deny list), otherwise it is skipped as git does.
func parseIgnore(text string, strict bool) (ignoreRules, error) {
	var r ignoreRules
	for _, line := range strings.Split(text, "\n") {
		p := strings.TrimSuffix(line, "\r")
		if !strings.HasSuffix(p, `\ `) {
			p = strings.TrimRight(p, " \t")
		}
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		var rule ignoreRule
		if strings.HasPrefix(p, "!") {
			rule.negate, p = true, p[1:]
		} else if strings.HasPrefix(p, `\!`) || strings.HasPrefix(p, `\#`) {
			p = p[1:]
		}
		if strings.HasSuffix(p, "/") {
			rule.dirOnly, p = true, strings.TrimRight(p, "/")
		}
		if strings.Contains(p, "/") {
			rule.anchored = true
		}
		p = strings.TrimPrefix(p, "/")
		if p == "" {
			continue
		}
		rule.segs = strings.Split(p, "/")
		valid := true
		for _, s := range rule.segs {
			if _, err := path.Match(s, ""); err != nil {
				if strict {
					return ignoreRules{}, fmt.Errorf("pattern %q: %w", line, err)
				}
				valid = false
			}
		}
		if valid {
			r.rules = append(r.rules, rule)
		}
	}
	return r, nil
}

// ignored reports whether the file at slash path rel is ignored: one of its folders is, or
// the last rule matching the file itself is not a negation.
func (r ignoreRules) ignored(rel string) bool {
	if len(r.rules) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		if r.match(segs[:i], true) {
			return true
		}
	}
	return r.match(segs, false)
}

// match applies the rules to one path (a folder when dir), the last matching rule deciding.
func (r ignoreRules) match(segs []string, dir bool) bool {
	out := false
	for _, rule := range r.rules {
		if rule.dirOnly && !dir {
			continue
		}
		var ok bool
		if rule.anchored {
			ok = matchSegments(rule.segs, segs)
		} else {
			ok, _ = path.Match(rule.segs[0], segs[len(segs)-1])
		}
		if ok {
			out = !rule.negate
		}
	}
	return out
}

// matchSegments matches path elements against pattern elements, "**" standing for any number
// of elements (including none). Memoised, so the work is bounded by the product of the two
// lengths whatever the pattern.
func matchSegments(pattern, segs []string) bool {
	memo := make(map[[2]int]bool)
	var m func(pi, si int) bool
	m = func(pi, si int) bool {
		key := [2]int{pi, si}
		if v, ok := memo[key]; ok {
			return v
		}
		var res bool
		switch {
		case pi == len(pattern):
			res = si == len(segs)
		case pattern[pi] == "**":
			res = m(pi+1, si) || (si < len(segs) && m(pi, si+1))
		case si == len(segs):
			res = false
		default:
			ok, _ := path.Match(pattern[pi], segs[si])
			res = ok && m(pi+1, si+1)
		}
		memo[key] = res
		return res
	}
	return m(0, 0)
}
