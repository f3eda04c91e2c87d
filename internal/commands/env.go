package commands

import "github.com/runlens/runlens/internal/secretenv"

// childEnv is base without the variables that secret classifies as secret (see
// secretenv.Matcher: names or *-patterns, case ignored, known non-secret names such as PWD and
// certificate bundles kept). The redactor's needles come from the same classification, so
// what a command may not see, an answer may not show.
func childEnv(base, secret []string) []string {
	return secretenv.New(secret...).Strip(base)
}
