//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
)

// The doctor's checks of the source say which part is wrong: the exporter's tables pass and
// are recognised by release; the JSON-typed variant and missing tables fail with a fix.
func TestTheDoctorSaysWhichPartOfTheSourceIsWrong(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	good := freshTables(t, e)
	jsonTyped := freshTables(t, e)
	if err := e.Drop(jsonTyped); err != nil {
		t.Fatal(err)
	}
	jt := jsonTyped
	jt.JSON = true
	if err := e.Create(jt); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		db   string
		want []string // "name status" of each finding, in order
		says string
	}{
		{"the exporter's tables pass and are recognised", good.Database,
			[]string{"clickhouse_connect pass", "clickhouse_tables pass", "clickhouse_trace_lookup pass", "clickhouse_readonly pass"}, "as of " + chfront.ExporterVersion},
		{"the JSON-typed variant fails with a fix", jsonTyped.Database,
			[]string{"clickhouse_connect pass", "clickhouse_tables fail", "clickhouse_readonly pass"}, "JSON-typed"},
		{"missing tables fail with a fix", "default",
			[]string{"clickhouse_connect pass", "clickhouse_tables fail", "clickhouse_tables fail", "clickhouse_readonly pass"}, "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := open(t, addr, c.db, clickhouse.Options{})
			var got []string
			text := ""
			for _, f := range b.Diagnose(context.Background()) {
				got = append(got, f.Name+" "+f.Status)
				text += f.Summary + " " + f.Fix + "\n"
				if f.Status != "pass" && f.Fix == "" {
					t.Errorf("%s %s has no fix", f.Name, f.Status)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || !strings.Contains(text, c.says) {
				t.Errorf("findings %v, want %v saying %q:\n%s", got, c.want, c.says, text)
			}
		})
	}
}
