package store

import (
	"database/sql"
	"time"
)

// Checkpointing copies committed pages from the write-ahead log back into the database file.
// SQLite does it inside the commit that crosses wal_autocheckpoint, on the writer's path; here a
// separate connection does it in the background instead, so the writer goes straight on to the
// next group and pages rewritten by many commits (index leaves, the table's last page) are
// copied once. The writer keeps a large wal_autocheckpoint as a backstop should this fall behind.
const (
	checkpointEvery = 250 * time.Millisecond
	// walBackstopPages is the writer's own wal_autocheckpoint (64 MiB of 4 KiB pages).
	walBackstopPages = 16384
)

// checkpointer runs PASSIVE checkpoints (never blocking the writer or readers) at most every
// checkpointEvery, and only after something was committed.
type checkpointer struct {
	db     *sql.DB
	kick   chan struct{}
	quit   chan struct{}
	exited chan struct{}
}

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{
		db:     db,
		kick:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	go c.loop()
	return c
}

// committed tells the checkpointer there is new work; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.exited)
	t := time.NewTimer(checkpointEvery)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-c.kick:
		}
		// A failed or partial checkpoint (busy) is fine: the next one resumes it.
		_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		t.Reset(checkpointEvery)
		select {
		case <-c.quit:
			return
		case <-t.C:
		}
	}
}

func (c *checkpointer) stop() {
	close(c.quit)
	<-c.exited
	c.db.Close()
}
