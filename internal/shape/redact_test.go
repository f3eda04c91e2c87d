package shape

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/secretenv"
	"pgregory.net/rapid"
)

// canary is a secret planted in text: secret must not survive, text around it must.
type canary struct {
	name   string
	text   string // the secret in its usual context
	secret string // the part that must disappear
	kept   string // a part of the context that must stay (empty: nothing to check)
}

// Fake credentials, shaped like the real ones.
var canaries = []canary{
	{name: "bearer token", text: "Bearer abcDEF123ghiJKL456mnoPQR", secret: "abcDEF123ghiJKL456mnoPQR", kept: "Bearer"},
	{name: "authorization header", text: "Authorization: Token 7f3a9c2e1b4d8f6a", secret: "7f3a9c2e1b4d8f6a", kept: "Authorization"},
	{name: "authorization header in JSON text", text: `{"authorization":"Bearer eXaMpLeT0kEnV4lue"}`, secret: "eXaMpLeT0kEnV4lue"},
	{name: "basic credentials", text: "Authorization: Basic YWxpY2U6d29uZGVybGFuZDE=", secret: "YWxpY2U6d29uZGVybGFuZDE", kept: "Basic"},
	{name: "basic credentials without a header name", text: "sent basic YWxpY2U6d29uZGVybGFuZDE= upstream", secret: "YWxpY2U6d29uZGVybGFuZDE", kept: "upstream"},
	{name: "aws access key id", text: "key AKIAQWERTYUIOP234567 used", secret: "AKIAQWERTYUIOP234567", kept: "used"},
	{name: "aws temporary key id", text: "ASIAZXCVBNMASDFGHJ23", secret: "ASIAZXCVBNMASDFGHJ23"},
	{name: "aws secret access key", text: "aws_secret_access_key = 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", secret: "kT7rXUtnFEMI/K7MDENG/bPxRfiCYq2wE9sLm4Zp"},
	{name: "aws secret in a config line", text: "AWS secret: kT7rXUtnFEMI+K7MDENG+bPxRfiCYq2wE9sLm4Zp", secret: "kT7rXUtnFEMI+K7MDENG+bPxRfiCYq2wE9sLm4Zp"},
	{name: "github personal token", text: "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", secret: "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"},
	{name: "github oauth token", text: "gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", secret: "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"},
	{name: "github user token", text: "ghu_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", secret: "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"},
	{name: "github server token", text: "ghs_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", secret: "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"},
	{name: "github refresh token", text: "ghr_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", secret: "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"},
	{name: "github fine-grained token", text: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", secret: "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"},
	{name: "gitlab token", text: "glpat-Xy12Ab34Cd56Ef78Gh90", secret: "Xy12Ab34Cd56Ef78Gh90"},
	{name: "slack bot token", text: "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", secret: "AbCdEfGhIjKlMnOpQrStUvWx"},
	{name: "slack user token", text: "xoxp-123456789012-1234567890123-AbCdEfGhIjKl", secret: "1234567890123-AbCdEfGhIjKl"},
	{name: "slack app token", text: "xapp-1-A0123BCDEF-1234567890-abcdef0123456789", secret: "abcdef0123456789"},
	{name: "slack webhook", text: "https://hooks.slack.com/services/T0000AAAA/B0000BBBB/XXXXxxxxXXXXxxxx1234", secret: "XXXXxxxxXXXXxxxx1234", kept: "hooks.slack.com"},
	{name: "openai project key", text: "OPENAI key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", secret: "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", kept: "OPENAI"},
	{name: "anthropic key", text: "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe", secret: "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe"},
	{name: "legacy sk key", text: "(sk-4fT9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9kLm2nOp5q)", secret: "4fT9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9kLm2nOp5q"},
	{name: "stripe live secret key", text: "sk_live_51H8abcdEFGH1234ijklMNOP", secret: "51H8abcdEFGH1234ijklMNOP"},
	{name: "stripe live publishable key", text: "pk_live_51H8abcdEFGH1234ijklMNOP", secret: "51H8abcdEFGH1234ijklMNOP"},
	{name: "stripe test key", text: "rk_test_51H8abcdEFGH1234ijklMNOP", secret: "51H8abcdEFGH1234ijklMNOP"},
	{name: "stripe webhook secret", text: "whsec_AbCdEfGh0123456789IjKlMnOp", secret: "AbCdEfGh0123456789IjKlMnOp"},
	{name: "npm token", text: "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", secret: "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
	{name: "google api key", text: "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", secret: "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"},
	{name: "pem private key block", text: "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\nQ2hlY2tTaGFwZUNhbmFyeQ==\n-----END RSA PRIVATE KEY-----\nafter", secret: "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn", kept: "after"},
	{name: "pem pkcs8 key", text: "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----", secret: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
	{name: "pem openssh key", text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----", secret: "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"},
	{name: "pem key cut before its end", text: "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpY", secret: "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpY"},
	{name: "pem key whose beginning was cut", text: "ok\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpY\nRaNdOmBaSe64LiNe\n-----END EC PRIVATE KEY-----\ndone", secret: "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpY", kept: "done"},
	{name: "pgp private key block", text: "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGXyz0123\n-----END PGP PRIVATE KEY BLOCK-----", secret: "lQOYBGXyz0123"},
	{name: "jwt", text: "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U sent", secret: "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", kept: "sent"},
	{name: "jwt payload", text: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", secret: "eyJzdWIiOiIxMjM0NTY3ODkwIn0"},
	{name: "password in a query string", text: "https://example.com/cb?user=bob&password=hunter2secret&x=1", secret: "hunter2secret", kept: "&x=1"},
	{name: "token in a query string", text: "/callback?access_token=ya29Xq81LcanaryZ&state=ok", secret: "ya29Xq81LcanaryZ", kept: "state=ok"},
	{name: "api key in a query string", text: "GET /v1/data?api_key=c4n4ryK3yV4lu3", secret: "c4n4ryK3yV4lu3"},
	{name: "key parameter in a url", text: "https://maps.example.com/api?key=c4n4ryMapsK3y&q=x", secret: "c4n4ryMapsK3y", kept: "q=x"},
	{name: "signature parameter in a url", text: "https://acct.blob.example.net/c/b?sv=2021&sig=c4n4ryS1gn4tur3%3D", secret: "c4n4ryS1gn4tur3", kept: "sv=2021"},
	{name: "postgres dsn", text: "postgres://app:s3cretPassw0rd@db:5432/app?sslmode=disable", secret: "s3cretPassw0rd", kept: "@db:5432"},
	{name: "redis url with only a password", text: "redis://:r3disPassw0rd@cache:6379/0", secret: "r3disPassw0rd"},
	{name: "mysql driver dsn", text: "app:my5qlPassw0rd@tcp(db:3306)/app", secret: "my5qlPassw0rd", kept: "tcp(db:3306)"},
	{name: "key value dsn", text: "host=db user=app password=kvPassw0rd dbname=app", secret: "kvPassw0rd", kept: "dbname=app"},
	{name: "odbc connection string", text: "Server=db;Uid=sa;Pwd=0dbcPassw0rd;Database=app", secret: "0dbcPassw0rd", kept: "Database=app"},
	{name: "passwd pair", text: "passwd=c4n4ryPasswd", secret: "c4n4ryPasswd"},
	{name: "secret pair", text: "client_secret: c4n4ryCl1entSecret", secret: "c4n4ryCl1entSecret"},
	{name: "token pair", text: "X-Auth-Token: c4n4ryAuthT0ken", secret: "c4n4ryAuthT0ken"},
	{name: "apikey pair", text: "apikey=c4n4ryAp1key", secret: "c4n4ryAp1key"},
	{name: "api key header", text: "x-api-key: c4n4ryHeaderKey", secret: "c4n4ryHeaderKey"},
	{name: "quoted password with spaces", text: `password="correct horse battery"`, secret: "correct horse battery"},
	{name: "password in a JSON-looking log line", text: `{"user":"bob","password":"j50nPassw0rd"}`, secret: "j50nPassw0rd", kept: "bob"},
	{name: "yaml password", text: "  password: y4mlPassw0rd\n  host: db", secret: "y4mlPassw0rd", kept: "host: db"},
	{name: "a pwd pair that is not the working directory", text: "MYSQL_PWD=c4n4ryMysqlPwd", secret: "c4n4ryMysqlPwd"},
	{name: "a lower-case odbc pwd", text: "uid=sa;pwd=c4n4ryOdbcPwd;", secret: "c4n4ryOdbcPwd"},
	{name: "cookie header", text: "Cookie: session=c00kieS3ssionV4l; theme=dark", secret: "c00kieS3ssionV4l", kept: "Cookie: session="},
	{name: "cookie header's later value", text: "cookie: theme=dark; sid=s1dC4n4ryV4lue", secret: "s1dC4n4ryV4lue", kept: "theme="},
	{name: "quoted cookie value", text: `Cookie: sid="qu0tedC4n4ry"`, secret: "qu0tedC4n4ry", kept: "sid="},
	{name: "cookie header in a JSON-looking log line", text: `headers={"Cookie": "sid=js0nC4n4ryS1d", "Accept": "*/*"}`, secret: "js0nC4n4ryS1d", kept: `"Accept": "*/*"`},
	{name: "set-cookie header", text: "Set-Cookie: session=s3tC00kieV4lue; Path=/; HttpOnly; Secure", secret: "s3tC00kieV4lue", kept: "Path=/; HttpOnly"},
	{name: "pw literal in a SQL statement", text: "SELECT id FROM users WHERE name = 'bob' AND pw = 'hunter2canary'", secret: "hunter2canary", kept: "name = 'bob'"},
	{name: "pw pair with a colon", text: "pw: c4n4ryPwColon", secret: "c4n4ryPwColon"},
	{name: "password literal with a doubled quote", text: "UPDATE users SET password = 'it''sC4n4ryPw' WHERE id = 7", secret: "sC4n4ryPw", kept: "WHERE id = 7"},
	{name: "password literal with an escaped quote", text: `UPDATE users SET passwd = 'it\'sEsc4pedPw' WHERE id = 7`, secret: "sEsc4pedPw", kept: "WHERE id = 7"},
	{name: "national string literal", text: "UPDATE users SET secret = N'n4tionalC4n4ry' WHERE id = 7", secret: "n4tionalC4n4ry", kept: "WHERE id = 7"},
	{name: "escape string literal", text: "UPDATE users SET token = E'esc4peC4n4ry' WHERE id = 7", secret: "esc4peC4n4ry", kept: "WHERE id = 7"},
	{name: "token in a backtick-quoted column", text: "UPDATE `users` SET `token`='b4cktickC4n4ry' WHERE id=1", secret: "b4cktickC4n4ry", kept: "WHERE id=1"},
	{name: "alter user password", text: "ALTER USER app WITH PASSWORD 'alt3rC4n4ry'", secret: "alt3rC4n4ry", kept: "ALTER USER app"},
	{name: "mysql identified by", text: "CREATE USER 'app'@'%' IDENTIFIED BY 'id3ntC4n4ry'", secret: "id3ntC4n4ry", kept: "CREATE USER"},
}

// lookAlikes must pass through the redactor unchanged.
var lookAlikes = []string{
	"task-123", "skeleton", "risk-free", "see sk-learn-tutorial-for-beginners", "a1b2c3d4",
	"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "123e4567-e89b-12d3-a456-426614174000",
	"Bearer authentication is required", "Basic setup guide", "basic usage of the API",
	"the password field is required", "reset your password.", "max_tokens=100", "input_tokens: 42",
	"gen_ai.usage.output_tokens", "https://example.com/docs?page=2&sort=asc", "http://localhost:4318/v1/traces",
	"user@example.com", "ghp_short", "eyJ", "AKIA", "ASIA-Pacific", "AIzaSy short", "monkey=banana",
	"secretary=Jane", "tokenizer=bpe", "key_id=7", "db.system=postgresql",
	"SELECT * FROM users WHERE password = ? AND token = $1", "password: [REDACTED]",
	"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
	"PWD=/home/dev/project", "OLDPWD=/srv/app/releases/42", "export PWD=~/src/app", `"PWD": "/srv/tree"`,
	`PWD=C:\Users\dev\app`, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
	"NODE_EXTRA_CA_CERTS=/etc/ssl/certs/extra.pem", "REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-bundle.crt",
	"CURL_CA_BUNDLE=/etc/pki/tls/certs/ca-bundle.crt",
	"日本語のテキスト", "GET /api/runs/run_01HZX3 200", "AWS region us-east-1", "the secret sauce",
	"the session cookie: missing", "cookie_consent: true", "SELECT pw FROM users WHERE id = $1",
	"UPDATE users SET pw = ? WHERE id = ?", "loaded pwa-manifest.json", "ALTER USER app WITH PASSWORD $1",
}

func TestRedactorRemovesEveryCanary(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	for _, c := range canaries {
		t.Run(c.name, func(t *testing.T) {
			got := r.String(c.text)
			if strings.Contains(got, c.secret) {
				t.Errorf("String(%q) = %q: the secret survived", c.text, got)
			}
			if !strings.Contains(got, Redacted) {
				t.Errorf("String(%q) = %q: no %s marker", c.text, got, Redacted)
			}
			if c.kept != "" && !strings.Contains(got, c.kept) {
				t.Errorf("String(%q) = %q: lost %q, which is not secret", c.text, got, c.kept)
			}
		})
	}
}

func TestRedactorKeepsLookAlikes(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	for _, s := range lookAlikes {
		t.Run(s, func(t *testing.T) {
			if got := r.String(s); got != s {
				t.Errorf("String(%q) = %q, want it unchanged", s, got)
			}
		})
	}
}

func TestRedactorCanariesInEveryPlace(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	for _, c := range canaries {
		t.Run(c.name, func(t *testing.T) {
			doc := map[string]any{
				"summary": "failed: " + c.text,
				"spans": []any{map[string]any{
					"name":       "GET /checkout",
					"attributes": map[string]any{"http.url": c.text, "note": []any{"x", c.text}},
				}},
				"logs": []any{map[string]any{"message": "line one\n" + c.text + "\nline three"}},
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			out, err := r.JSON(raw)
			if err != nil {
				t.Fatalf("JSON: %v", err)
			}
			if !json.Valid(out) {
				t.Fatalf("JSON produced invalid JSON: %s", out)
			}
			var back any
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatal(err)
			}
			if flat := fmt.Sprint(back); strings.Contains(flat, c.secret) {
				t.Errorf("the secret survived in JSON: %s", out)
			}
			query := "https://example.com/search?q=" + url.QueryEscape(c.text) + "&page=2"
			if got := r.String(query); strings.Contains(got, c.secret) {
				t.Errorf("the secret survived in a URL query: %q", got)
			}
			output := "$ make deploy\nstep 1 ok\n" + c.text + "\nstep 3 ok\n"
			got := string(r.Bytes([]byte(output)))
			if strings.Contains(got, c.secret) || !strings.HasPrefix(got, "$ make deploy\nstep 1 ok\n") {
				t.Errorf("command output redacted to %q", got)
			}
		})
	}
}

func TestRedactorSensitiveKeys(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "attribute map values under sensitive keys are replaced whole",
			in:   `{"attributes":{"http.request.header.authorization":"plainvalue","db.password":"x","db.user":"app"}}`,
			want: `{"attributes":{"http.request.header.authorization":"[REDACTED]","db.password":"[REDACTED]","db.user":"app"}}`,
		},
		{
			name: "key value pairs are replaced by their key",
			in:   `[{"key":"db.connection_string","value":{"stringValue":"Server=db;User=app"}},{"key":"db.name","value":{"stringValue":"app"}}]`,
			want: `[{"key":"db.connection_string","value":{"stringValue":"[REDACTED]"}},{"key":"db.name","value":{"stringValue":"app"}}]`,
		},
		{
			name: "name value pairs are replaced by their name",
			in:   `{"headers":[{"name":"Cookie","value":"session=abc"},{"name":"Accept","value":"*/*"}]}`,
			want: `{"headers":[{"name":"Cookie","value":"[REDACTED]"},{"name":"Accept","value":"*/*"}]}`,
		},
		{
			name: "numbers under sensitive keys become the marker, booleans stay",
			in:   `{"app.pin_password":1234,"feature.api_key":true,"gen_ai.usage.input_tokens":1234}`,
			want: `{"app.pin_password":"[REDACTED]","feature.api_key":true,"gen_ai.usage.input_tokens":1234}`,
		},
		{
			name: "header arrays are replaced item by item",
			in:   `{"http.request.header.cookie":["a=1","b=2"]}`,
			want: `{"http.request.header.cookie":["[REDACTED]","[REDACTED]"]}`,
		},
		{
			name: "a sensitive key spelled with escapes is still found",
			in:   `{"db.p\u0061ssword":"hidden"}`,
			want: `{"db.password":"[REDACTED]"}`,
		},
		{
			name: "matching ignores case and camel case keys ending in a credential word",
			in:   `{"dbPassword":"a","AccessToken":"b","token_count":3}`,
			want: `{"dbPassword":"[REDACTED]","AccessToken":"[REDACTED]","token_count":3}`,
		},
		{
			name: "the server's own cursors are left intact even where they look like a key",
			in:   `{"page":{"nextCursor":"AQ-sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"},"note":"-sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"}`,
			want: `{"page":{"nextCursor":"AQ-sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"},"note":"-[REDACTED]"}`,
		},
		{
			name: "a document without secrets comes back as the same bytes",
			in:   `{ "status" : "pass" }`,
			want: `{ "status" : "pass" }`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactorCustomKeysReplaceDefaults(t *testing.T) {
	r := NewRedactor(RedactorOptions{SensitiveKeys: []string{"*.internal_ref"}})
	got, err := r.JSON([]byte(`{"app.internal_ref":"r-1","internal_ref":"r-2","db.password":"p"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"app.internal_ref":"[REDACTED]","internal_ref":"[REDACTED]","db.password":"p"}`
	if string(got) != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestRedactorSecretValues(t *testing.T) {
	env := []string{"MY_SERVICE_TOKEN=plainOpaqueValue", "SHORT_TOKEN=abc", "HOME=/root"}
	r := NewRedactor(RedactorOptions{SecretValues: secretenv.RedactionValues(env, nil)})
	tests := []struct{ in, want string }{
		{in: "connecting with plainOpaqueValue now", want: "connecting with [REDACTED] now"},
		{in: "abc stays: too short to be scrubbed everywhere", want: "abc stays: too short to be scrubbed everywhere"},
		{in: "/root stays", want: "/root stays"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	out, err := r.JSON([]byte(`{"k":"x plainOpaqueValue y"}`))
	if err != nil || string(out) != `{"k":"x [REDACTED] y"}` {
		t.Errorf("JSON = %s, %v", out, err)
	}
}

func TestRedactorJSONRejectsMalformedInputItMustRewrite(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	if _, err := r.JSON([]byte(`{"password": "x"`)); err == nil {
		t.Error("JSON accepted a truncated document")
	}
}

func TestRedactorIsIdempotent(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	texts := make([]string, 0, len(canaries)+len(lookAlikes))
	for _, c := range canaries {
		texts = append(texts, c.text)
	}
	texts = append(texts, lookAlikes...)
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom(texts), multilingual()), 1, 6).Draw(t, "parts")
		s := strings.Join(parts, rapid.SampledFrom([]string{" ", "\n", "&", ""}).Draw(t, "sep"))
		once := r.String(s)
		if twice := r.String(once); twice != once {
			t.Fatalf("String is not idempotent on %q:\nonce  %q\ntwice %q", s, once, twice)
		}
	})
}

func TestRedactorDoesNotAllocateWithoutSecrets(t *testing.T) {
	r := NewRedactor(RedactorOptions{SecretValues: []string{"plainOpaqueValue"}})
	s := strings.Repeat("GET /api/runs 200 in 12ms; service checkout, 日本語 ", 20)
	if allocs := testing.AllocsPerRun(100, func() { _ = r.String(s) }); allocs != 0 {
		t.Errorf("String allocated %.0f times on a string without secrets", allocs)
	}
	raw := []byte(`{"runs":[{"id":"r1","name":"GET /api","status":"ok","service":"checkout"}],"page":{"returned":1,"truncated":false}}`)
	if allocs := testing.AllocsPerRun(100, func() { _, _ = r.JSON(raw) }); allocs > 1 {
		t.Errorf("JSON allocated %.0f times on a document without secrets", allocs)
	}
}

func TestRedactorCatchesSecretsSideBySide(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	for _, sep := range []string{" ", "\n", "&", ", ", "; "} {
		for _, a := range canaries {
			for _, b := range canaries {
				s := a.text + sep + b.text
				got := r.String(s)
				if strings.Contains(got, a.secret) || strings.Contains(got, b.secret) {
					t.Errorf("String(%q) = %q: a secret survived", s, got)
				}
			}
		}
	}
}

func TestBuiltinRulesFitTheTriggerLabels(t *testing.T) {
	rules := builtinRules()
	if len(rules) >= labelKey {
		t.Errorf("%d rules overlap the trigger index's own labels from %d on", len(rules), labelKey)
	}
	for _, ru := range rules {
		if len(ru.triggers) == 0 {
			t.Errorf("rule %q has no trigger word, so it never runs", ru.name)
		}
	}
}

func TestRedactorTail(t *testing.T) {
	r := NewRedactor(RedactorOptions{})
	token := "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	tests := []struct {
		name     string
		in       string
		max      int
		partial  bool
		want     string
		wantTrim bool
	}{
		{name: "short complete output is kept", in: "ok\ndone\n", max: 100, want: "ok\ndone\n"},
		{name: "a secret is redacted before the cut", in: "token " + token + "\nnext\n", max: 10, want: "next\n", wantTrim: true},
		{name: "the partial first line of a ring is dropped", in: "4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\nbuild ok\n", max: 100, partial: true, want: "build ok\n", wantTrim: true},
		{name: "without a line break the first word goes", in: "O5p6Q7r8 then more output", max: 100, partial: true, want: "then more output", wantTrim: true},
		{name: "a whole secret inside the tail is redacted", in: "start\nuse " + token + "\n", max: 100, partial: true, want: "use [REDACTED]\n", wantTrim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trimmed := r.Tail([]byte(tt.in), tt.max, tt.partial)
			if string(got) != tt.want || trimmed != tt.wantTrim {
				t.Errorf("Tail = %q, %v; want %q, %v", got, trimmed, tt.want, tt.wantTrim)
			}
		})
	}
}

func TestRedactorWithManySecretValues(t *testing.T) {
	values := make([]string, 10000)
	for i := range values {
		values[i] = fmt.Sprintf("secret-value-%06d", i)
	}
	r := NewRedactor(RedactorOptions{SecretValues: values})
	for _, i := range []int{0, 4242, 9999} {
		s := "x " + values[i] + " y"
		if got := r.String(s); got != "x [REDACTED] y" {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
	if got := r.String("nothing secret here"); got != "nothing secret here" {
		t.Errorf("String changed a plain string: %q", got)
	}
}

func TestRedactorJSONFindsASecretValueWrittenEscaped(t *testing.T) {
	for _, secret := range []string{`pa"ss"word1`, `C:\keys\s3cret`, "line1\nline2", "a<b>&c1234"} {
		r := NewRedactor(RedactorOptions{SecretValues: []string{secret}})
		raw, err := json.Marshal(map[string]string{"message": "login with " + secret + " failed"})
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.JSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil || strings.Contains(back["message"], secret) {
			t.Errorf("JSON(%s) = %s (%v): the secret %q survived", raw, out, err, secret)
		}
	}
}
