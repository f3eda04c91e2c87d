package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// derivationVersion changes whenever the code below gives a derived column another meaning,
// so that files computed by an older build are recomputed rather than misread. Version 2 is
// the engine's semantics (schema version 3).
const derivationVersion = 3

// conventionsFingerprint identifies the derived columns' inputs: the conventions document, the
// derivation code (derivationVersion) and the engine's semantics (telemetry.SemanticsVersion,
// which a golden test of what the engine answers over the fixture holds to the code). The store
// records it in meta; a capability asked with other conventions, or while a recomputation is
// unfinished, does not trust the derived columns.
func conventionsFingerprint(c *conventions.Conventions) string {
	doc, err := json.Marshal(c)
	if err != nil { // a struct of strings and slices always encodes
		doc = nil
	}
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(derivationVersion) + "\x00" + strconv.Itoa(telemetry.SemanticsVersion) + "\x00"))
	h.Write(doc)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// spanDerived are the columns one span's own fields give (schema.go); the trace-level ones
// (IsEntry, TraceErrored, occurrences) are maintained per trace (shape.go).
type spanDerived struct {
	// RunID and Domain are set on roots: TraceRun's run id (empty when the trace is the run)
	// and domain.
	RunID, Domain string
	// Verdict, on roots, encodes the run's normalized status: bit 0 is set when the run failed
	// in a trace without an error span, bit 1 in a trace with one. Since a run's verdict is its
	// root's own (docs/semantics.md R5) the two bits are equal; the encoding stays so that files
	// written by earlier builds read alike once recomputed.
	Verdict int64
	// JobID and JobName are set on job spans (JobFromSpan).
	JobID, JobName string
	// DBKey and DBSystem are set on database operation spans (DBOperationOf).
	DBKey, DBSystem string
}

// runErrored is a root's RunErrored: its verdict's bit for whether the trace has an error span.
func runErrored(verdict int64, traceErrored bool) int64 {
	return (verdict >> boolInt(traceErrored)) & 1
}

// deriver computes derived columns with one conventions document. It remembers the database
// operation of recent statements: normalizing a statement costs more than the rest of the
// derivation together, and applications send the same statements over and over.
type deriver struct {
	conv *conventions.Conventions
	// dbScan is the filter DBOperations scans database spans with.
	dbScan telemetry.SpanScan
	mu     sync.Mutex
	dbOps  map[string]conventions.DBOperation
}

// maxCachedStatements bounds the remembered operations; the cache starts over when full.
const maxCachedStatements = 4096

func newDeriver(conv *conventions.Conventions) *deriver {
	return &deriver{conv: conv, dbScan: telemetry.SpanScan{AttrKeys: telemetry.DBAttrKeys(conv)}, dbOps: map[string]conventions.DBOperation{}}
}

// deriveSpan computes a span's own derived columns with the engine's functions. s carries its
// attributes; its events are not read.
func (dv *deriver) deriveSpan(s *telemetry.SpanRow) spanDerived {
	conv := dv.conv
	var d spanDerived
	if s.IsRoot() {
		run := telemetry.TraceRun(conv, []telemetry.SpanRow{*s})
		if run.ID != s.TraceID {
			d.RunID = run.ID
		}
		d.Domain = run.Domain
		// A run's verdict is its root's own (docs/semantics.md R5): the same whether or not
		// the trace has an error span, so both bits agree.
		if telemetry.RunFromRoot(conv, s).Status == telemetry.StatusError {
			d.Verdict = 3
		}
	}
	if j, ok := telemetry.JobFromSpan(conv, s); ok {
		d.JobID, d.JobName = j.JobID, j.JobName
	}
	if op, ok := dv.dbOperation(s); ok {
		d.DBKey, d.DBSystem = op.Key, op.System
	}
	return d
}

// dbOperation is telemetry.DBOperationOf, with the conventions' part remembered for spans with
// a statement: it depends only on the span name and the first non-empty value of each of the
// conventions' key lists (once DBOperationOf's attribute filter passed), which make the key.
func (dv *deriver) dbOperation(s *telemetry.SpanRow) (conventions.DBOperation, bool) {
	if !telemetry.MatchSpan(&dv.dbScan, s) {
		return conventions.DBOperation{}, false
	}
	k := dv.conv.DBKeys
	attrs := s.Attributes
	stmt := firstValue(attrs, k.StatementKeys)
	if stmt == "" {
		return dv.conv.DBOperation(s.Name, attrs)
	}
	key := strings.Join([]string{s.Name, stmt, firstValue(attrs, k.SystemKeys), firstValue(attrs, k.SummaryKeys),
		firstValue(attrs, k.OperationKeys), firstValue(attrs, k.CollectionKeys)}, "\x00")
	dv.mu.Lock()
	op, ok := dv.dbOps[key]
	dv.mu.Unlock()
	if ok {
		return op, true
	}
	op, ok = dv.conv.DBOperation(s.Name, attrs)
	if !ok {
		return op, false
	}
	dv.mu.Lock()
	if len(dv.dbOps) >= maxCachedStatements {
		clear(dv.dbOps)
	}
	dv.dbOps[key] = op
	dv.mu.Unlock()
	return op, true
}

// firstValue is the first non-empty value among keys, the cache key's part of a key list.
func firstValue(attrs conventions.Attributes, keys []string) string {
	for _, k := range keys {
		if v := attrs[k]; v != "" {
			return v
		}
	}
	return ""
}

// logDerived are an error record's derived columns: its own occurrence (LogOccurrence).
type logDerived struct {
	ErrorMessage, ExceptionType, Fingerprint string
}

// deriveLog computes an error record's occurrence fields; the run and domain are the query's
// (they follow the trace's root, which may arrive later).
func (dv *deriver) deriveLog(l *telemetry.LogRow) logDerived {
	o := telemetry.LogOccurrence(dv.conv, l, telemetry.RunOfTrace{})
	return logDerived{ErrorMessage: o.Message, ExceptionType: o.ExceptionType, Fingerprint: o.Fingerprint}
}
