package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Stats describes the store for doctor and get_app_status: how much it holds, over what time
// span, and whether the file is sound.
type Stats struct {
	Path       string
	InstanceID string
	Spans      int64
	Logs       int64
	// FileBytes is the database file plus its write-ahead log, as on disk.
	FileBytes int64
	// UsedBytes excludes free pages; it is what size-based retention compares with MaxBytes.
	UsedBytes int64
	// Oldest and Newest are the extreme row timestamps over both tables; zero when empty.
	Oldest, Newest time.Time
	HighWater      int64
	Retention      time.Duration
	MaxBytes       int64
	// Integrity is "ok" or the first problems SQLite's quick_check reports.
	Integrity string
	// Recomputing is true while the derived columns are being recomputed for other
	// conventions (or after a migration); the engine then answers from scans, more slowly.
	Recomputing bool
}

// Stats reads the counts, sizes and time span, and runs SQLite's quick_check (a full read of
// the file: seconds on a store near its size limit, so call it on demand, not per request).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Path: s.path, InstanceID: s.instanceID, Retention: s.opts.Retention, MaxBytes: s.opts.MaxBytes}
	err := s.readers.QueryRowContext(ctx,
		`SELECT (SELECT COUNT(*) FROM `+TracesTable+`), (SELECT COUNT(*) FROM `+LogsTable+`)`).
		Scan(&st.Spans, &st.Logs)
	if err != nil {
		return Stats{}, fmt.Errorf("read store counts: %w", err)
	}
	if st.Oldest, st.Newest, err = s.timeSpan(ctx); err != nil {
		return Stats{}, err
	}
	if st.UsedBytes, err = s.usedBytes(ctx); err != nil {
		return Stats{}, err
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Stats{}, fmt.Errorf("stat store file: %w", err)
		}
		if err == nil {
			st.FileBytes += fi.Size()
		}
	}
	if st.HighWater, err = s.HighWater(ctx); err != nil {
		return Stats{}, err
	}
	if _, st.Recomputing, err = metaValue(ctx, s.readers, metaDerivedRecompute); err != nil {
		return Stats{}, err
	}
	if st.Integrity, err = s.quickCheck(ctx); err != nil {
		return Stats{}, err
	}
	return st, nil
}

// timeSpan returns the oldest and newest row timestamps over both tables (zero when empty);
// each MIN/MAX is an index lookup.
func (s *Store) timeSpan(ctx context.Context) (oldest, newest time.Time, err error) {
	var lo, hi sql.NullInt64
	err = s.readers.QueryRowContext(ctx, `SELECT MIN(t), MAX(t) FROM (
		SELECT MIN(Timestamp) AS t FROM `+TracesTable+` UNION ALL SELECT MAX(Timestamp) FROM `+TracesTable+`
		UNION ALL SELECT MIN(Timestamp) FROM `+LogsTable+` UNION ALL SELECT MAX(Timestamp) FROM `+LogsTable+`)`).
		Scan(&lo, &hi)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("read store time span: %w", err)
	}
	return nullTime(lo), nullTime(hi), nil
}

// quickCheck joins up to ten problems reported by PRAGMA quick_check.
func (s *Store) quickCheck(ctx context.Context) (string, error) {
	rows, err := s.readers.QueryContext(ctx, "PRAGMA quick_check(10)")
	if err != nil {
		return "", fmt.Errorf("check store integrity: %w", err)
	}
	defer rows.Close()
	var out string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", fmt.Errorf("check store integrity: %w", err)
		}
		if out != "" {
			out += "; "
		}
		out += line
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("check store integrity: %w", err)
	}
	return out, nil
}

func nullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.Unix(0, v.Int64).UTC()
}
