package goapp_test

import (
	"testing"

	"github.com/runlens/runlens/internal/e2e/dbservers"
)

// startServers starts a throwaway MariaDB and Redis for the test, stopped when it ends; it
// returns MariaDB's go-sql-driver DSN and Redis's host:port.
func startServers(t *testing.T) (dsn, redisAddr string) {
	t.Helper()
	m := dbservers.StartMariaDB(t)
	r := dbservers.StartRedis(t)
	return m.DSN(), r.Addr
}
