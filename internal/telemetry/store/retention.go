package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Pruning works in small solo transactions queued behind ingest, so a large prune delays a
// waiting batch by one small delete at most, and readers (WAL snapshots) never wait at all.
const (
	pruneBatchRows = 2000
	// vacuumBatchPages is how many free pages one incremental_vacuum step returns to the OS.
	vacuumBatchPages = 2048
	// sizeTargetRatio: size pruning goes down to this fraction of MaxBytes, so a store at its
	// limit does not prune a sliver after every batch.
	sizeTargetRatio = 0.9
)

// Prune deletes rows older than the retention and then, while the store is larger than
// MaxBytes, the oldest rows of either table, and returns the freed pages to the file system.
// It returns how many rows it deleted. Ingest continues meanwhile.
func (s *Store) Prune(ctx context.Context) (deleted int64, err error) {
	if s.writer == nil {
		return 0, ErrReadOnly
	}
	cutoff := time.Now().Add(-s.opts.Retention).UnixNano()
	for _, table := range []string{TracesTable, LogsTable} {
		n, err := s.pruneOlderThan(ctx, table, cutoff)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	n, err := s.pruneToSize(ctx)
	deleted += n
	if err != nil {
		return deleted, err
	}
	if deleted > 0 {
		if _, err := s.pruneResources(ctx); err != nil {
			return deleted, err
		}
	}
	if err := s.releaseFreePages(ctx); err != nil {
		return deleted, err
	}
	return deleted, nil
}

// pruneOlderThan deletes table rows with Timestamp before cutoff, a batch per transaction.
func (s *Store) pruneOlderThan(ctx context.Context, table string, cutoff int64) (int64, error) {
	query := `DELETE FROM ` + table + ` WHERE Seq IN (SELECT Seq FROM ` + table +
		` WHERE Timestamp < ? ORDER BY Timestamp LIMIT ?)` + deletedColumns(table)
	var total int64
	for {
		n, err := s.deleteBatch(ctx, table, query, cutoff, pruneBatchRows)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune %s by age: %w", table, err)
		}
		if n < pruneBatchRows {
			return total, nil
		}
	}
}

// pruneToSize deletes the oldest rows, always from the table holding the oldest one so both
// age together, until the used size is under the target. Each batch is sized from the average
// row size so a small store is not emptied by one coarse batch.
func (s *Store) pruneToSize(ctx context.Context) (int64, error) {
	target := int64(float64(s.opts.MaxBytes) * sizeTargetRatio)
	used, err := s.usedBytes(ctx)
	if err != nil || used <= s.opts.MaxBytes {
		return 0, err
	}
	var rows int64
	if err := s.readers.QueryRowContext(ctx,
		`SELECT (SELECT COUNT(*) FROM `+TracesTable+`) + (SELECT COUNT(*) FROM `+LogsTable+`)`).Scan(&rows); err != nil {
		return 0, fmt.Errorf("count rows: %w", err)
	}
	rowBytes := max(used/max(rows, 1), 1)
	var total int64
	for used > target {
		table, ok, err := s.tableWithOldestRow(ctx)
		if err != nil {
			return total, err
		}
		if !ok {
			return total, nil // nothing left to delete: the size is schema and free pages
		}
		batch := min((used-target)/rowBytes+1, pruneBatchRows)
		query := `DELETE FROM ` + table + ` WHERE Seq IN (SELECT Seq FROM ` + table +
			` ORDER BY Timestamp LIMIT ?)` + deletedColumns(table)
		n, err := s.deleteBatch(ctx, table, query, batch)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune %s by size: %w", table, err)
		}
		if used, err = s.usedBytes(ctx); err != nil {
			return total, err
		}
	}
	return total, nil
}

// deletedColumns is the RETURNING clause of a delete from table: what the rollups need to
// subtract the deleted rows, and what settling their traces needs.
func deletedColumns(table string) string {
	if table == TracesTable {
		return ` RETURNING Timestamp, ServiceName, IsError, IsRoot, COALESCE(Domain, ''), RunErrored,
			COALESCE(DbKey, ''), COALESCE(DbSystem, ''), Duration, IsOrigin, TraceId, SpanId, IsEntry, SpanName,
			COALESCE(OccDomain, ''), COALESCE(Fingerprint, '')`
	}
	return ` RETURNING Timestamp, ServiceName, IsError, TraceFailing, TraceId`
}

// deleteBatch runs one DELETE … RETURNING deletedColumns(table), subtracts the deleted rows
// from the rollups and settles the traces they belonged to, in the same transaction.
func (s *Store) deleteBatch(ctx context.Context, table, query string, args ...any) (int64, error) {
	var n int64
	err := s.writer.submit(ctx, 0, true, func(ctx context.Context, tx *sql.Tx, st *statements, _ *int64) error {
		n = 0
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		roll := &st.roll
		var gone deletedRows
		for rows.Next() {
			var ns, isError, isRoot, runErr, duration, isOrigin, isEntry int64
			var service, domain, key, system, trace, span, name, occDomain, fp string
			dest := []any{&ns, &service, &isError}
			if table == TracesTable {
				dest = append(dest, &isRoot, &domain, &runErr, &key, &system, &duration, &isOrigin, &trace, &span, &isEntry, &name, &occDomain, &fp)
			} else {
				dest = append(dest, &isOrigin, &trace) // TraceFailing, TraceId
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			n++
			if table == TracesTable {
				roll.addSpan(ns, service, -1)
				roll.addOrigin(ns, service, -isOrigin)
				if isOrigin == 1 {
					roll.addOccurrence(ns, service, occDomain, fp, -1)
				}
				if isRoot == 1 {
					roll.addRun(ns, service, domain, -1, -runErr)
				}
				if key != "" {
					roll.addDB(ns, key, service, system, duration, isError, -1)
				}
				if isEntry == 1 {
					roll.addEntry(ns, service, name, duration, isError, -1)
				}
				gone.span(trace, span, isError == 1)
				continue
			}
			folded := isOrigin // TraceFailing
			roll.addLog(ns, service, isError*(1-folded), -1)
			if isError == 1 && folded == 1 {
				gone.foldedLog(trace)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return settleDeleted(ctx, tx, st, &gone) // the writer applies st.roll before it commits
	})
	return n, err
}

// tableWithOldestRow names the table whose oldest row is older; ok is false when both are
// empty.
func (s *Store) tableWithOldestRow(ctx context.Context) (table string, ok bool, err error) {
	var traces, logs sql.NullInt64
	err = s.readers.QueryRowContext(ctx,
		`SELECT (SELECT MIN(Timestamp) FROM `+TracesTable+`), (SELECT MIN(Timestamp) FROM `+LogsTable+`)`).
		Scan(&traces, &logs)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("find oldest rows: %w", err)
	case !traces.Valid && !logs.Valid:
		return "", false, nil
	case !logs.Valid || (traces.Valid && traces.Int64 <= logs.Int64):
		return TracesTable, true, nil
	default:
		return LogsTable, true, nil
	}
}

// usedBytes is the size of the pages holding data: the file size minus its free pages.
func (s *Store) usedBytes(ctx context.Context) (int64, error) {
	var used int64
	err := s.readers.QueryRowContext(ctx,
		`SELECT (p.page_count - f.freelist_count) * z.page_size
		 FROM pragma_page_count() AS p, pragma_freelist_count() AS f, pragma_page_size() AS z`).Scan(&used)
	if err != nil {
		return 0, fmt.Errorf("measure store size: %w", err)
	}
	return used, nil
}

// releaseFreePages shrinks the file by its free pages, a few at a time (auto_vacuum is
// incremental on files this package created; elsewhere this is a no-op).
func (s *Store) releaseFreePages(ctx context.Context) error {
	for {
		var free int64
		if err := s.readers.QueryRowContext(ctx, `SELECT freelist_count FROM pragma_freelist_count()`).Scan(&free); err != nil {
			return fmt.Errorf("count free pages: %w", err)
		}
		if free == 0 {
			return nil
		}
		err := s.writer.submit(ctx, 0, true, func(ctx context.Context, tx *sql.Tx, _ *statements, _ *int64) error {
			rows, err := tx.QueryContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", vacuumBatchPages))
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				rows.Close()
				return err
			}
			return rows.Close()
		})
		if err != nil {
			return fmt.Errorf("release free pages: %w", err)
		}
		var after int64
		if err := s.readers.QueryRowContext(ctx, `SELECT freelist_count FROM pragma_freelist_count()`).Scan(&after); err != nil {
			return fmt.Errorf("count free pages: %w", err)
		}
		if after >= free {
			return nil // auto_vacuum is off for this file: nothing more will be released
		}
	}
}

// StartRetention prunes now and then every interval in the background until ctx ends or the
// store closes. Failures are logged through Options.Logger and retried at the next tick.
func (s *Store) StartRetention(ctx context.Context, every time.Duration) {
	if s.writer == nil || every <= 0 {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-s.stopBG:
				cancel()
			case <-ctx.Done():
			}
		}()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			n, err := s.Prune(ctx)
			switch {
			case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed):
				s.logger().Warn("telemetry store pruning failed", "err", err, "deleted", n)
			case n > 0:
				s.logger().Debug("telemetry store pruned", "deleted", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}
