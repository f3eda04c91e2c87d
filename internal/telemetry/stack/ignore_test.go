package stack

import (
	"strings"
	"testing"
)

func TestIgnoreRulesFollowGitignore(t *testing.T) {
	rules, err := parseIgnore(strings.Join([]string{
		"# comment",
		"",
		"*.log",
		"/build",
		"dist/",
		"docs/*.tmp",
		"**/cache/**",
		"secret/",
		"!secret/ok.txt",
		"tmp*",
		"!tmp-keep",
		`\#literal`,
		"trailing   ",
	}, "\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path    string
		ignored bool
	}{
		{"app.log", true},
		{"src/deep/app.log", true},
		{"build/out.js", true},
		{"src/build/out.js", false}, // "/build" is anchored to the root
		{"dist/a.js", true},
		{"src/dist/a.js", true}, // "dist/" matches a folder at any depth
		{"dist", false},         // …but only a folder
		{"docs/a.tmp", true},
		{"docs/sub/a.tmp", false},
		{"a/cache/b/c.go", true},
		{"cache/x", true},
		{"secret/ok.txt", true}, // a file under an ignored folder cannot be re-included
		{"tmpfile", true},
		{"tmp-keep", false},
		{"#literal", true},
		{"trailing", true},
		{"src/main.go", false},
	}
	for _, tc := range cases {
		if got := rules.ignored(tc.path); got != tc.ignored {
			t.Errorf("ignored(%q) = %v, want %v", tc.path, got, tc.ignored)
		}
	}
}

func TestIgnoreRulesStayLinearOnPathologicalPatterns(t *testing.T) {
	rules, err := parseIgnore(strings.Repeat("**/", 40)+"x", true)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.Repeat("a/", 60) + "y"
	if rules.ignored(path) {
		t.Fatalf("%q matched", path)
	}
}

func TestSecretNames(t *testing.T) {
	for _, name := range []string{".env", ".env.production", "prod.env", ".envrc", "tls.pem", "server.KEY", "id_rsa", "id_ecdsa.pub", ".npmrc", ".netrc", "credentials", "credentials.json", "gcp-credentials.json", "keystore.jks", "prod.tfvars", ".git-credentials"} {
		if !isSecretName(name) {
			t.Errorf("%q is not treated as a secret", name)
		}
	}
	for _, name := range []string{"env.go", "keys.go", "environment.ts", "monkey.py", "credentials_test.go", "README.md"} {
		if isSecretName(name) {
			t.Errorf("%q is treated as a secret", name)
		}
	}
}
