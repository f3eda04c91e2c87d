package commands

import (
	"strings"

	"github.com/runlens/runlens/internal/secretenv"
)

// childEnv is base without the variables that secret classifies as secret (see
// secretenv.Matcher: names or *-patterns, case ignored, known non-secret names such as PWD and
// certificate bundles kept). The redactor's needles come from the same classification, so
// what a command may not see, an answer may not show.
func childEnv(base, secret []string) []string {
	return secretenv.New(secret...).Strip(base)
}

// withEnv sets each KEY=value of set in env, replacing an inherited KEY.
func withEnv(env, set []string) []string {
	if len(set) == 0 {
		return env
	}
	keys := make(map[string]bool, len(set))
	for _, kv := range set {
		if k, _, ok := strings.Cut(kv, "="); ok {
			keys[k] = true
		}
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
