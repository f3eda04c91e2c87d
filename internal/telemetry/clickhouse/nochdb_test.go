//go:build !chdb

package clickhouse_test

import (
	"os"
	"testing"
)

// The ClickHouse source is tested on the real ClickHouse engine, in-process (chDB). Its tests
// carry the chdb build tag because chdb-go loads libchdb when the test binary starts: make test
// installs the library (.ci/install-chdb), names it in CHDB_LIB_PATH and sets the tag. A build
// without the tag must not pass for a tested one in CI.
func TestTheClickHouseSourceRunsOnChDB(t *testing.T) {
	const msg = "the ClickHouse source's tests need chDB: run them with make test (or: CHDB_LIB_PATH=$(.ci/install-chdb) go test -tags chdb ./internal/telemetry/clickhouse/...)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
