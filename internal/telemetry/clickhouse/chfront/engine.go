// Package chfront runs the ClickHouse engine in-process for the ClickHouse source's tests and
// benchmarks: chDB (libchdb, loaded without cgo by chdb-go), the OpenTelemetry Collector
// ClickHouse exporter's own table definitions (ddl/, copied unchanged from exporter v0.165.1),
// and a small ClickHouse HTTP interface in front of it, so the official client reaches it as
// it would reach a server.
//
// chdb-go loads libchdb when this package is first used by a binary: CHDB_LIB_PATH names it
// (the Makefile sets it from .ci/install-chdb). Test files that import this package carry the
// chdb build tag, so a build without the library never tries to load it.
package chfront

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/chdb-io/chdb-go/chdb"
)

// LibEnv names the variable holding the path of libchdb.so.
const LibEnv = "CHDB_LIB_PATH"

// Engine is one chDB session. chDB runs one query at a time per session, so queries are
// serialised.
type Engine struct {
	mu  sync.Mutex
	s   *chdb.Session
	dir string
}

var (
	engineOnce sync.Once
	engine     *Engine
	engineErr  error
)

// Shared returns the process's chDB session (chDB allows one per process), opening it in a
// fresh temporary folder on first use.
func Shared() (*Engine, error) {
	engineOnce.Do(func() {
		dir, err := os.MkdirTemp("", "runlens-chdb-")
		if err != nil {
			engineErr = err
			return
		}
		s, err := chdb.NewSession(filepath.Join(dir, "data"))
		if err != nil {
			engineErr = fmt.Errorf("open chdb session: %w", err)
			return
		}
		engine = &Engine{s: s, dir: dir}
	})
	return engine, engineErr
}

// Dir is a scratch folder the engine may read files from.
func (e *Engine) Dir() string { return e.dir }

// Query runs one statement and returns its output in format.
func (e *Engine) Query(sql, format string) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.queryLocked(sql, format)
}

func (e *Engine) queryLocked(sql, format string) ([]byte, error) {
	r, err := e.s.Query(sql, format)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, nil
	}
	defer r.Free()
	if err := r.Error(); err != nil {
		return nil, err
	}
	buf := r.Buf()
	out := make([]byte, len(buf))
	copy(out, buf)
	return out, nil
}

// Exec runs statements in order, stopping at the first failure.
func (e *Engine) Exec(statements ...string) error {
	for _, s := range statements {
		if _, err := e.Query(s, "TabSeparated"); err != nil {
			return fmt.Errorf("%.80s…: %w", s, err)
		}
	}
	return nil
}

// ErrNoLibrary says libchdb is not configured.
var ErrNoLibrary = errors.New("libchdb is not configured: run .ci/install-chdb and set " + LibEnv + " to the path it prints (make test does both)")

// Available reports whether libchdb is configured and present.
func Available() error {
	p := os.Getenv(LibEnv)
	if p == "" {
		return ErrNoLibrary
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%w (%s: %v)", ErrNoLibrary, LibEnv, err)
	}
	return nil
}
