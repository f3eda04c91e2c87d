//go:build chdb

package clickhouse_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/e2e/corpus/captured"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
)

// TestTheCorpusTruthOnClickHouse loads each captured corpus app (what real instrumentation
// libraries sent, package captured) into the exporter's tables and holds the adapter's
// answers, with its push-down and from scans, to the truth the app's workload counted: the
// differential test of docs/semantics.md R5 as the adapter's SQL restates it (which runs
// failed), besides the conformance suite's.
func TestTheCorpusTruthOnClickHouse(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	for _, app := range []string{"goapp", "node"} {
		t.Run(app, func(t *testing.T) {
			c, err := captured.Load(filepath.Join("..", "..", "e2e", "corpus", "captured", captured.Dir, app+".json.gz"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			tb := freshTables(t, e)
			if err := e.LoadSpans(tb, c.Spans); err != nil {
				t.Fatal(err)
			}
			if err := e.LoadLogs(tb, c.Logs); err != nil {
				t.Fatal(err)
			}
			eng := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), nil)
			for name, src := range map[string]telemetry.Source{"push-down": eng, "scans only": eng.ScansOnly()} {
				if bad := captured.Check(context.Background(), src, c); len(bad) > 0 {
					t.Errorf("ClickHouse (%s) disagrees with %s's truth:\n  %s", name, app, strings.Join(bad, "\n  "))
				}
			}
		})
	}
}
