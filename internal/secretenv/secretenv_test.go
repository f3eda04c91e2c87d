package secretenv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTheDefaultPatternsCoverConventionalAndCISecrets(t *testing.T) {
	m := New(DefaultPatterns()...)
	for _, name := range []string{
		// Conventional names.
		"GH_PAT", "GITHUB_PAT", "AZURE_DEVOPS_EXT_PAT", "DB_PASSWORD", "PGPASSWORD", "PASSWORD", "SMTP_PASSWD",
		"MYSQL_PWD", "REDIS_PASS", "GPG_PASSPHRASE", "AZURE_CREDENTIALS", "GOOGLE_CREDENTIALS", "REGISTRY_AUTH",
		"NPM_CONFIG__AUTH", "JWT_SECRET", "CLIENT_SECRETS", "SECRET_KEY_BASE", "SECRET", "API_TOKEN",
		"ACCESS_TOKEN_V2", "TOKEN", "STRIPE_KEY", "MY_API_KEY", "SSH_PRIVATE_KEY", "PRIVATE_KEY", "API_KEY", "APIKEY",
		"SENTRY_DSN", "DSN", "SQL_CONNECTION_STRING", "SESSION_COOKIE", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK",
		"github_token",
		// What CI systems and cloud SDKs name their secrets.
		"GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
		"CI_JOB_TOKEN", "CI_REGISTRY_PASSWORD", "CI_JOB_JWT", "CI_JOB_JWT_V2", "NPM_TOKEN", "NODE_AUTH_TOKEN",
		"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AZURE_CLIENT_SECRET",
		"GOOGLE_APPLICATION_CREDENTIALS", "DOCKER_PASSWORD", "CODECOV_TOKEN", "SONAR_TOKEN", "HF_TOKEN",
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SYSTEM_ACCESSTOKEN", "TF_TOKEN_app_terraform_io",
		"BUILDKITE_AGENT_ACCESS_TOKEN", "TWINE_PASSWORD", "CARGO_REGISTRY_TOKEN", "VAULT_TOKEN",
	} {
		t.Run(name, func(t *testing.T) {
			if !m.Secret(name, "s3cretValue") {
				t.Errorf("%s is not secret under the default patterns", name)
			}
		})
	}
}

func TestKnownNonSecretsStayWhateverThePatterns(t *testing.T) {
	m := New(append(DefaultPatterns(), "*", "*PWD*", "*_CA_*", "SSL_*", "*CERT*")...)
	for _, name := range []string{
		"PWD", "OLDPWD", "HOME", "PATH", "GOPATH", "XDG_CONFIG_DIR", "SSL_CERT_FILE", "SSL_CERT_DIR",
		"NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "AWS_CA_BUNDLE", "GIT_SSL_CAINFO",
		"PIP_CERT", "AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "POSTGRES_PASSWORD_FILE",
		"DEPLOY_PUBLIC_KEY",
	} {
		t.Run(name, func(t *testing.T) {
			if m.Secret(name, "/etc/ssl/certs/ca-certificates.crt") {
				t.Errorf("%s is secret; a pattern with a * must never match it", name)
			}
		})
	}
}

func TestDefaultPatternsLeaveLookAlikeNamesAlone(t *testing.T) {
	m := New(DefaultPatterns()...)
	for _, name := range []string{"MAX_TOKENS", "TOKENIZERS_PARALLELISM", "OPENAI_MAX_TOKENS", "AWS_REGION", "AWS_PROFILE",
		"GIT_ASKPASS", "PROXY_BYPASS", "KEYBOARD", "PASSENGER_APP_ENV", "XDG_SESSION_TYPE", "LANG", "TERM"} {
		if m.Secret(name, "some-value") {
			t.Errorf("%s is secret under the default patterns", name)
		}
	}
}

func TestURLPatternsMatchOnlyURLsCarryingAPassword(t *testing.T) {
	m := New(DefaultPatterns()...)
	tests := []struct {
		name, value string
		want        bool
	}{
		{"DATABASE_URL", "postgres://app:pw@db:5432/app", true},
		{"DATABASE_URL", "postgres://db:5432/app", false},
		{"DATABASE_URL", "postgres://app@db:5432/app", false},
		{"REDIS_URL", "redis://:r3dis@cache:6379/0", true},
		{"REDIS_URL", "redis://localhost:6379/0", false},
		{"MONGODB_URI", "mongodb+srv://app:pw@cluster0.example.net/app", true},
		{"MYSQL_URL", "app:pw@tcp(db:3306)/app", true},
		{"SERVICE_URL", "https://api.example.com/v1", false},
		{"SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/x", true}, // named, not a URL pattern
	}
	for _, tt := range tests {
		if got := m.Secret(tt.name, tt.value); got != tt.want {
			t.Errorf("Secret(%s=%s) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestPatternSyntax(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		varName string
		want    bool
	}{
		{"an exact name matches itself", "DATABASE_URL", "DATABASE_URL", true},
		{"an exact name does not match a longer one", "DATABASE_URL", "DATABASE_URL2", false},
		{"matching ignores case", "GITHUB_TOKEN", "github_token", true},
		{"a trailing star matches a prefix", "RUNLENS_*", "RUNLENS_TELEMETRY", true},
		{"a trailing star does not match elsewhere", "RUNLENS_*", "MY_RUNLENS_X", false},
		{"a leading star matches a suffix", "*_TOKEN", "NPM_TOKEN", true},
		{"a leading star does not match a middle", "*_TOKEN", "NPM_TOKEN_FILE", false},
		{"stars on both sides match anywhere", "*PASSWORD*", "PGPASSWORDX", true},
		{"a lone star matches any other name", "*", "EDITOR", true},
		{"a lone star does not match a known non-secret", "*", "PATH", false},
		{"a name listed without a star matches even a known non-secret", "SSL_CERT_FILE", "SSL_CERT_FILE", true},
		{"an empty pattern matches nothing", "", "PATH", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.pattern).Secret(tt.varName, "value"); got != tt.want {
				t.Errorf("New(%q).Secret(%q) = %v, want %v", tt.pattern, tt.varName, got, tt.want)
			}
		})
	}
}

func TestValuesAreTheNeedlesOfTheSameClassification(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(keyFile, []byte(`{"private_key":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"GITHUB_TOKEN=ghp_value_one",
		"DUPLICATE_TOKEN=ghp_value_one",
		"GH_PAT=patValue0123",
		"AWS_SECRET_ACCESS_KEY=aws-secret-value",
		"DATABASE_URL=postgres://u:pw@db/app",
		"HTTPS_PROXY=http://proxyuser:proxypass@proxy:3128",
		"RUNLENS_TELEMETRY=clickhouse://reader:chpass@ch:9000/otel",
		"RUNLENS_MCP_PROFILE=compact",
		"RUNLENS_RECEIVER=127.0.0.1:4318",
		`GOOGLE_CREDENTIALS={"type":"service_account","private_key_id":"0123456789abcdef","client_secret":"gcpClientSecret","client_email":"ci@example.iam.gserviceaccount.com"}`,
		"GOOGLE_APPLICATION_CREDENTIALS=" + keyFile,
		"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		"AWS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
		"PWD=/home/someone/project",
		"SHORT_TOKEN=abc12",
		"EMPTY_SECRET=",
		"MALFORMED",
	}
	got := New(DefaultPatterns()...).Values(env)
	want := []string{
		"ghp_value_one", "patValue0123", "aws-secret-value", "postgres://u:pw@db/app",
		"http://proxyuser:proxypass@proxy:3128", "clickhouse://reader:chpass@ch:9000/otel",
		env[9][len("GOOGLE_CREDENTIALS="):], "0123456789abcdef", "gcpClientSecret",
		"proxypass", "chpass", // URL passwords on their own ("pw" is too short)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Values lost %q", w)
		}
	}
	for _, kept := range []string{"compact", "127.0.0.1:4318", keyFile, "/etc/ssl/certs/ca-certificates.crt",
		"/home/someone/project", "abc12", "ci@example.iam.gserviceaccount.com"} {
		if slices.Contains(got, kept) {
			t.Errorf("Values holds %q, which is not secret or too short to scrub everywhere", kept)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Values returned %d needles, want %d (duplicates merged): %q", len(got), len(want), got)
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return len(b) - len(a) }) {
		t.Errorf("Values = %q, want longest first", got)
	}
}

func TestRedactionValuesKeepTheDefaultsWhenTheConfigurationReplacesThem(t *testing.T) {
	env := []string{"GITHUB_TOKEN=ghp_value_one", "INTERNAL_BLOB=internalBlobValue", "PGPASSWORD=pgPassword1"}
	// A project that lets its migrations see PGPASSWORD replaces the list without it.
	got := RedactionValues(env, []string{"RUNLENS_*", "INTERNAL_BLOB"})
	for _, w := range []string{"ghp_value_one", "internalBlobValue", "pgPassword1"} {
		if !slices.Contains(got, w) {
			t.Errorf("RedactionValues lost %q: %q", w, got)
		}
	}
	if stripped := New("RUNLENS_*", "INTERNAL_BLOB").Strip(env); !slices.Equal(stripped, []string{"GITHUB_TOKEN=ghp_value_one", "PGPASSWORD=pgPassword1"}) {
		t.Errorf("Strip = %q, want only INTERNAL_BLOB removed", stripped)
	}
}

func TestAuthNamesAreSecretWhereAuthNamesTheCredential(t *testing.T) {
	m := New(DefaultPatterns()...)
	tests := []struct {
		name string
		want bool
	}{
		{"DOCKER_AUTH_CONFIG", true}, // GitLab CI's registry credentials, a JSON document
		{"AUTH_CONFIG", true},
		{"AUTH", true},
		{"REGISTRY_AUTH", true},
		{"NPM_CONFIG__AUTH", true},
		{"NPM_CONFIG__AUTHTOKEN", true},
		{"HTTP_AUTH_HEADER", true},
		{"AUTH_HEADER", true},
		{"PROXY_AUTH_HEADERS", true},
		{"REGISTRY_AUTH_JSON", true},
		{"AUTH_SECRET", true},
		{"AUTH_TOKEN", true},
		// Settings of an authentication setup, not credentials: a command needs them.
		{"OAUTH_REDIRECT_PATH", false},
		{"OAUTH_CLIENT_ID", false},
		{"AUTH_URL", false},
		{"AUTH_TRUST_HOST", false},
		{"AUTH_GITHUB_ID", false},
		{"AUTH0_DOMAIN", false},
		{"FIREBASE_AUTH_DOMAIN", false},
		{"BASIC_AUTH_USER", false},
		{"AUTHOR_NAME", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Secret(tt.name, "s3cretValue"); got != tt.want {
				t.Errorf("Secret(%s) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestValuesHoldTheNestedCredentialsOfARegistryAuthDocument(t *testing.T) {
	env := []string{`DOCKER_AUTH_CONFIG={"auths":{"registry.example.com":{"auth":"ZGVwbG95OnJlZ2lzdHJ5UGFzcw==","identitytoken":"idT0kenValue"}},"credsStore":"desktop"}`}
	got := New(DefaultPatterns()...).Values(env)
	for _, w := range []string{env[0][len("DOCKER_AUTH_CONFIG="):], "ZGVwbG95OnJlZ2lzdHJ5UGFzcw==", "idT0kenValue"} {
		if !slices.Contains(got, w) {
			t.Errorf("Values lost %q: %q", w, got)
		}
	}
	if slices.Contains(got, "desktop") || slices.Contains(got, "registry.example.com") {
		t.Errorf("Values = %q, want the document's settings left out", got)
	}
}

func TestValuesHoldTheUserinfoPasswordOfEveryURLOnItsOwn(t *testing.T) {
	env := []string{
		"DATABASE_URL=postgres://app:s3cretPassw0rd@db:5432/app?sslmode=disable",
		"CACHE=redis://:r3disPassw0rd@cache:6379/0", // a URL with a password under any name
		"UPSTREAM_URI=https://deploy:p%40ss%2Fw0rd@git.example.com/repo.git",
		"MYSQL_DSN=app:my5qlPassw0rd@tcp(db:3306)/app",
		"RUNLENS_TELEMETRY=clickhouse://reader:chPassw0rd@ch:9000/otel",
		"SHORT_URL=postgres://app:pw12@db/app",
	}
	got := New(DefaultPatterns()...).Values(env)
	for _, w := range []string{"s3cretPassw0rd", "r3disPassw0rd", "p%40ss%2Fw0rd", "p@ss/w0rd", "my5qlPassw0rd", "chPassw0rd"} {
		if !slices.Contains(got, w) {
			t.Errorf("Values lost the password %q: %q", w, got)
		}
	}
	for _, kept := range []string{"pw12", "app", "reader", "deploy"} {
		if slices.Contains(got, kept) {
			t.Errorf("Values holds %q, which is too short or no password: %q", kept, got)
		}
	}
}
