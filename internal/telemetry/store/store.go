package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Defaults for Options fields left zero.
const (
	// DefaultRetention keeps a day of telemetry: enough for "what happened this morning"
	// without letting a chatty app fill the disk.
	DefaultRetention = 24 * time.Hour
	// DefaultMaxBytes bounds the database file at 1 GiB.
	DefaultMaxBytes int64 = 1 << 30
	// busyTimeout is how long a connection waits for another connection's lock before
	// SQLITE_BUSY; generous because a reader must never see "database is locked" while the
	// writer checkpoints.
	busyTimeout = 10 * time.Second
	// readerConns bounds the reader pool; SQLite readers in WAL mode do not block each other.
	readerConns = 4
)

// Errors callers can branch on.
var (
	// ErrNotInitialized is returned by a read-only Open of a file no writer has created yet:
	// there is no data to read, which a caller reports differently from a broken file.
	ErrNotInitialized = errors.New("telemetry store not initialized")
	// ErrSchemaTooNew is returned when the file was written by a newer runlens whose schema this
	// build does not know.
	ErrSchemaTooNew = errors.New("telemetry store schema is newer than this build")
	// ErrClosed is returned by writes after Close.
	ErrClosed = errors.New("telemetry store closed")
)

// Options configures Open. Zero values take the documented defaults.
type Options struct {
	// Path of the SQLite file; its parent directory is created when missing.
	Path string
	// Retention is the age past which rows are pruned (default 24 h).
	Retention time.Duration
	// MaxBytes is the size past which the oldest rows are pruned (default 1 GiB).
	MaxBytes int64
	// ReadOnly opens only reader connections, for a process that queries a store another
	// process writes; ingest and pruning then fail.
	ReadOnly bool
	// Logger receives background pruning failures; nil discards them.
	Logger *slog.Logger
	// FsyncEveryCommit makes every commit wait for the disk (synchronous=FULL). Without it
	// (synchronous=NORMAL, the default) a committed batch survives the process being killed —
	// the guarantee behind the receiver's 200 — and the WAL is fsynced at each checkpoint, so
	// only an operating-system crash or power loss can lose the last fraction of a second of
	// acknowledged telemetry (the file stays consistent either way). Measured on B5, the
	// per-commit fsync costs about a third of the ingest rate.
	FsyncEveryCommit bool
	// Conventions classify spans at ingest into the derived columns the capabilities aggregate
	// (runs, domains, jobs, database operations); nil means the otel preset. Give the store the
	// conventions its engine uses: with other conventions the capabilities decline and the
	// engine answers from scans — correct, slower. When a writable Open finds columns computed
	// with other conventions (or by a build whose engine answers otherwise, or a file from
	// before they existed), it recomputes them in the background, in small transactions queued
	// behind ingest.
	Conventions *conventions.Conventions
	// MaxPendingBytes bounds the batches waiting for the writer (default
	// DefaultMaxPendingBytes); past it ingest answers ErrBusy instead of queueing more.
	MaxPendingBytes int64
}

// Store is the embedded telemetry store: one writer goroutine owning the only write
// connection, and a pool of reader connections for queries.
type Store struct {
	opts       Options
	path       string
	readers    *sql.DB
	writerDB   *sql.DB // nil when read-only
	writer     *writer // nil when read-only
	admission  *admission
	ckpt       *checkpointer
	instanceID string
	// derive computes the derived columns of new rows (writable stores); convFP is the
	// fingerprint of its conventions.
	derive *deriver
	convFP string

	closeOnce sync.Once
	closeErr  error
	bg        sync.WaitGroup // background retention loops
	stopBG    chan struct{}
}

// Open opens (creating and migrating when writable) the store at o.Path.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Path == "" {
		return nil, errors.New("open store: empty path")
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	abs, err := filepath.Abs(o.Path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", o.Path, err)
	}
	s := &Store{opts: o, path: abs, stopBG: make(chan struct{})}
	if !o.ReadOnly {
		conv := o.Conventions
		if conv == nil {
			conv = conventions.Default()
		}
		s.derive, s.convFP = newDeriver(conv), conventionsFingerprint(conv)
	}
	recompute := false

	if o.ReadOnly {
		if _, err := os.Stat(abs); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("open store %s: %w", o.Path, ErrNotInitialized)
			}
			return nil, fmt.Errorf("open store %s: %w", o.Path, err)
		}
	} else {
		if err := mkdirPrivate(filepath.Dir(abs)); err != nil {
			return nil, fmt.Errorf("create store directory: %w", err)
		}
		if err := preparePrivateFile(abs); err != nil {
			return nil, fmt.Errorf("open store %s: %w", o.Path, err)
		}
		s.writerDB, err = sql.Open("sqlite", dsn(abs, true, o.FsyncEveryCommit))
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", o.Path, err)
		}
		s.writerDB.SetMaxOpenConns(1)
		s.writerDB.SetMaxIdleConns(1)
		s.writerDB.SetConnMaxLifetime(0)
		s.writerDB.SetConnMaxIdleTime(0)
		if recompute, err = migrate(ctx, s.writerDB, s.convFP); err != nil {
			s.writerDB.Close()
			return nil, fmt.Errorf("open store %s: %w", o.Path, err)
		}
		if err := makeSidecarsPrivate(abs); err != nil {
			s.writerDB.Close()
			return nil, fmt.Errorf("open store %s: %w", o.Path, err)
		}
	}

	s.readers, err = sql.Open("sqlite", dsn(abs, false, false))
	if err != nil {
		s.closeWriterDB()
		return nil, fmt.Errorf("open store %s: %w", o.Path, err)
	}
	s.readers.SetMaxOpenConns(readerConns)
	s.readers.SetMaxIdleConns(readerConns)
	if err := s.checkReadable(ctx); err != nil {
		s.readers.Close()
		s.closeWriterDB()
		return nil, fmt.Errorf("open store %s: %w", o.Path, err)
	}
	if s.writerDB != nil {
		ckptDB, err := sql.Open("sqlite", dsn(abs, true, o.FsyncEveryCommit))
		if err != nil {
			s.readers.Close()
			s.closeWriterDB()
			return nil, fmt.Errorf("open store %s: %w", o.Path, err)
		}
		ckptDB.SetMaxOpenConns(1)
		s.ckpt = startCheckpointer(ckptDB)
		s.writer = startWriter(s.writerDB, s.derive, s.ckpt.committed)
		s.admission = newAdmission(o.MaxPendingBytes)
		if recompute {
			s.startRecompute()
		}
	}
	return s, nil
}

// dsn builds the driver's connection string. Writing connections get WAL, the durability
// level of Options.FsyncEveryCommit and a large page cache; readers are query_only so query
// code cannot write by mistake. Every connection waits out a lock rather than fail at once.
func dsn(path string, write, fsyncEveryCommit bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	if write {
		// auto_vacuum only takes effect on a new, empty file: it must come before any table.
		q.Add("_pragma", "auto_vacuum(incremental)")
		q.Add("_pragma", "journal_mode(wal)")
		if fsyncEveryCommit {
			q.Add("_pragma", "synchronous(full)")
		} else {
			q.Add("_pragma", "synchronous(normal)")
		}
		// Truncate the WAL back to 64 MiB after a checkpoint instead of keeping its peak size.
		q.Add("_pragma", "journal_size_limit(67108864)")
		// A 16 MiB page cache keeps a group commit's index pages in memory instead of spilling
		// them to the WAL mid-transaction; temp_store keeps statement journals off disk.
		q.Add("_pragma", "cache_size(-16384)")
		q.Add("_pragma", "temp_store(memory)")
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(walBackstopPages)+")")
		q.Add("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// migrate brings the file to SchemaVersion, gives it an instance id and plans the
// recomputation of derived columns computed with other conventions than convFP (recompute is
// true when one is pending), in one transaction so two processes opening a new file at once
// cannot both apply a step.
func migrate(ctx context.Context, db *sql.DB, convFP string) (recompute bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if version > len(migrations) {
		return false, fmt.Errorf("file schema version %d, this build knows %d: %w", version, len(migrations), ErrSchemaTooNew)
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return false, fmt.Errorf("apply migration %d: %w", i+1, err)
		}
	}
	if version < sketchSchemaVersion {
		if err := fillSketchRollups(ctx, tx); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(len(migrations))); err != nil {
		return false, fmt.Errorf("record schema version: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO meta (key, value) VALUES (?, ?), (?, '0') ON CONFLICT (key) DO NOTHING`,
		metaInstanceID, newInstanceID(), metaHighWater); err != nil {
		return false, fmt.Errorf("initialize meta: %w", err)
	}
	if recompute, err = planRecompute(ctx, tx, convFP); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit migration: %w", err)
	}
	return recompute, nil
}

// newInstanceID returns 16 random bytes in hex; crypto/rand never fails on supported platforms.
func newInstanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// checkReadable verifies the schema version through a reader and loads the instance id.
func (s *Store) checkReadable(ctx context.Context) error {
	var version int
	if err := s.readers.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case version == 0:
		return ErrNotInitialized
	case version > len(migrations):
		return fmt.Errorf("file schema version %d, this build knows %d: %w", version, len(migrations), ErrSchemaTooNew)
	case version < len(migrations):
		// Only a writer migrates; a reader of an older file waits for one.
		return fmt.Errorf("file schema version %d, this build needs %d: %w", version, len(migrations), ErrNotInitialized)
	}
	err := s.readers.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", metaInstanceID).Scan(&s.instanceID)
	if err != nil {
		return fmt.Errorf("read instance id: %w", err)
	}
	return nil
}

// DB returns the reader pool. Queries run here never wait for the writer (WAL snapshots);
// the connections are query_only.
func (s *Store) DB() *sql.DB { return s.readers }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// InstanceID identifies this store file; a cursor minted on another file carries another id.
func (s *Store) InstanceID() string { return s.instanceID }

// HighWater returns the last committed ingest sequence number (see the schema doc): every row
// with Seq at or below it is visible to queries started after this call.
func (s *Store) HighWater(ctx context.Context) (int64, error) {
	var v string
	if err := s.readers.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", metaHighWater).Scan(&v); err != nil {
		return 0, fmt.Errorf("read high-water mark: %w", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse high-water mark %q: %w", v, err)
	}
	return n, nil
}

// Close stops background pruning, drains the writer (every queued batch is committed or
// failed) and closes all connections. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stopBG)
		s.bg.Wait()
		if s.writer != nil {
			s.writer.stop()
			s.ckpt.stop()
		}
		var errs []error
		if err := s.readers.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close readers: %w", err))
		}
		if s.writerDB != nil {
			// A last checkpoint keeps the WAL file from lingering at its high-water size.
			_, _ = s.writerDB.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
			if err := s.writerDB.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close writer: %w", err))
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

func (s *Store) logger() *slog.Logger {
	if s.opts.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.opts.Logger
}

func (s *Store) closeWriterDB() {
	if s.writerDB != nil {
		s.writerDB.Close()
	}
}
