package shape

import (
	"slices"
	"strings"
)

// DefaultSensitiveKeys are the attribute keys whose values are replaced whole, whatever they look
// like: headers that carry credentials, connection strings, and any key that ends in a
// credential word. Matching ignores ASCII case; '*' matches any run of characters, and a pattern
// "*.x" also matches the bare key "x".
func DefaultSensitiveKeys() []string {
	return []string{
		"http.request.header.authorization",
		"http.request.header.proxy-authorization",
		"http.request.header.cookie",
		"http.response.header.set-cookie",
		"http.request.header.x-api-key",
		"db.connection_string",
		"*.connection_string",
		"*authorization",
		"*cookie",
		"*password",
		"*passwd",
		"*secret",
		"*token",
		"*api_key",
		"*api-key",
		"*apikey",
		"*access_key",
		"*accesskey",
		"*private_key",
		"*privatekey",
		"*credentials",
		"*client_secret",
	}
}

// keyMatcher holds sensitive-key globs, lower-cased, with an index of the literal fragment each
// one needs, so a document that contains none of the fragments skips key matching altogether.
type keyMatcher struct {
	globs []keyGlob
	index *triggerIndex // label i: the fragment of globs[i]
}

type keyGlob struct {
	pattern  string // lower case
	fragment string // the longest run without '*', lower case
}

func newKeyMatcher(patterns []string) keyMatcher {
	var m keyMatcher
	add := func(p string) {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" || slices.ContainsFunc(m.globs, func(g keyGlob) bool { return g.pattern == p }) {
			return
		}
		frag := ""
		for part := range strings.SplitSeq(p, "*") {
			if len(part) > len(frag) {
				frag = part
			}
		}
		m.globs = append(m.globs, keyGlob{pattern: p, fragment: frag})
	}
	for _, p := range patterns {
		add(p)
		if rest, ok := strings.CutPrefix(p, "*."); ok {
			add(rest)
		}
	}
	words := make([]string, len(m.globs))
	labels := make([]int, len(m.globs))
	for i, g := range m.globs {
		words[i], labels[i] = g.fragment, i
	}
	m.index = newTriggerIndex(words, labels)
	return m
}

// active returns the globs whose fragment occurs in doc: the only ones that can match a key
// of it. When escaped, the document may spell a key in escapes, and every glob is active.
func (m keyMatcher) active(doc []byte, escaped bool) []keyGlob {
	if escaped || len(m.globs) == 0 {
		return m.globs
	}
	var one [1]uint64
	seen := one[:]
	if m.index.words > 1 {
		seen = make([]uint64, m.index.words)
	}
	scan(m.index, doc, seen)
	var out []keyGlob
	for i, g := range m.globs {
		if g.fragment == "" || seen[i/64]&(1<<(i%64)) != 0 {
			out = append(out, g)
		}
	}
	return out
}

func matchAny(globs []keyGlob, key string) bool {
	for _, g := range globs {
		if globFold(g.pattern, key) {
			return true
		}
	}
	return false
}

// secretNameWords are environment-variable name segments that mark a value as secret.
var secretNameWords = map[string]bool{
	"TOKEN": true, "SECRET": true, "PASSWORD": true, "PASSWD": true, "PASS": true,
	"PASSPHRASE": true, "APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true,
	"PRIVATE": true, "DSN": true, "COOKIE": true,
}

// publicAWSNames are AWS_* variables that configure rather than authenticate; their values
// ("us-east-1", "default") are common words that must not be scrubbed from every answer.
var publicAWSNames = map[string]bool{
	"AWS_REGION": true, "AWS_DEFAULT_REGION": true, "AWS_PROFILE": true, "AWS_DEFAULT_PROFILE": true,
	"AWS_DEFAULT_OUTPUT": true, "AWS_PAGER": true, "AWS_SDK_LOAD_CONFIG": true, "AWS_CONFIG_FILE": true,
	"AWS_SHARED_CREDENTIALS_FILE": true, "AWS_EXECUTION_ENV": true, "AWS_LAMBDA_FUNCTION_NAME": true,
	"AWS_LAMBDA_FUNCTION_VERSION": true, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": true, "AWS_LAMBDA_RUNTIME_API": true,
	"AWS_STS_REGIONAL_ENDPOINTS": true, "AWS_RETRY_MODE": true, "AWS_MAX_ATTEMPTS": true,
}

// minSecretValue is the shortest environment value treated as a secret literal: shorter ones
// ("true", "1234") are too common to scrub from every answer.
const minSecretValue = 6

// SecretEnvValues returns the values of the variables in environ (os.Environ form) whose names
// look secret (*_TOKEN, *_SECRET, *_PASSWORD, *_KEY, *API_KEY*, AWS_* credentials,
// DATABASE_URL, ...) and that are at least 6 bytes long, longest first, so the server can
// scrub its own secrets from every answer even where no pattern would recognise them.
func SecretEnvValues(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < minSecretValue || !secretEnvName(name) {
			continue
		}
		if !slices.Contains(out, value) {
			out = append(out, value)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// secretEnvName reports whether an environment variable name marks its value as secret.
func secretEnvName(name string) bool {
	n := strings.ToUpper(name)
	if strings.HasPrefix(n, "AWS_") && !publicAWSNames[n] {
		return true
	}
	if strings.Contains(n, "API_KEY") || strings.Contains(n, "APIKEY") ||
		strings.Contains(n, "DATABASE_URL") || strings.Contains(n, "CONNECTION_STRING") {
		return true
	}
	segs := strings.Split(n, "_")
	if len(segs) > 1 && (segs[len(segs)-1] == "KEY" || segs[len(segs)-1] == "URL" && segs[len(segs)-2] == "DB") {
		return true
	}
	return slices.ContainsFunc(segs, func(s string) bool { return secretNameWords[s] })
}
