package commands

import "strings"

// childEnv is base without the variables matching any secret pattern. A pattern is a name, or
// a name with a leading and/or trailing * standing for any run of characters; matching ignores
// case, so a lower-case github_token is removed as surely as GITHUB_TOKEN.
func childEnv(base, secret []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !isSecret(name, secret) {
			out = append(out, kv)
		}
	}
	return out
}

func isSecret(name string, patterns []string) bool {
	upper := strings.ToUpper(name)
	for _, p := range patterns {
		if matchPattern(upper, strings.ToUpper(p)) {
			return true
		}
	}
	return false
}

func matchPattern(name, pattern string) bool {
	lead := strings.HasPrefix(pattern, "*")
	trail := len(pattern) > 1 && strings.HasSuffix(pattern, "*")
	core := strings.TrimSuffix(strings.TrimPrefix(pattern, "*"), "*")
	switch {
	case core == "":
		return pattern != "" // "*" alone removes everything
	case lead && trail:
		return strings.Contains(name, core)
	case lead:
		return strings.HasSuffix(name, core)
	case trail:
		return strings.HasPrefix(name, core)
	}
	return name == core
}
