package codegen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/golden"
)

// TestToolSnapshotsMatch compares what tools/list serves for each tool (name, title,
// description, annotations and both schemas) with testdata/toolsnaps/<tool>.json. It catches
// contract changes that still compile: a description, an annotation, a bound. Update with
// UPDATE_GOLDEN=1; under CI a missing snapshot fails instead of being written.
func TestToolSnapshotsMatch(t *testing.T) {
	_, m := generateProject(t)
	dir := filepath.Join("testdata", "toolsnaps")
	update := golden.Updating()
	want := map[string]bool{}
	for _, tool := range m.Tools() {
		name := tool.Meta.Name + ".json"
		want[name] = true
		got, err := m.Snapshot(tool)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if want := golden.Read(t, path, got); !bytes.Equal(want, got) {
			t.Errorf("tools/list entry of %s changed; if intended, run UPDATE_GOLDEN=1 go test ./internal/codegen/\n%s",
				tool.Meta.Name, unifiedDiff(path, "generated", string(want), string(got)))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] && strings.HasSuffix(e.Name(), ".json") {
			if update {
				os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("snapshot %s belongs to no tool; remove it (UPDATE_GOLDEN=1 does)", e.Name())
		}
	}
}

// TestCompactProfileBootstrapFitsItsBudget measures tools/list as served (compact JSON of
// every entry): the compact profile exists to be small, so it must stay within 4 KiB. The full
// profile's size is logged for the benchmark table.
func TestCompactProfileBootstrapFitsItsBudget(t *testing.T) {
	_, m := generateProject(t)
	full, err := m.ToolsListSize(m.Full)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := m.ToolsListSize(m.Compact)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: full profile %d bytes, compact profile %d bytes", full, compact)
	if compact > 4096 {
		t.Errorf("compact profile tools/list is %d bytes, over its 4096-byte budget", compact)
	}
}
