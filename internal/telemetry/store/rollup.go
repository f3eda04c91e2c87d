package store

import (
	"context"
	"database/sql"
	"fmt"
)

// rollup accumulates changes to the activity rollups (schema.go) within one transaction and
// applies them at its end, one upsert per bucket touched.
type rollup struct {
	activity map[activityKey]*activityCounts
	runs     map[runKey]*runCounts
	db       map[dbKey]*dbCounts
	entries  map[entryKey]*durCounts
	groups   map[groupKey]int64
}

// groupKey is an error group of the occurrence rollup in one bucket: its fingerprint, domain
// and stored service name joined by ASCII unit separators (occurrenceGroup).
type groupKey struct {
	bucket int64
	group  string
}

// occurrenceGroup is the occurrence rollup's GroupKey of a stored service name, domain and
// fingerprint; the service name comes last, the one part that is not the project's own text.
func occurrenceGroup(service, domain, fingerprint string) string {
	return fingerprint + "\x1f" + domain + "\x1f" + service
}

// addOccurrence counts n origin spans (n negative to remove them) of an error group at ns.
func (r *rollup) addOccurrence(ns int64, service, domain, fingerprint string, n int64) {
	if r.groups == nil {
		r.groups = map[groupKey]int64{}
	}
	r.groups[groupKey{bucketOf(ns), occurrenceGroup(service, domain, fingerprint)}] += n
}

type activityKey struct {
	bucket  int64
	service string
}

type activityCounts struct{ spans, spanOcc, logs, logOcc int64 }

type runKey struct {
	bucket          int64
	service, domain string
}

type runCounts struct{ runs, errored int64 }

type dbKey struct {
	bucket               int64
	key, service, system string
}

type dbCounts = durCounts

type entryKey struct {
	bucket        int64
	service, name string
}

// durCounts are a rollup row's span count, total duration and error count, and the sketch of
// the durations (sketch.go).
type durCounts struct {
	spans, duration, errors int64
	sk                      sketch
}

func (c *durCounts) add(duration, isError, n int64) {
	c.spans += n
	c.duration += duration * n
	c.errors += isError * n
	if c.sk == nil {
		c.sk = sketch{}
	}
	c.sk.add(duration, n)
}

func (c *durCounts) zero() bool {
	return c.spans == 0 && c.duration == 0 && c.errors == 0 && len(c.sk) == 0
}

func bucketOf(ns int64) int64 { return ns / bucketNs }

// addSpan counts n spans (n is -1 for a deleted one) at ns.
func (r *rollup) addSpan(ns int64, service string, n int64) { r.activityAt(ns, service).spans += n }

// addOrigin counts n origin spans (error occurrences) starting at ns.
func (r *rollup) addOrigin(ns int64, service string, n int64) { r.activityAt(ns, service).spanOcc += n }

// addLog counts n log records at ns, lone of them occurrences of their own.
func (r *rollup) addLog(ns int64, service string, lone, n int64) {
	c := r.activityAt(ns, service)
	c.logs += n
	c.logOcc += lone * n
}

// addLoneLog counts n more error records at ns as occurrences of their own (negative when
// their trace turned out to fail).
func (r *rollup) addLoneLog(ns int64, service string, n int64) { r.activityAt(ns, service).logOcc += n }

// addRun adds runs roots and errored errored roots to a domain's bucket (negative to remove).
func (r *rollup) addRun(ns int64, service, domain string, runs, errored int64) {
	if r.runs == nil {
		r.runs = map[runKey]*runCounts{}
	}
	k := runKey{bucketOf(ns), service, domain}
	c := r.runs[k]
	if c == nil {
		c = &runCounts{}
		r.runs[k] = c
	}
	c.runs += runs
	c.errored += errored
}

// addDB counts n database operation spans (n is -1 to remove one) of key at ns.
func (r *rollup) addDB(ns int64, key, service, system string, duration, isError, n int64) {
	if r.db == nil {
		r.db = map[dbKey]*dbCounts{}
	}
	k := dbKey{ns / dbBucketNs, key, service, system}
	c := r.db[k]
	if c == nil {
		c = &dbCounts{}
		r.db[k] = c
	}
	c.add(duration, isError, n)
}

// addEntry counts n entry spans (n is -1 to remove one) named name of service at ns.
func (r *rollup) addEntry(ns int64, service, name string, duration, isError, n int64) {
	if r.entries == nil {
		r.entries = map[entryKey]*durCounts{}
	}
	k := entryKey{bucketOf(ns), service, name}
	c := r.entries[k]
	if c == nil {
		c = &durCounts{}
		r.entries[k] = c
	}
	c.add(duration, isError, n)
}

func (r *rollup) activityAt(ns int64, service string) *activityCounts {
	if r.activity == nil {
		r.activity = map[activityKey]*activityCounts{}
	}
	k := activityKey{bucketOf(ns), service}
	c := r.activity[k]
	if c == nil {
		c = &activityCounts{}
		r.activity[k] = c
	}
	return c
}

// apply writes the accumulated changes and deletes the buckets they emptied (a count below
// zero would be a bug; it is left in place for the tests to see).
func (r *rollup) apply(ctx context.Context, tx *sql.Tx, st *statements) error {
	if len(r.activity) > 0 {
		add, drop := tx.StmtContext(ctx, st.addActivity), tx.StmtContext(ctx, st.dropActivity)
		for k, c := range r.activity {
			if *c == (activityCounts{}) {
				continue
			}
			if _, err := add.ExecContext(ctx, k.bucket, k.service, c.spans, c.spanOcc, c.logs, c.logOcc); err != nil {
				return fmt.Errorf("update activity rollup: %w", err)
			}
			if c.spans < 0 || c.logs < 0 {
				if _, err := drop.ExecContext(ctx, k.bucket, k.service); err != nil {
					return fmt.Errorf("update activity rollup: %w", err)
				}
			}
		}
	}
	if len(r.runs) > 0 {
		add, drop := tx.StmtContext(ctx, st.addRunActivity), tx.StmtContext(ctx, st.dropRunActivity)
		for k, c := range r.runs {
			if *c == (runCounts{}) {
				continue
			}
			if _, err := add.ExecContext(ctx, k.bucket, k.service, k.domain, c.runs, c.errored); err != nil {
				return fmt.Errorf("update run rollup: %w", err)
			}
			if c.runs < 0 {
				if _, err := drop.ExecContext(ctx, k.bucket, k.service, k.domain); err != nil {
					return fmt.Errorf("update run rollup: %w", err)
				}
			}
		}
	}
	if len(r.groups) > 0 {
		add, drop := tx.StmtContext(ctx, st.addGroupAct), tx.StmtContext(ctx, st.dropGroupAct)
		for k, n := range r.groups {
			if n == 0 {
				continue
			}
			if _, err := add.ExecContext(ctx, k.group, k.bucket, n); err != nil {
				return fmt.Errorf("update occurrence rollup: %w", err)
			}
			if n < 0 {
				if _, err := drop.ExecContext(ctx, k.group, k.bucket); err != nil {
					return fmt.Errorf("update occurrence rollup: %w", err)
				}
			}
		}
	}
	if len(r.db) == 0 && len(r.entries) == 0 {
		return nil
	}
	return r.applyDurations(ctx, tx.StmtContext(ctx, st.addDBActivity), tx.StmtContext(ctx, st.dropDBActivity),
		tx.StmtContext(ctx, st.addEntryAct), tx.StmtContext(ctx, st.dropEntryAct))
}

// applyDurations writes the accumulated changes of the database and entry span rollups with
// the given upsert and delete statements (statements.go).
func (r *rollup) applyDurations(ctx context.Context, addDB, dropDB, addEntry, dropEntry *sql.Stmt) error {
	if len(r.db) > 0 {
		add, drop := addDB, dropDB
		for k, c := range r.db {
			if c.zero() {
				continue
			}
			if _, err := add.ExecContext(ctx, k.bucket, k.key, k.service, k.system, c.spans, c.duration, c.errors, c.sk.encode()); err != nil {
				return fmt.Errorf("update database rollup: %w", err)
			}
			if c.spans < 0 {
				if _, err := drop.ExecContext(ctx, k.bucket, k.key, k.service, k.system); err != nil {
					return fmt.Errorf("update database rollup: %w", err)
				}
			}
		}
	}
	if len(r.entries) > 0 {
		add, drop := addEntry, dropEntry
		for k, c := range r.entries {
			if c.zero() {
				continue
			}
			if _, err := add.ExecContext(ctx, k.bucket, k.service, k.name, c.spans, c.duration, c.errors, c.sk.encode()); err != nil {
				return fmt.Errorf("update entry span rollup: %w", err)
			}
			if c.spans < 0 {
				if _, err := drop.ExecContext(ctx, k.bucket, k.service, k.name); err != nil {
					return fmt.Errorf("update entry span rollup: %w", err)
				}
			}
		}
	}
	return nil
}
