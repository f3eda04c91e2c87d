package shape

import (
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A rule finds one kind of secret. Its triggers are words (ASCII case ignored) without one of
// which the expression cannot match; they are looked up for all rules at once (triggerIndex), so
// a string without secrets never reaches a regular expression. Only the secret part (the first
// participating group of groups, or the whole match when groups is empty) is replaced.
type rule struct {
	name     string
	triggers []string
	re       *regexp.Regexp
	groups   []int
	valid    func(string) bool // rejects look-alikes the expression cannot tell apart
	// validMatch, when set, rejects a whole match (submatch indexes m into s) that is no
	// secret for a reason outside the secret part, such as the key it is the value of.
	validMatch func(s string, m []int) bool
	// rewrite, when set, redacts the secret part itself instead of replacing it whole: a header
	// that carries several values keeps their names. It returns the part unchanged when
	// nothing in it is secret.
	rewrite func(part string) string
}

// apply replaces every secret the rule finds in s.
func (r *rule) apply(s string) string {
	matches := r.re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[0], m[1]
		for _, g := range r.groups {
			if m[2*g] >= 0 {
				start, end = m[2*g], m[2*g+1]
				break
			}
		}
		secret := s[start:end]
		if start == end || secret == Redacted || r.valid != nil && !r.valid(secret) || r.validMatch != nil && !r.validMatch(s, m) {
			continue
		}
		replacement := Redacted
		if r.rewrite != nil {
			if replacement = r.rewrite(secret); replacement == secret {
				continue
			}
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(replacement)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// pemLabel matches the label of every PEM private-key armour (PKCS#1, PKCS#8, EC, OpenSSH,
// encrypted) and of PGP private key blocks.
const pemLabel = `[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`

// builtinRules returns the rules, compiled on first use rather than at program start (every
// command of the binary would pay for it otherwise). They are applied in order: whole key blocks
// first, then header and URL credentials, then key=value pairs, then token shapes recognisable
// on their own, then cookie values, which may run over the words the others need.
var builtinRules = sync.OnceValue(func() []rule {
	return []rule{
		{
			name:     "pem private key block",
			triggers: []string{"PRIVATE KEY"},
			re:       regexp.MustCompile(`-----BEGIN ` + pemLabel + `(?s:.*?)-----END ` + pemLabel),
		},
		{
			// A block cut off by a tail or a byte cap has no END: everything after BEGIN may be key.
			name:     "pem private key without end",
			triggers: []string{"PRIVATE KEY"},
			re:       regexp.MustCompile(`-----BEGIN ` + pemLabel + `(?s:.*)`),
		},
		{
			// A tail that starts inside a block has no BEGIN: the base64 lines before END are key.
			name:     "pem private key without begin",
			triggers: []string{"PRIVATE KEY"},
			re:       regexp.MustCompile(`(?m)^[A-Za-z0-9+/=\r\n]*-----END ` + pemLabel),
		},
		{
			name:     "authorization header",
			triggers: []string{"authorization"},
			re: regexp.MustCompile(`(?i)\b(?:proxy-)?authorization\b["']?\s*[:=]\s*["']?` +
				`(?:(?:bearer|basic|digest|token|negotiate|ntlm|apikey|aws4-hmac-sha256)\s+)?([^\s"',;&]+)`),
			groups: []int{1},
		},
		{
			name:     "bearer token",
			triggers: []string{"bearer"},
			re:       regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)`),
			groups:   []int{1},
			valid:    looksRandom,
		},
		{
			name:     "basic credentials",
			triggers: []string{"basic"},
			re:       regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})`),
			groups:   []int{1},
			valid:    isBasicCredentials,
		},
		{
			name:     "url userinfo password",
			triggers: []string{"@"},
			re:       regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'<>]*:([^\s/?#@"'<>]+)@`),
			groups:   []int{1},
		},
		{
			name:     "go mysql dsn password",
			triggers: []string{"@tcp(", "@unix(", "@udp("},
			re:       regexp.MustCompile(`[\w.\-]+:([^\s:/@"']+)@(?:tcp|unix|udp)\(`),
			groups:   []int{1},
		},
		{
			// password=…, api_key: …, "client_secret":"…" in text, query strings, DSNs and configs,
			// and pw = '…' in a SQL statement (a `quoted` column; a literal with doubled or
			// escaped quotes, or with an E or N prefix); the key must end in the credential word,
			// so "max_tokens=100" is left alone.
			name:     "credential pair",
			triggers: []string{"pass", "pw", "secret", "token", "key", "credential", "signature"},
			re: regexp.MustCompile(`(?i)\b([\w.\-]*?(?:password|passwd|pwd|pw|secret|token|api[_\-]?key|apikey|` +
				`access[_\-]?key|private[_\-]?key|credentials?|signature))["'` + "`" + `]?\s*[:=]\s*` +
				`(?:"([^"\r\n]*)"|` + sqlString + `|([^\s"'&;,<>(){}\[\]]+))`),
			groups:     []int{2, 3, 4},
			valid:      notPlaceholder,
			validMatch: notWorkingDirectory,
		},
		{
			// SQL sets passwords without an equals sign: ALTER USER … PASSWORD '…', MySQL's
			// IDENTIFIED BY '…' and PASSWORD('…').
			name:     "sql password literal",
			triggers: []string{"password", "identified"},
			re:       regexp.MustCompile(`(?i)\b(?:password|identified(?:\s+with\s+\w+)?\s+by)\s*\(?\s*` + sqlString),
			groups:   []int{1},
			valid:    notPlaceholder,
		},
		{
			name:     "url signature or key parameter",
			triggers: []string{"sig=", "key="},
			re:       regexp.MustCompile(`(?i)[?&](?:sig|key|x-amz-security-token)=([^&\s#"'<>]+)`),
			groups:   []int{1},
		},
		{
			name: "aws access key id",
			triggers: []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA",
				"AROA", "APKA", "ASCA"},
			re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b`),
		},
		{
			// A 40-character secret access key is only recognisable next to its name.
			name:     "aws secret access key",
			triggers: []string{"aws"},
			re:       regexp.MustCompile(`(?i)aws[\w.\-]{0,30}?["'\s:=]{1,5}([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
			groups:   []int{1},
			valid:    mixedCase,
		},
		{
			name:     "github token",
			triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			re:       regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`),
		},
		{
			name:     "gitlab token",
			triggers: []string{"glpat-"},
			re:       regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`),
		},
		{
			name:     "slack token",
			triggers: []string{"xox", "xapp-"},
			re:       regexp.MustCompile(`\b(?:xox[abposr]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,})`),
		},
		{
			name:     "slack webhook",
			triggers: []string{"hooks.slack.com"},
			re:       regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows)/([A-Za-z0-9_/\-]+)`),
			groups:   []int{1},
		},
		{
			// OpenAI, Anthropic and similar "sk-" keys: the random part mixes cases and digits,
			// which tells them from "sk-learn-tutorial".
			name:     "sk- api key",
			triggers: []string{"sk-"},
			re:       regexp.MustCompile(`\bsk-(?:proj-|ant-|svcacct-|admin-)?(?:api\d\d-)?[A-Za-z0-9_\-]{20,}`),
			valid:    func(s string) bool { return mixedCase(s) && strings.ContainsAny(s, "0123456789") },
		},
		{
			name:     "stripe-style key",
			triggers: []string{"_live_", "_test_", "whsec_"},
			re:       regexp.MustCompile(`\b(?:(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})`),
		},
		{
			name:     "npm or hugging face token",
			triggers: []string{"npm_", "hf_"},
			re:       regexp.MustCompile(`\b(?:npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{34,})\b`),
		},
		{
			name:     "google api key",
			triggers: []string{"AIza"},
			re:       regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`),
		},
		{
			name:     "jwt",
			triggers: []string{"eyJ"},
			re:       regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*`),
		},
		{
			// Every cookie in a header is a session as far as runlens can tell, so each value
			// goes and each name stays. Cookie values may hold what other rules look for
			// (theme=dark&Bearer …), so these rules come last.
			name:     "cookie header",
			triggers: []string{"cookie"},
			re:       regexp.MustCompile(`(?i)(?:^|[^\w\-])cookie["']?\s*:\s*([^\r\n]+)`),
			groups:   []int{1},
			rewrite:  func(v string) string { return redactCookies(v, false) },
		},
		{
			name:     "set-cookie header",
			triggers: []string{"cookie"},
			re:       regexp.MustCompile(`(?i)\bset-cookie["']?\s*:\s*([^\r\n]+)`),
			groups:   []int{1},
			rewrite:  func(v string) string { return redactCookies(v, true) },
		},
	}
})

// sqlString matches a single-quoted string, SQL's (a doubled quote stays inside, an E'…' or
// N'…' prefix is allowed) and a backslash-escaping language's alike; its one group is the text
// between the quotes.
const sqlString = `[en]?'((?:[^'\\\r\n]|''|\\.)*)'`

// cookieAttributes are the attributes of a Set-Cookie header: settings, not the cookie.
var cookieAttributes = []string{"expires", "max-age", "domain", "path", "samesite", "priority", "partitioned", "secure", "httponly"}

// cookiePair is one name=value of a cookie header. A value ends where a cookie value cannot go
// on (RFC 6265: at white space, ';' or '"'), so text after the header on the same line is
// left to the other rules; a quoted value is one value.
var cookiePair = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([^\s=;,"]+)\s*=\s*("[^"]*"|[^;\s"]*)`) })

// redactCookies replaces the value of every cookie in a Cookie or (set) Set-Cookie header value,
// keeping the names and a Set-Cookie's attributes.
func redactCookies(v string, set bool) string {
	return cookiePair().ReplaceAllStringFunc(v, func(pair string) string {
		m := cookiePair().FindStringSubmatchIndex(pair)
		name, value := pair[m[2]:m[3]], pair[m[4]:m[5]]
		if value == "" || value == Redacted || set && slices.ContainsFunc(cookieAttributes, func(a string) bool { return strings.EqualFold(a, name) }) {
			return pair
		}
		return pair[:m[4]] + Redacted
	})
}

// notPlaceholder leaves alone values that stand for a secret without being one: the "?" and
// "$1" of normalized statements, format verbs, and masks.
func notPlaceholder(s string) bool {
	switch {
	case s == "?" || s == "%s" || s == "%v" || strings.Trim(s, "*") == "" || len(s) >= 3 && strings.Trim(s, "xX") == "":
		return false
	case s[0] == '$' && strings.Trim(s[1:], "0123456789") == "" && len(s) > 1:
		return false
	}
	return true
}

// notWorkingDirectory leaves alone the shell's PWD and OLDPWD: "pwd" ends their names, but
// they hold the working directory, a path. The ODBC "Pwd=" of a connection string, whose value
// is not a path, stays a password.
func notWorkingDirectory(s string, m []int) bool {
	key := s[m[2]:m[3]]
	if !strings.EqualFold(key, "pwd") && !strings.EqualFold(key, "oldpwd") {
		return true
	}
	for _, g := range []int{2, 3, 4} {
		if m[2*g] >= 0 {
			v := s[m[2*g]:m[2*g+1]]
			return !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~") && !isWindowsPath(v)
		}
	}
	return true
}

// isWindowsPath reports whether v starts like C:\ or C:/.
func isWindowsPath(v string) bool {
	return len(v) >= 3 && ('A' <= v[0]&^0x20 && v[0]&^0x20 <= 'Z') && v[1] == ':' && (v[2] == '\\' || v[2] == '/')
}

// looksRandom tells a token from a word: tokens carry digits, or mix cases over some length.
func looksRandom(s string) bool {
	return strings.ContainsAny(s, "0123456789") || len(s) >= 20 && mixedCase(s)
}

func mixedCase(s string) bool {
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz")
}

// isBasicCredentials accepts only what HTTP Basic carries: base64 of printable "user:password".
func isBasicCredentials(s string) bool {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil {
			return false
		}
	}
	colon := false
	for _, c := range raw {
		if c < 0x20 || c > 0x7e {
			return false
		}
		colon = colon || c == ':'
	}
	return colon
}
