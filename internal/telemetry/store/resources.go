package store

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/runlens/runlens/internal/telemetry"
)

// A batch names each distinct resource and instrumentation scope once (resourceScope); its rows
// carry the index of theirs in the place of ResourceScopeId until the writer, inside the
// transaction, turns each into the id of its otel_resource_scopes row (schema.go). The ids the
// writer knows are cached on the write connection: a sender's resource is looked up once, not
// once per batch.

// resourceScope is one distinct resource and scope of a batch, its key and hash (computed once,
// by the sender's goroutine, not by the writer), and the newest Timestamp of the batch's rows
// that carry it.
type resourceScope struct {
	attrs, scopeName, scopeVersion string
	// key identifies it among the others: the three texts, which no JSON object or scope text
	// can make ambiguous with the separator chosen (a JSON object holds no raw control
	// character). hash is its Hash column: FNV-1a over key, as a signed 64-bit integer.
	key    string
	hash   int64
	lastNs int64
}

// resourceIndex collects a batch's distinct resources and scopes in first-seen order.
type resourceIndex struct {
	list  []resourceScope
	byKey map[string]int
}

// add returns the index of (attrs, scopeName, scopeVersion), adding it on first sight. It is
// called once per resource and scope of a batch, not per row: the key is as long as the
// resource.
func (x *resourceIndex) add(attrs, scopeName, scopeVersion string) int {
	k := attrs + "\x00" + scopeName + "\x00" + scopeVersion
	if i, ok := x.byKey[k]; ok {
		return i
	}
	if x.byKey == nil {
		x.byKey = map[string]int{}
	}
	h := fnv.New64a()
	h.Write([]byte(k))
	x.byKey[k] = len(x.list)
	x.list = append(x.list, resourceScope{attrs: attrs, scopeName: scopeName, scopeVersion: scopeVersion,
		key: k, hash: int64(h.Sum64()), lastNs: math.MinInt64})
	return len(x.list) - 1
}

// seen raises the newest Timestamp of resource i to that of a row carrying it.
func (x *resourceIndex) seen(i int, ts int64) {
	x.list[i].lastNs = max(x.list[i].lastNs, ts)
}

// maxCachedResources bounds the ids the writer remembers; past it the cache starts again
// (an app sends a handful of resources; a flood of distinct ones costs a lookup each).
const maxCachedResources = 4096

// resolveResources returns the otel_resource_scopes id of each of list, in order, inserting
// those the table lacks, and raises each one's LastTimestamp to the batch's newest row. The ids
// of rows inserted here are cached only once the transaction commits (writer.commit), so a
// rolled-back insert is never taken for a stored one.
func resolveResources(ctx context.Context, tx *sql.Tx, st *statements, list []resourceScope) ([]int64, error) {
	ids := make([]int64, len(list))
	for i, r := range list {
		if r.lastNs == math.MinInt64 {
			continue // no row of the batch carries it (a scope whose spans were all rejected)
		}
		id, ok := st.resourceIDs[r.key]
		if !ok {
			id, ok = st.pendingResourceIDs[r.key]
		}
		if !ok {
			var inserted bool
			var err error
			if id, inserted, err = lookupResource(ctx, tx, st, r); err != nil {
				return nil, err
			}
			if st.pendingResourceIDs == nil {
				st.pendingResourceIDs = map[string]int64{}
			}
			st.pendingResourceIDs[r.key] = id
			if inserted {
				ids[i] = id // inserted with the batch's newest time already
				continue
			}
		}
		if _, err := tx.StmtContext(ctx, st.touchResource).ExecContext(ctx, r.lastNs, id); err != nil {
			return nil, fmt.Errorf("update resource: %w", err)
		}
		ids[i] = id
	}
	return ids, nil
}

// lookupResource finds r's row by hash and texts, or inserts it (inserted true).
func lookupResource(ctx context.Context, tx *sql.Tx, st *statements, r resourceScope) (id int64, inserted bool, err error) {
	err = tx.StmtContext(ctx, st.findResource).QueryRowContext(ctx, r.hash, r.attrs, r.scopeName, r.scopeVersion).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if err != sql.ErrNoRows {
		return 0, false, fmt.Errorf("find resource: %w", err)
	}
	err = tx.StmtContext(ctx, st.insertResource).QueryRowContext(ctx, r.hash, r.attrs, r.scopeName, r.scopeVersion, r.lastNs).Scan(&id)
	if err != nil {
		return 0, false, fmt.Errorf("insert resource: %w", err)
	}
	return id, true, nil
}

// settleResourceCache keeps the ids a transaction resolved once it committed, and forgets them
// when it did not.
func (st *statements) settleResourceCache(committed bool) {
	if committed && len(st.pendingResourceIDs) > 0 {
		if st.resourceIDs == nil || len(st.resourceIDs)+len(st.pendingResourceIDs) > maxCachedResources {
			st.resourceIDs = make(map[string]int64, len(st.pendingResourceIDs))
		}
		for k, id := range st.pendingResourceIDs {
			st.resourceIDs[k] = id
		}
	}
	clear(st.pendingResourceIDs)
}

// pruneResourcesSQL deletes the resources no row refers to any more: those whose newest row is
// older than the oldest row left in either table (every row is at most its resource's
// LastTimestamp, and pruning deletes oldest first, so such a resource's rows are all gone).
// With no row left at all, every resource goes.
const pruneResourcesSQL = `DELETE FROM ` + ResourceScopesTable + ` WHERE LastTimestamp < COALESCE(
	(SELECT MIN(t) FROM (SELECT MIN(Timestamp) AS t FROM ` + TracesTable + ` UNION ALL SELECT MIN(Timestamp) FROM ` + LogsTable + `)),
	9223372036854775807)`

// pruneResources deletes the resources no row refers to, in a solo transaction, and empties the
// writer's cache of ids so none of them is used again.
func (s *Store) pruneResources(ctx context.Context) (int64, error) {
	var n int64
	err := s.writer.submit(ctx, 0, true, func(ctx context.Context, tx *sql.Tx, st *statements, _ *int64) error {
		res, err := tx.ExecContext(ctx, pruneResourcesSQL)
		if err != nil {
			return fmt.Errorf("prune resources: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("prune resources: %w", err)
		}
		if n > 0 {
			clear(st.resourceIDs)
		}
		return nil
	})
	return n, err
}

// resourceColumn is the expression a query over table reads a row's resource attributes with.
func resourceColumn(table string) string { return resourceScopeColumn(table, "ResourceAttributes") }

// resourceScopeColumn is the expression a query over table reads column (ResourceAttributes,
// ScopeName or ScopeVersion) of a row with: the row's own text when it was written before
// schema version 6, else its resource row's.
// A row can only lose its resource row to a bug; it then reads as an empty resource rather
// than fail the query it is in.
func resourceScopeColumn(table, column string) string {
	empty := "''"
	if column == "ResourceAttributes" {
		empty = "'{}'"
	}
	return `CASE WHEN ` + table + `.ResourceScopeId IS NULL THEN ` + table + `.` + column + ` ELSE COALESCE((SELECT r.` + column + ` FROM ` +
		ResourceScopesTable + ` r WHERE r.Id = ` + table + `.ResourceScopeId), ` + empty + `) END`
}

// invocationFilter is the condition that a row of table was written by the invocation bound
// twice after it (telemetry.InvocationKey in its resource): the resources that carry it are few,
// so it is looked up there, and the rows of older files by their own text.
func invocationFilter(table string) string {
	return `(` + table + `.ResourceScopeId IN (SELECT r.Id FROM ` + ResourceScopesTable + ` r WHERE json_extract(r.ResourceAttributes, '$."` +
		telemetry.InvocationKey + `"') = ?) OR (` + table + `.ResourceScopeId IS NULL AND json_extract(` + table + `.ResourceAttributes, '$."` +
		telemetry.InvocationKey + `"') = ?))`
}
