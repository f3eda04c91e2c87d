package clickhouse

import (
	"errors"
	"strings"
	"testing"
)

// The form of a source that answers show (get_app_status, doctor) holds what the parser read,
// never text it did not: a query parameter it does not know and a fragment could hold a
// password, and a password parameter is refused like a password in the user part.
func TestTheShownSourceHoldsOnlyWhatWasRead(t *testing.T) {
	for _, tc := range []struct{ raw, shown string }{
		{"clickhouse://0#:secret@", "clickhouse://0"},
		{"clickhouse://reader@host/otel?dial_timeout=5s&token=hunter2#frag", "clickhouse://reader@host/otel"},
		{"clickhouse+https://host/db?traces_table=spans&secure=true&x=hunter2", "clickhouse+https://host/db?secure=true&traces_table=spans"},
	} {
		e, err := parseEndpoint(tc.raw, "", "")
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if e.shown != tc.shown || strings.Contains(e.shown, "hunter2") || strings.Contains(e.shown, "secret") {
			t.Errorf("%s is shown as %q, want %q", tc.raw, e.shown, tc.shown)
		}
	}
	for _, raw := range []string{"clickhouse://host/db?password=hunter2", "clickhouse+http://host/db?PASSWORD=x"} {
		if _, err := parseEndpoint(raw, "", ""); !errors.Is(err, errSource) || !strings.Contains(err.Error(), "password") {
			t.Errorf("%s: %v, want a refusal that names the password", raw, err)
		}
	}
}
