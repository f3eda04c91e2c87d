package app

import (
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/toolerr"
)

func TestTheClickHousePasswordComesFromTheNamedVariable(t *testing.T) {
	env := map[string]string{"CH_PASSWORD": "s3cret", "ASPIRE_KEY": "k3y", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cases := []struct {
		name                   string
		passwordEnv, apiKeyEnv string
		want, wantErr          string
	}{
		{"passwordEnv names the variable", "CH_PASSWORD", "ASPIRE_KEY", "s3cret", ""},
		{"apiKeyEnv serves when passwordEnv is not set", "", "ASPIRE_KEY", "k3y", ""},
		{"no variable named is no password", "", "", "", ""},
		{"an unset variable is an error naming it", "CH_MISSING", "", "", "CH_MISSING is not set"},
		{"an empty variable is as good as unset", "EMPTY", "", "", "EMPTY is not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := clickhousePassword(c.passwordEnv, c.apiKeyEnv, lookup)
			if c.wantErr == "" {
				if err != nil || got != c.want {
					t.Fatalf("got %q, %v; want %q", got, err, c.want)
				}
				return
			}
			te, ok := toolerr.As(err)
			if !ok || !strings.Contains(te.Message, c.wantErr) || te.HintText() == "" || te.Code != "source_unreachable" {
				t.Fatalf("got %v; want a source_unreachable tool error saying %q with a hint", err, c.wantErr)
			}
		})
	}
}
