package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync"
)

// Group-commit bounds: one transaction takes every batch already waiting, up to these, so
// concurrent senders share a commit (one fsync) instead of queueing for one each.
const (
	maxGroupJobs = 64
	maxGroupRows = 16384
	queueDepth   = 64
)

// writeFunc writes one job's rows inside tx. nextSeq is the next free ingest sequence number;
// a writeFunc that inserts rows advances it by the number of rows it inserted.
type writeFunc func(ctx context.Context, tx *sql.Tx, st *statements, nextSeq *int64) error

// job is one unit of work for the writer goroutine.
type job struct {
	ctx  context.Context
	rows int
	solo bool // never shares a transaction (pruning: its cost must not delay acks it shares)
	// inserts are the INSERT statements run uses, prepared before the transaction begins.
	inserts []insertKey
	run     writeFunc
	done    chan error
}

// writer owns the only write connection. All writes — ingest and pruning — go through its
// queue, so SQLite's single-writer lock is never contended inside this process and a
// reader never sees "database is locked".
type writer struct {
	db   *sql.DB
	dv   *deriver
	st   *statements
	jobs chan *job
	// onCommit is called after every successful commit (it must not block).
	onCommit func()

	mu     sync.RWMutex
	closed bool
	quit   chan struct{}
	exited chan struct{}
}

func startWriter(db *sql.DB, dv *deriver, onCommit func()) *writer {
	w := &writer{
		db:       db,
		dv:       dv,
		onCommit: onCommit,
		jobs:     make(chan *job, queueDepth),
		quit:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	go w.loop()
	return w
}

// submit queues run and waits for its transaction to commit: nil means committed. Once
// queued, the job is waited for even if ctx ends — the writer skips a job whose ctx already
// ended and otherwise finishes it promptly — so run never outlives the call and may write to
// the caller's variables.
func (w *writer) submit(ctx context.Context, rows int, solo bool, run writeFunc) error {
	return w.enqueue(&job{ctx: ctx, rows: rows, solo: solo, run: run, done: make(chan error, 1)})
}

// submitInserts is submit for a groupable ingest job whose run needs the INSERT statements of
// inserts.
func (w *writer) submitInserts(ctx context.Context, rows int, inserts []insertKey, run writeFunc) error {
	return w.enqueue(&job{ctx: ctx, rows: rows, inserts: inserts, run: run, done: make(chan error, 1)})
}

func (w *writer) enqueue(j *job) error {
	ctx := j.ctx
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	return <-j.done
}

// stop refuses new jobs, finishes the queued ones and waits for the goroutine to exit.
func (w *writer) stop() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	close(w.quit)
	<-w.exited
}

func (w *writer) loop() {
	defer close(w.exited)
	for {
		select {
		case j := <-w.jobs:
			w.runGroup(w.gather(j))
		case <-w.quit:
			for {
				select {
				case j := <-w.jobs:
					w.runGroup(w.gather(j))
				default:
					if w.st != nil {
						w.st.close()
					}
					return
				}
			}
		}
	}
}

// gather takes first plus whatever groupable jobs are already queued.
func (w *writer) gather(first *job) []*job {
	group := []*job{first}
	if first.solo {
		return group
	}
	rows := first.rows
	for len(group) < maxGroupJobs && rows < maxGroupRows {
		select {
		case j := <-w.jobs:
			if j.solo {
				// Run it alone right after this group rather than reorder the queue.
				w.runGroup(group)
				return []*job{j}
			}
			group = append(group, j)
			rows += j.rows
		default:
			return group
		}
	}
	return group
}

// runGroup commits the group in one transaction. If that fails, each job is retried alone so
// one bad batch cannot fail its neighbours, and every job is answered exactly once.
func (w *writer) runGroup(group []*job) {
	live := group[:0]
	for _, j := range group {
		if err := j.ctx.Err(); err != nil {
			j.done <- err
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	err := w.commit(live)
	if err == nil || len(live) == 1 {
		for _, j := range live {
			j.done <- err
		}
		return
	}
	for _, j := range live {
		j.done <- w.commit([]*job{j})
	}
}

// commit runs jobs in one transaction and advances the high-water mark in the same one. The
// transaction's context is not any caller's: one sender hanging up must not roll back the
// batches of the others.
func (w *writer) commit(jobs []*job) (err error) {
	ctx := context.Background()
	defer func() {
		if w.st != nil {
			w.st.settleResourceCache(err == nil)
		}
	}()
	if w.st == nil {
		st, err := prepareStatements(ctx, w.db)
		if err != nil {
			return err
		}
		st.dv = w.dv
		w.st = st
	}
	for _, j := range jobs {
		if err := w.st.prepareInserts(ctx, w.db, j.inserts); err != nil {
			return err
		}
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var hw string
	if err := tx.Stmt(w.st.readHighWater).QueryRowContext(ctx).Scan(&hw); err != nil {
		return fmt.Errorf("read high-water mark: %w", err)
	}
	start, err := strconv.ParseInt(hw, 10, 64)
	if err != nil {
		return fmt.Errorf("parse high-water mark %q: %w", hw, err)
	}
	next := start + 1
	w.st.roll = rollup{}
	w.st.reshape = map[string]bool{}
	for _, j := range jobs {
		if err := j.run(ctx, tx, w.st, &next); err != nil {
			return err
		}
	}
	if err := settleReshapes(ctx, tx, w.st); err != nil {
		return err
	}
	if err := w.st.roll.apply(ctx, tx, w.st); err != nil {
		return err
	}
	if next-1 != start {
		if _, err := tx.Stmt(w.st.writeHighWater).ExecContext(ctx, strconv.FormatInt(next-1, 10)); err != nil {
			return fmt.Errorf("write high-water mark: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	w.onCommit()
	return nil
}
