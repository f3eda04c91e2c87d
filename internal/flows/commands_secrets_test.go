package flows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/secretenv"
	"github.com/runlens/runlens/internal/shape"
)

// secretFlows wires the command runner and the redactor as the app does: one pattern list,
// the configuration's, strips the command's environment and feeds the redactor. It runs a
// command that says, for each variable named in $NAMES, whether it sees it
// and with which value, then prints each of its arguments, under the default command
// configuration and a server environment env.
func secretFlows(t *testing.T, root string, env []string) *Flows {
	t.Helper()
	patterns := config.Defaults(root).Commands.SecretEnv
	r, err := commands.New(commands.Options{
		Root: root,
		Declared: []commands.Command{{Path: "show", Argv: sh(`for n in $NAMES; do
			if eval "[ -n \"\${$n+x}\" ]"; then eval "echo env $n is set; echo \"value $n=\$$n\""; else echo env $n is unset; fi
		done; for a; do echo "arg $a"; done`)}},
		Allow:      []commands.Rule{{Name: "show", Prefix: []string{"show"}}},
		MaxTimeout: 10 * time.Second,
		Executor:   commands.Executor{Env: env, SecretEnv: patterns},
	})
	if err != nil {
		t.Fatal(err)
	}
	return New(Deps{Commands: r, Redactor: shape.NewRedactor(shape.RedactorOptions{SecretValues: secretenv.RedactionValues(env, patterns)})})
}

func TestSecretVariablesReachNeitherTheCommandNorTheAnswer(t *testing.T) {
	canaries := map[string]string{
		"GH_PAT":                         "canaryGhPat0001",
		"DB_PASSWORD":                    "canaryDbPassword2",
		"SMTP_PASSWD":                    "canarySmtpPasswd3",
		"MYSQL_PWD":                      "canaryMysqlPwd4",
		"AZURE_CREDENTIALS":              "canaryAzureCreds5",
		"REGISTRY_AUTH":                  "canaryRegistryAuth6",
		"CLIENT_SECRET_VALUE":            "canaryClientSecret7",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "canaryOidcToken8",
		"STRIPE_KEY":                     "canaryStripeKey9",
		"SENTRY_DSN":                     "https://canarySentryDsn10@o1.ingest.sentry.io/1",
		"DATABASE_URL":                   "postgres://app:canaryDbUrl11@db:5432/app",
		"CI_JOB_TOKEN":                   "canaryCiJobToken12",
		"CI_REGISTRY_PASSWORD":           "canaryRegistryPw13",
		"NODE_AUTH_TOKEN":                "canaryNodeAuth14",
		"AWS_SESSION_TOKEN":              "canaryAwsSession15",
		"AZURE_CLIENT_SECRET":            "canaryAzureSecret16",
		"HF_TOKEN":                       "canaryHfToken17",
		"ANTHROPIC_API_KEY":              "canaryAnthropic18",
		"SYSTEM_ACCESSTOKEN":             "canaryAzureDevops19",
		"CI_JOB_JWT_V2":                  "canaryGitlabJwt20",
	}
	var env, names, args []string
	for n, v := range canaries {
		env = append(env, n+"="+v)
		names = append(names, n)
		args = append(args, v) // the command prints each value it is given: the answer must not
	}
	env = append(env, "PATH=/usr/bin:/bin", "NAMES="+strings.Join(names, " "))
	f := secretFlows(t, t.TempDir(), env)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "show", Args: args}))
	if err != nil || out.Status != gen.ExecuteCommandOutputStatusPass {
		t.Fatalf("ExecuteCommand = %+v, %v", out, err)
	}
	for n, v := range canaries {
		if !strings.Contains(out.OutputTail, "env "+n+" is unset\n") {
			t.Errorf("the command saw %s", n)
		}
		if strings.Contains(out.OutputTail, v) {
			t.Errorf("the value of %s is in the answer", n)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.OutputTail)
	}
}

func TestNonSecretVariablesReachTheCommandAndTheAnswer(t *testing.T) {
	root := t.TempDir() // the command runs here, so its shell keeps PWD as it is
	keep := map[string]string{
		"PWD":                 root,
		"OLDPWD":              "/home/someone/previous",
		"HOME":                "/home/someone",
		"SSL_CERT_FILE":       "/etc/ssl/certs/ca-certificates.crt",
		"AWS_CA_BUNDLE":       "/etc/ssl/certs/ca-certificates.crt",
		"NODE_EXTRA_CA_CERTS": "/etc/ssl/certs/extra-ca.pem",
		"REQUESTS_CA_BUNDLE":  "/etc/ssl/certs/ca-bundle.crt",
		"CURL_CA_BUNDLE":      "/etc/ssl/certs/ca-bundle.crt",
		"MAX_TOKENS":          "409600",
		"REDIS_URL":           "redis://localhost:6379/0",
		"AWS_REGION":          "eu-west-1",
	}
	var env, names []string
	for n, v := range keep {
		env = append(env, n+"="+v)
		names = append(names, n)
	}
	env = append(env, "PATH=/usr/bin:/bin", "NAMES="+strings.Join(names, " "))
	f := secretFlows(t, root, env)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "show"}))
	if err != nil || out.Status != gen.ExecuteCommandOutputStatusPass {
		t.Fatalf("ExecuteCommand = %+v, %v", out, err)
	}
	for n, v := range keep {
		if !strings.Contains(out.OutputTail, "value "+n+"="+v+"\n") {
			t.Errorf("%s=%s did not reach the command or the answer intact", n, v)
		}
	}
	if strings.Contains(out.OutputTail, shape.Redacted) {
		t.Errorf("the answer redacted a non-secret value")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.OutputTail)
	}
}

func TestThePartsOfASecretPrintedOnTheirOwnAreScrubbed(t *testing.T) {
	canaries := map[string]struct{ value, part string }{
		"DATABASE_URL":       {"postgres://app:canaryDbUrlPw21@db:5432/app", "canaryDbUrlPw21"},
		"UPSTREAM":           {"https://deploy:canaryUpstreamPw22@git.example.com/x.git", "canaryUpstreamPw22"},
		"DOCKER_AUTH_CONFIG": {`{"auths":{"registry.example.com":{"auth":"Y2FuYXJ5OnJlZ2lzdHJ5UGFzczIz"}}}`, "Y2FuYXJ5OnJlZ2lzdHJ5UGFzczIz"},
	}
	var env, names, args []string
	for n, c := range canaries {
		env = append(env, n+"="+c.value)
		names = append(names, n)
		args = append(args, c.part) // a log line or a failed login that prints the part alone
	}
	env = append(env, "PATH=/usr/bin:/bin", "NAMES="+strings.Join(names, " "))
	f := secretFlows(t, t.TempDir(), env)
	out, err := f.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "show", Args: args}))
	if err != nil || out.Status != gen.ExecuteCommandOutputStatusPass {
		t.Fatalf("ExecuteCommand = %+v, %v", out, err)
	}
	for n, c := range canaries {
		if strings.Contains(out.OutputTail, c.part) {
			t.Errorf("the secret part of %s printed on its own is in the answer", n)
		}
	}
	if !strings.Contains(out.OutputTail, "env DOCKER_AUTH_CONFIG is unset\n") {
		t.Errorf("the command saw DOCKER_AUTH_CONFIG")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.OutputTail)
	}
}
