// Package secretenv decides which environment variables hold secrets. One decision serves
// both places that need it: an executed command's environment loses those variables, and
// their values are scrubbed from every answer, so a variable can never be hidden from a
// command yet printed in its output, nor the other way round.
package secretenv

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OwnPrefix starts the names of runlens's own settings. They are always removed from a
// command's environment (they may point at credentials), but their values are settings,
// not secrets, so they are not scrubbed from answers; a password inside one (a
// RUNLENS_TELEMETRY URL) still is, as every URL password is.
const OwnPrefix = "RUNLENS_"

// MinValueLength is the shortest value used as a redaction needle: shorter ones ("true",
// "1234", "debug") are too common to scrub from every answer.
const MinValueLength = 6

// DefaultPatterns returns the built-in name patterns: the names credentials conventionally
// use, including the secrets the common CI systems inject (GITHUB_TOKEN,
// ACTIONS_ID_TOKEN_REQUEST_TOKEN, CI_JOB_TOKEN, CI_REGISTRY_PASSWORD, NPM_TOKEN,
// NODE_AUTH_TOKEN, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AZURE_CLIENT_SECRET,
// GOOGLE_APPLICATION_CREDENTIALS, DOCKER_PASSWORD, CODECOV_TOKEN, SONAR_TOKEN, HF_TOKEN,
// OPENAI_API_KEY, ANTHROPIC_API_KEY, SYSTEM_ACCESSTOKEN, CI_JOB_JWT, DOCKER_AUTH_CONFIG, …).
// *_TOKEN_* stands in for *_TOKEN* so that counters such as MAX_TOKENS stay.
//
// AUTH names a credential when it ends the name (REGISTRY_AUTH, npm's NPM_CONFIG__AUTH, a bare
// AUTH) or is followed by the word for the document or header that holds one
// (DOCKER_AUTH_CONFIG, *_AUTH_JSON, *_AUTH_HEADER, npm's _AUTHTOKEN). A broader *_AUTH_* or
// AUTH_* would take the settings of an authentication setup for credentials —
// FIREBASE_AUTH_DOMAIN, AUTH_URL, AUTH_TRUST_HOST, AUTH_GITHUB_ID, BASIC_AUTH_USER — and a
// command would lose them and their values vanish from every answer; the credentials among
// such names (AUTH_SECRET, AUTH_TOKEN, AUTH_PASSWORD, *_AUTH_KEY) match their own word. The
// list is a copy.
func DefaultPatterns() []string {
	return []string{
		"*_TOKEN", "*_TOKEN_*", "TOKEN", "*_ACCESSTOKEN",
		"*_SECRET*", "SECRET", "SECRET_*",
		"*PASSWORD*", "*_PASSWD", "PASSWD", "*_PWD", "*_PASS", "*_PASSPHRASE",
		"*_PAT",
		"*_CREDENTIAL", "*_CREDENTIALS", "CREDENTIALS",
		"*_AUTH", "AUTH", "*_AUTH_CONFIG", "AUTH_CONFIG", "*_AUTH_JSON", "*AUTHTOKEN",
		"*_AUTH_HEADER", "*_AUTH_HEADERS", "AUTH_HEADER", "AUTH_HEADERS",
		"*_KEY", "*_APIKEY", "APIKEY", "API_KEY", "PRIVATE_KEY", "*_ACCESS_KEY_ID",
		"*_DSN", "DSN", "*_CONNECTION_STRING", "CONNECTION_STRING",
		"*_URL", "*_URI",
		"*_COOKIE", "*_JWT", "*_JWT_*", "*_WEBHOOK", "*_WEBHOOK_URL",
	}
}

// urlPatterns match only a variable whose value carries a password (DATABASE_URL=
// postgres://app:pw@db/app), so a plain REDIS_URL=redis://localhost:6379 stays.
var urlPatterns = []string{"*_URL", "*_URI"}

// nonSecret are names a pattern with a * never matches: they hold paths, certificate bundles
// and public keys, which a command needs and which must not be scrubbed from its output. A
// name listed without a * is secret all the same.
var nonSecret = []string{
	"PWD", "OLDPWD", "HOME", "PATH", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "HOSTNAME", "LANG",
	"*PATH", "*_DIR", "*_FILE", "SSL_CERT_*",
	"*_CA_BUNDLE", "*_CA_CERT", "*_CA_CERTS", "*_CACERT", "*_CAINFO", "*_CAPATH", "*_CERT", "*_CERTS",
	"*_PUBLIC_KEY", "*_PUBKEY",
}

// Matcher classifies variables by one list of patterns. A pattern is a name, or a name with a
// leading and/or trailing * standing for any run of characters; matching ignores case.
type Matcher struct {
	exact []string // upper case, without a *
	globs []string // upper case
}

// New returns a Matcher for patterns (empty ones are ignored).
func New(patterns ...string) *Matcher {
	m := &Matcher{}
	for _, p := range patterns {
		p = strings.ToUpper(strings.TrimSpace(p))
		switch {
		case p == "" || slices.Contains(m.exact, p) || slices.Contains(m.globs, p):
		case strings.Contains(p, "*"):
			m.globs = append(m.globs, p)
		default:
			m.exact = append(m.exact, p)
		}
	}
	return m
}

// Secret reports whether the variable name=value is secret: its name is one the patterns
// list without a *, or it matches a pattern with a * and is not a known non-secret name
// (PWD, HOME, *PATH, *_DIR, *_FILE, certificate bundles, public keys). *_URL and *_URI
// match only when the value is a URL carrying a password.
func (m *Matcher) Secret(name, value string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(m.exact, n) {
		return true
	}
	if slices.ContainsFunc(nonSecret, func(p string) bool { return match(n, p) }) {
		return false
	}
	for _, g := range m.globs {
		if !match(n, g) {
			continue
		}
		if !slices.Contains(urlPatterns, g) || CarriesPassword(value) {
			return true
		}
	}
	return false
}

// Strip returns environ (os.Environ form) without its secret variables, in order.
func (m *Matcher) Strip(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !m.Secret(name, value) {
			out = append(out, kv)
		}
	}
	return out
}

// Values returns the redaction needles of environ, longest first: the values of its secret
// variables, the secret members of a credentials document held inline (a service-account
// JSON), and every value that is a URL carrying a password, whatever its name, together with
// that password on its own (a program prints it alone: a log line, a failed login). It leaves out
// values shorter than MinValueLength, values of runlens's own settings, and values naming an
// existing file or folder (GOOGLE_APPLICATION_CREDENTIALS=/path/key.json): a path points at a
// secret without being one.
func (m *Matcher) Values(environ []string) []string {
	var out []string
	add := func(v string) {
		if len(v) >= MinValueLength && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < MinValueLength {
			continue
		}
		own := strings.HasPrefix(strings.ToUpper(name), OwnPrefix)
		switch {
		case CarriesPassword(value):
			add(value)
			for _, pw := range passwords(value) {
				add(pw)
			}
		case own || !m.Secret(name, value) || isExistingPath(value):
		default:
			add(value)
			for _, s := range documentSecrets(value) {
				add(s)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// RedactionValues is the needles the redactor gets for a configuration whose command
// environment drops the variables matching configured: those patterns and the defaults
// together, so that a project which lets a command see one of its credentials (by replacing
// the default list) still never sees it in an answer.
func RedactionValues(environ, configured []string) []string {
	return New(append(slices.Clone(configured), DefaultPatterns()...)...).Values(environ)
}

// CarriesPassword reports whether v is a URL with a password in its user information
// (postgres://app:pw@db/app), or a Go MySQL DSN with one (app:pw@tcp(db)/app).
func CarriesPassword(v string) bool {
	if i := strings.Index(v, "://"); i > 0 {
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return false
		}
		pw, ok := u.User.Password()
		return ok && pw != ""
	}
	at := strings.IndexByte(v, '@')
	if at <= 0 || !hasAnyPrefix(v[at+1:], "tcp(", "unix(", "udp(") {
		return false
	}
	user, pw, ok := strings.Cut(v[:at], ":")
	return ok && user != "" && pw != "" && !strings.ContainsAny(v[:at], " /")
}

// passwords returns the password of a value CarriesPassword accepts, as written and, when it
// is percent-encoded, decoded (p%40ss is printed as p@ss by the program that reads it).
func passwords(v string) []string {
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return nil
		}
		pw, _ := u.User.Password()
		raw := rawPassword(v)
		if raw == "" || raw == pw {
			return []string{pw}
		}
		return []string{pw, raw}
	}
	at := strings.IndexByte(v, '@')
	if at <= 0 {
		return nil
	}
	_, pw, _ := strings.Cut(v[:at], ":")
	return []string{pw}
}

// rawPassword returns the password of a URL as it is written in v, before url.Parse decodes it.
func rawPassword(v string) string {
	rest := v[strings.Index(v, "://")+3:]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// documentSecrets returns the secret string members of a JSON object held in a variable, such
// as the private key id, client secret and refresh token of inline cloud credentials, or the
// "auth" of each registry in a Docker auth config ({"auths":{"host":{"auth":"…"}}}), at any
// depth; the document as a whole is a needle already, but a command prints its members one by
// one.
func documentSecrets(v string) []string {
	if !strings.HasPrefix(strings.TrimSpace(v), "{") {
		return nil
	}
	var doc map[string]any
	if json.Unmarshal([]byte(v), &doc) != nil {
		return nil
	}
	var out []string
	collectSecrets(doc, 0, &out)
	slices.Sort(out)
	return out
}

// maxDocumentDepth bounds how deep documentSecrets looks; credentials documents are shallow.
const maxDocumentDepth = 8

func collectSecrets(doc map[string]any, depth int, out *[]string) {
	for k, val := range doc {
		switch val := val.(type) {
		case string:
			if secretMember(k) {
				*out = append(*out, val)
			}
		case map[string]any:
			if depth < maxDocumentDepth {
				collectSecrets(val, depth+1, out)
			}
		}
	}
}

// secretMember reports whether a document member of that name holds a credential.
func secretMember(name string) bool {
	key := strings.ToLower(name)
	return key == "auth" || strings.Contains(key, "secret") || strings.Contains(key, "token") ||
		strings.Contains(key, "password") || strings.Contains(key, "private_key") ||
		strings.Contains(key, "api_key") || strings.Contains(key, "apikey")
}

func isExistingPath(v string) bool {
	if !filepath.IsAbs(v) || strings.ContainsAny(v, "\n\x00") {
		return false
	}
	_, err := os.Stat(v)
	return err == nil
}

// match reports whether name matches pattern, both upper case: a leading * matches any
// prefix, a trailing * any suffix, both any surrounding text; "*" alone matches every name.
func match(name, pattern string) bool {
	lead := strings.HasPrefix(pattern, "*")
	trail := len(pattern) > 1 && strings.HasSuffix(pattern, "*")
	core := strings.TrimSuffix(strings.TrimPrefix(pattern, "*"), "*")
	switch {
	case core == "":
		return pattern != ""
	case lead && trail:
		return strings.Contains(name, core)
	case lead:
		return strings.HasSuffix(name, core)
	case trail:
		return strings.HasPrefix(name, core)
	}
	return name == core
}
