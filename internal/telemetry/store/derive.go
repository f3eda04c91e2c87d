package store

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// derivationVersion changes whenever the code below gives a derived column another meaning,
// so that files computed by an older build are recomputed rather than misread.
const derivationVersion = 1

// conventionsFingerprint identifies the derived columns' inputs: the conventions document and
// the derivation code. The store records it in meta; a querier with other conventions, or a
// store whose recomputation is unfinished, does not trust the derived columns.
func conventionsFingerprint(c *conventions.Conventions) string {
	doc, err := json.Marshal(c)
	if err != nil { // a struct of strings and slices always encodes
		doc = nil
	}
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(derivationVersion) + "\x00"))
	h.Write(doc)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// spanDerived are a span's derived columns (schema.go). Fields shown only for the few rows of an
// answer (a job's outcome and exit code, a database operation's collection) are not stored:
// every stored column costs each ingested span a bound parameter, and reading them back from
// the attributes of those rows is cheap.
type spanDerived struct {
	RunID, Domain                            string
	JobID, JobName, JobStatus                string
	DBLabel, DBSystem                        string
	ErrorMessage, ExceptionType, Fingerprint string
}

// spanFacts are what the derivation reads of a span besides its attributes.
type spanFacts struct {
	name          string
	isRoot        bool
	isError       bool
	statusMessage string
	// exceptionMessage and exceptionType are the first non-empty exception.message and
	// exception.type among the span's "exception" events.
	exceptionMessage, exceptionType string
}

// deriver computes derived columns with one conventions document. It remembers the database
// label of recent statements: normalizing a statement costs more than the rest of the
// derivation together, and applications send the same statements over and over.
type deriver struct {
	conv  *conventions.Conventions
	mu    sync.Mutex
	dbOps map[string]conventions.DBOperation
}

// maxCachedStatements bounds the remembered labels; the cache starts over when full.
const maxCachedStatements = 4096

func newDeriver(conv *conventions.Conventions) *deriver {
	return &deriver{conv: conv, dbOps: map[string]conventions.DBOperation{}}
}

// deriveSpan computes a span's derived columns, exactly as the decoding queries classify a
// span from its attribute JSON: run key and domain on roots, job fields on spans with a job id,
// the database label on spans with a database attribute, and the message, type and fingerprint
// of an error.
func (dv *deriver) deriveSpan(f spanFacts, attrs conventions.Attributes) spanDerived {
	conv := dv.conv
	var d spanDerived
	if f.isRoot {
		d.RunID = conv.ExecutionID(attrs)
		d.Domain = conv.Domain(attrs)
	}
	if job, ok := conv.Job(attrs); ok {
		d.JobID, d.JobName, d.JobStatus = job.ID, cmp.Or(job.Name, f.name), job.Status
	}
	if op, ok := dv.dbOperation(f.name, attrs); ok {
		d.DBLabel, d.DBSystem = op.Label, op.System
	}
	if f.isError {
		d.ErrorMessage, d.ExceptionType = errorFields(f.statusMessage, f.exceptionMessage, f.exceptionType, attrs)
		d.Fingerprint = conventions.Fingerprint(d.ExceptionType, d.ErrorMessage)
	}
	return d
}

// dbOperation is conv.DBOperation, remembered for spans with a statement: its answer depends
// only on the span name and the first non-empty value of each of its key lists, which make the
// cache key.
func (dv *deriver) dbOperation(name string, attrs conventions.Attributes) (conventions.DBOperation, bool) {
	k := dv.conv.DBKeys
	stmt := firstValue(attrs, k.StatementKeys)
	if stmt == "" || !anyKeyPrefix(attrs, k.KeyPrefixes) {
		return dv.conv.DBOperation(name, attrs)
	}
	key := strings.Join([]string{name, stmt, firstValue(attrs, k.SystemKeys), firstValue(attrs, k.SummaryKeys),
		firstValue(attrs, k.OperationKeys), firstValue(attrs, k.CollectionKeys)}, "\x00")
	dv.mu.Lock()
	op, ok := dv.dbOps[key]
	dv.mu.Unlock()
	if ok {
		return op, true
	}
	op, _ = dv.conv.DBOperation(name, attrs)
	op.Statement = "" // not stored; no need to keep it
	dv.mu.Lock()
	if len(dv.dbOps) >= maxCachedStatements {
		clear(dv.dbOps)
	}
	dv.dbOps[key] = op
	dv.mu.Unlock()
	return op, true
}

// firstValue is the first non-empty value among keys, as the conventions read key lists.
func firstValue(attrs conventions.Attributes, keys []string) string {
	for _, k := range keys {
		if v := attrs[k]; v != "" {
			return v
		}
	}
	return ""
}

// anyKeyPrefix reports whether an attribute key starts with one of prefixes.
func anyKeyPrefix(attrs conventions.Attributes, prefixes []string) bool {
	for k := range attrs {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
	}
	return false
}

// errorFields is an error span's message (the status message, else the exception event's) and
// type (the exception event's, else error.type).
func errorFields(statusMessage, exceptionMessage, exceptionType string, attrs conventions.Attributes) (msg, typ string) {
	return cmp.Or(statusMessage, exceptionMessage), cmp.Or(exceptionType, attrs["error.type"])
}

// exceptionOf reads the first non-empty exception.message and exception.type of the
// "exception" events in an EventsJSON column.
func exceptionOf(eventsJSON string) (msg, typ string) {
	if eventsJSON == "" || eventsJSON == "[]" {
		return "", ""
	}
	var evs []spanEvent
	if json.Unmarshal([]byte(eventsJSON), &evs) != nil {
		return "", ""
	}
	for _, e := range evs {
		if e.Name != "exception" {
			continue
		}
		msg = cmp.Or(msg, e.Attributes["exception.message"])
		typ = cmp.Or(typ, e.Attributes["exception.type"])
	}
	return msg, typ
}

// logDerived are an error record's derived columns.
type logDerived struct {
	ErrorMessage, ExceptionType, Fingerprint string
}

// deriveLog computes an error record's derived columns: its body (else exception.message),
// its exception.type (else error.type) and their fingerprint.
func deriveLog(body string, attrs conventions.Attributes) logDerived {
	d := logDerived{
		ErrorMessage:  cmp.Or(body, attrs["exception.message"]),
		ExceptionType: cmp.Or(attrs["exception.type"], attrs["error.type"]),
	}
	d.Fingerprint = conventions.Fingerprint(d.ExceptionType, d.ErrorMessage)
	return d
}
