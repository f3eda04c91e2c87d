package store

// The embedded store's tables follow the OpenTelemetry Collector ClickHouse exporter's
// otel_traces and otel_logs (same column names, SQLite types), so the SQL of the embedded and
// ClickHouse adapters reads alike and one fixture dataset means the same thing in both.
//
// Conventions shared by both tables:
//
//   - Seq is the ingest sequence: an INTEGER PRIMARY KEY (the rowid) drawn from ONE counter
//     shared by otel_traces and otel_logs and persisted in meta('high_water') inside the same
//     transaction as the rows. It only grows, is never reused (not even after every row was
//     pruned), and a row with Seq <= the high-water mark read at time T was committed at T.
//     Cursors bind to (instance_id, high_water): a page query adds "Seq <= :hw" so rows
//     ingested after the first page never shift later pages.
//   - Timestamps and durations are INTEGER nanoseconds since the Unix epoch (UTC).
//   - TraceId is 32 and SpanId 16 lowercase hex characters; an absent id is the empty string,
//     never NULL. Ingest rejects spans with an empty or all-zero trace or span id.
//   - ServiceName is the service.name resource attribute as sent, empty when absent (exactly what
//     the exporter writes); mapping empty to "unknown" is the query side's job, for every source.
//   - ResourceAttributes, SpanAttributes and LogAttributes are TEXT holding a JSON object of
//     string to string. Non-string values are stringified as the exporter does
//     (pcommon.Value.AsString: 42 -> "42", true -> "true", arrays and maps -> their JSON text).
//     Read them with json_extract(SpanAttributes, '$."db.system"') — keys contain dots, so the
//     key must be quoted inside the path.
//   - SpanKind is 'Unspecified' | 'Internal' | 'Server' | 'Client' | 'Producer' | 'Consumer' and
//     StatusCode is 'Unset' | 'Ok' | 'Error', the strings the exporter writes.
//
// otel_traces, one row per span:
//
//	Seq             INTEGER  ingest sequence (see above)
//	Timestamp       INTEGER  span start, ns
//	EndTimestamp    INTEGER  span end, ns (derived: Timestamp + Duration)
//	TraceId         TEXT     32 hex
//	SpanId          TEXT     16 hex
//	ParentSpanId    TEXT     16 hex, empty for a root span
//	TraceState      TEXT
//	SpanName        TEXT
//	SpanKind        TEXT
//	ServiceName     TEXT
//	ResourceAttributes TEXT  JSON object string->string (since version 6: in
//	ScopeName       TEXT     otel_resource_scopes, see below)
//	ScopeVersion    TEXT
//	SpanAttributes  TEXT     JSON object string->string
//	Duration        INTEGER  ns, never negative (an end before the start is stored as 0)
//	StatusCode      TEXT
//	StatusMessage   TEXT
//	EventsJSON      TEXT     JSON array of {"Timestamp": ns, "Name": text, "Attributes": {string: string}}
//	                         (exception events carry exception.type / exception.message /
//	                         exception.stacktrace in Attributes)
//	LinksJSON       TEXT     JSON array of {"TraceId", "SpanId", "TraceState", "Attributes": {…}}
//	IsRoot          INTEGER  derived: 1 when ParentSpanId is empty, else 0
//	IsError         INTEGER  derived: 1 when StatusCode = 'Error', else 0
//
// otel_logs, one row per log record:
//
//	Seq                INTEGER  ingest sequence (see above)
//	Timestamp          INTEGER  time_unix_nano, or observed_time_unix_nano when the former is 0
//	                            (as the exporter does), ns
//	ObservedTimestamp  INTEGER  observed_time_unix_nano, ns (0 when absent)
//	TraceId            TEXT     32 hex, empty when the record is not correlated
//	SpanId             TEXT     16 hex or empty
//	TraceFlags         INTEGER  W3C trace flags (0..255)
//	SeverityText       TEXT
//	SeverityNumber     INTEGER  OTLP severity number 0..24 (17..20 = ERROR, 21..24 = FATAL)
//	ServiceName        TEXT
//	Body               TEXT     the body as text (pcommon.Value.AsString: strings verbatim,
//	                            maps and arrays as JSON)
//	ResourceAttributes TEXT     JSON object string->string (since version 6: in
//	ScopeName          TEXT     otel_resource_scopes, see below)
//	ScopeVersion       TEXT
//	LogAttributes      TEXT     JSON object string->string
//	IsError            INTEGER  derived: 1 when SeverityNumber >= 17 or lower(SeverityText) is
//	                            'error' or 'fatal' (TELEMETRY.md's error event), else 0
//
// meta, key/value TEXT pairs: 'instance_id' (random, created with the file; a cursor from
// another store file is detectably foreign), 'high_water' (the last Seq committed, decimal),
// 'derived_conventions' (the fingerprint of the conventions every row's derived columns were
// computed with; absent while a recomputation is pending) and 'derived_recompute' (the pending
// recomputation's progress, see recompute.go).
//
// Derived columns hold what the engine's functions (package telemetry) read off the rows,
// computed at ingest so that the capabilities (capabilities.go) aggregate in SQL instead of
// scanning; they hold no rule of their own: every value is what telemetry.RunFromRoot,
// TraceRun, ShapeTrace, TraceOccurrences, LogOccurrence, JobFromSpan or DBOperationOf answer
// for the row and its trace. Those that depend on the conventions are recorded in meta with
// the conventions' fingerprint (derive.go, recompute.go); a capability asked with other
// conventions, or while a recomputation is pending, declines and the engine scans instead. A
// derived text column is NULL when it does not apply or is empty, never the empty string: most
// spans have none of them, and binding NULL costs the driver least. Readers COALESCE them.
//
// Schema version 2 added the first derived columns; version 3 (the engine's semantics) gives
// some of them a new meaning and adds the trace-level ones. Columns of version 2 that version 3
// no longer writes (JobStatus, DbLabel) are left NULL on new rows.
//
//	otel_traces, per span:
//	RunId          TEXT     roots: the run's execution id (TraceRun; NULL: the trace is the run)
//	Domain         TEXT     roots: the run's domain (TraceRun)
//	RunVerdict     INTEGER  roots: the run's normalized status when it does not depend on the
//	                        rest of the trace (RunFromRoot with and without a failed span agree):
//	                        1 error, 0 ok; NULL: error exactly when TraceErrored
//	TraceErrored   INTEGER  roots: 1 when any span of the trace has status Error
//	RunErrored     INTEGER  roots: 1 when the run's normalized status is error (from RunVerdict
//	                        and TraceErrored)
//	JobId, JobName TEXT     job spans (JobFromSpan): the job id and name (NULL: not a job span)
//	DbKey          TEXT     database operation spans (DBOperationOf): the operation's identity,
//	                        system and normalized statement (NULL: not an operation)
//	DbSystem       TEXT     database operation spans: the system
//	IsEntry        INTEGER  ShapeTrace's entry flag, given every stored span of the trace
//	EntryRevisable INTEGER  1 when IsEntry = 1 and a span arriving later with its parent's id
//	                        may make it a non-entry (children often arrive before their parents;
//	                        a server span or a self-parented one stays an entry whatever arrives)
//	IsOrigin       INTEGER  1 when the span is the origin of an error occurrence
//	                        (TraceOccurrences over every stored span and error log of the trace)
//	ErrorMessage, ExceptionType, Fingerprint, OccRunId, OccDomain TEXT
//	                        origin spans: the occurrence's message, exception type, fingerprint,
//	                        run id (NULL: the run is not known) and domain
//
//	otel_logs, per error record:
//	TraceFailing   INTEGER  1 when the record's trace has a stored error span: it folds into
//	                        that trace's occurrences; 0 makes it an occurrence of its own
//	ErrorMessage, ExceptionType, Fingerprint TEXT
//	                        the record's own occurrence (LogOccurrence)
//
// Trace-level columns are kept exact as spans arrive in any order, in batches that split traces
// (trace.go): IsEntry of a new span reads the stored spans carrying its parent's id, and a new
// span settles the revisable stored spans below it; TraceErrored, RunErrored and TraceFailing
// change when a trace's first error span arrives (or its last is pruned); the occurrences of a
// trace with an error span are recomputed whenever a batch touches it, from the whole trace —
// up to maxShapedSpans spans. A larger failing trace is recorded in otel_deferred_traces and its
// occurrences are computed when a query needs them, so no ingest batch rereads a huge trace.
//
// Activity rollups count rows per five-minute bucket (Timestamp / 300 s), so get_app_status over
// a day adds a few thousand rollup rows instead of a million spans; only the partial buckets at
// the window's edges are counted from the rows themselves:
//
//	otel_activity      (Bucket, ServiceName) -> Spans, SpanOccurrences (origin spans), Logs,
//	                   LogOccurrences (error records with TraceFailing = 0)
//	otel_run_activity  (Bucket, ServiceName, Domain) -> Runs (root spans), ErroredRuns
//	                   (roots with RunErrored = 1)
//	otel_db_activity   (DbKey, Bucket, ServiceName, DbSystem) -> Spans, Duration (total ns),
//	                   Errors (error spans), Sketch (the durations' sketch, sketch.go); keyed
//	                   by operation first, so a window reads each operation's range of buckets
//	                   in key order (a day holds tens of thousands of rows: sorting them by
//	                   operation cost more than the rest of the query)
//	otel_error_activity (GroupKey, Bucket) -> Occurrences: origin spans per error group, its
//	                   Fingerprint, OccDomain and stored service name joined by char(31)
//	otel_entry_activity (ServiceName, Bucket, SpanName) -> Spans, Duration, Errors, Sketch of
//	                   the entry spans (IsEntry = 1); keyed by service first, as the one query
//	                   reading it asks for one service
//
// Every write keeps them exact in the same transaction as the rows: ingest adds, pruning
// subtracts what it deletes, a flag or key that changes moves its count. Any new statement that
// inserts, deletes or updates these columns must do the same.
//
// Indexes, named for the access paths (a partial index is used only when the query repeats its
// WHERE condition literally):
//
//	otel_traces_time    (Timestamp)                           retention, the newest span
//	otel_traces_service (ServiceName, Timestamp, SpanName, Duration, IsError)
//	                    a service's spans of one operation; status edges; the service list
//	otel_traces_entries (ServiceName, Timestamp, SpanName, Duration, IsError) WHERE IsEntry = 1
//	                    analyze_service_performance over entry spans, from the index alone
//	otel_traces_trace_span UNIQUE (TraceId, SpanId)           one span per trace and span id
//	                    (the first that arrived: a retried export sends its spans again); get_run,
//	                    a trace's spans, a span's parent by id
//	otel_traces_revisable (TraceId, ParentSpanId) WHERE EntryRevisable = 1
//	                    ingest: the stored spans a new span may settle
//	otel_traces_error_traces (TraceId) WHERE IsError = 1      ingest: does a trace have a
//	                    stored error span?
//	otel_traces_origins (Timestamp, ServiceName, TraceId, SpanId, Fingerprint, ExceptionType,
//	                    ErrorMessage, OccRunId, OccDomain) WHERE IsOrigin = 1
//	                    get_recent_errors and status edges from the index alone
//	otel_traces_origin_groups (Fingerprint, OccDomain, ServiceName, Timestamp, ExceptionType)
//	                    WHERE IsOrigin = 1
//	                    get_recent_errors: a group's newest occurrences
//	otel_traces_runs    (Timestamp, ServiceName, Domain, RunErrored, TraceId, RunId, SpanId,
//	                    RunVerdict) WHERE IsRoot = 1          list_runs: count, order and page
//	                    any filter combination from the index alone; status edges
//	otel_traces_domain_runs (Domain, Timestamp, ServiceName) WHERE IsRoot = 1
//	                    get_app_status: a domain's newest run, one seek
//	otel_traces_run_ids (RunId) WHERE IsRoot = 1 AND RunId != ''   get_run by run id
//	otel_traces_jobs    (JobName, Timestamp) WHERE JobId != ''     get_last_job_result by name
//	otel_traces_job_time (Timestamp, JobId, ServiceName) WHERE JobId != ''
//	                    get_last_job_result without a name
//	otel_traces_db      (DbKey, Timestamp, Duration, ServiceName, IsError, DbSystem)
//	                    WHERE DbKey != ''                    analyze_db_bottlenecks: one seek
//	                    per operation over the window's edges, durations of the top ones
//
// Every large index of otel_traces grows at its end or at the ends of a few groups (services,
// database operations), where SQLite appends cheaply, except otel_traces_trace_span (get_run and
// the trace-level columns need it): indexes whose inserts land anywhere split pages all over the
// tree and rewrite a page per row at every commit (measured on the B6 dataset, each cost ingest
// a third of its speed). The partial indexes hold few rows.
//
//	otel_logs_trace     (TraceId)
//	otel_logs_time      (Timestamp, ServiceName, IsError)
//	otel_logs_lone      (Timestamp, ServiceName, TraceId, Fingerprint, ExceptionType,
//	                    ErrorMessage) WHERE IsError = 1 AND TraceFailing = 0
//	                    the error records that are occurrences of their own
//
// Resources and instrumentation scopes are stored once (schema version 6). An app sends the same
// resource (service, SDK, host, process attributes: hundreds of bytes with the SDKs' resource
// detectors) and the same few scope names with every span and record; ClickHouse compresses
// the repeats away, SQLite would store them on every row. Rows written since carry
// ResourceScopeId, and their own ResourceAttributes, ScopeName and ScopeVersion hold an empty
// object and empty texts; rows of an older file keep their texts and a NULL id. Readers take
// the texts through resourceColumn / resourceScopeColumn (resources.go), which choose.
//
//	otel_resource_scopes, one row per distinct (resource, scope) pair:
//	Id                 INTEGER  what rows' ResourceScopeId refers to
//	Hash               INTEGER  a 64-bit hash of the three texts (lookup; texts compared too)
//	ResourceAttributes TEXT     JSON object string->string, as on the rows before
//	ScopeName, ScopeVersion TEXT
//	LastTimestamp      INTEGER  the newest Timestamp of a row that refers to it: once every
//	                            row older than the oldest row left is pruned, no row refers to
//	                            it, and pruning deletes it (resources.go)
//
// Schema changes are appended to migrations, never edited in place: PRAGMA user_version holds
// how many have been applied, so an older file upgrades step by step on Open.
var migrations = []string{
	// 1: the initial tables.
	`
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS otel_traces (
	Seq                INTEGER PRIMARY KEY,
	Timestamp          INTEGER NOT NULL,
	EndTimestamp       INTEGER NOT NULL,
	TraceId            TEXT    NOT NULL,
	SpanId             TEXT    NOT NULL,
	ParentSpanId       TEXT    NOT NULL DEFAULT '',
	TraceState         TEXT    NOT NULL DEFAULT '',
	SpanName           TEXT    NOT NULL DEFAULT '',
	SpanKind           TEXT    NOT NULL DEFAULT 'Unspecified',
	ServiceName        TEXT    NOT NULL DEFAULT '',
	ResourceAttributes TEXT    NOT NULL DEFAULT '{}',
	ScopeName          TEXT    NOT NULL DEFAULT '',
	ScopeVersion       TEXT    NOT NULL DEFAULT '',
	SpanAttributes     TEXT    NOT NULL DEFAULT '{}',
	Duration           INTEGER NOT NULL DEFAULT 0,
	StatusCode         TEXT    NOT NULL DEFAULT 'Unset',
	StatusMessage      TEXT    NOT NULL DEFAULT '',
	EventsJSON         TEXT    NOT NULL DEFAULT '[]',
	LinksJSON          TEXT    NOT NULL DEFAULT '[]',
	IsRoot             INTEGER NOT NULL DEFAULT 0,
	IsError            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS otel_traces_service_time ON otel_traces (ServiceName, Timestamp);
CREATE INDEX IF NOT EXISTS otel_traces_time ON otel_traces (Timestamp);
CREATE INDEX IF NOT EXISTS otel_traces_trace ON otel_traces (TraceId);
CREATE INDEX IF NOT EXISTS otel_traces_errors ON otel_traces (StatusCode, Timestamp) WHERE StatusCode = 'Error';
CREATE INDEX IF NOT EXISTS otel_traces_roots ON otel_traces (ServiceName, Timestamp) WHERE IsRoot = 1;

CREATE TABLE IF NOT EXISTS otel_logs (
	Seq                INTEGER PRIMARY KEY,
	Timestamp          INTEGER NOT NULL,
	ObservedTimestamp  INTEGER NOT NULL DEFAULT 0,
	TraceId            TEXT    NOT NULL DEFAULT '',
	SpanId             TEXT    NOT NULL DEFAULT '',
	TraceFlags         INTEGER NOT NULL DEFAULT 0,
	SeverityText       TEXT    NOT NULL DEFAULT '',
	SeverityNumber     INTEGER NOT NULL DEFAULT 0,
	ServiceName        TEXT    NOT NULL DEFAULT '',
	Body               TEXT    NOT NULL DEFAULT '',
	ResourceAttributes TEXT    NOT NULL DEFAULT '{}',
	ScopeName          TEXT    NOT NULL DEFAULT '',
	ScopeVersion       TEXT    NOT NULL DEFAULT '',
	LogAttributes      TEXT    NOT NULL DEFAULT '{}',
	IsError            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS otel_logs_trace ON otel_logs (TraceId);
CREATE INDEX IF NOT EXISTS otel_logs_time ON otel_logs (Timestamp);
CREATE INDEX IF NOT EXISTS otel_logs_severity_time ON otel_logs (SeverityNumber, Timestamp);
CREATE INDEX IF NOT EXISTS otel_logs_errors ON otel_logs (Timestamp) WHERE IsError = 1;
`,
	// 2: derived columns, activity rollups and the indexes of the aggregating queries. Rows of
	// an older file get TraceErrored and the rollups here; the conventions-dependent columns
	// are filled by the background recomputation that Open starts when meta has no
	// derived_conventions.
	`
ALTER TABLE otel_traces ADD COLUMN RunId TEXT;
ALTER TABLE otel_traces ADD COLUMN Domain TEXT;
ALTER TABLE otel_traces ADD COLUMN TraceErrored INTEGER NOT NULL DEFAULT 0;
ALTER TABLE otel_traces ADD COLUMN JobId TEXT;
ALTER TABLE otel_traces ADD COLUMN JobName TEXT;
ALTER TABLE otel_traces ADD COLUMN JobStatus TEXT;
ALTER TABLE otel_traces ADD COLUMN DbLabel TEXT;
ALTER TABLE otel_traces ADD COLUMN DbSystem TEXT;
ALTER TABLE otel_traces ADD COLUMN ErrorMessage TEXT;
ALTER TABLE otel_traces ADD COLUMN ExceptionType TEXT;
ALTER TABLE otel_traces ADD COLUMN Fingerprint TEXT;
ALTER TABLE otel_logs ADD COLUMN ErrorMessage TEXT;
ALTER TABLE otel_logs ADD COLUMN ExceptionType TEXT;
ALTER TABLE otel_logs ADD COLUMN Fingerprint TEXT;

DROP INDEX IF EXISTS otel_traces_service_time;
DROP INDEX IF EXISTS otel_traces_errors;
DROP INDEX IF EXISTS otel_traces_roots;
DROP INDEX IF EXISTS otel_logs_time;
DROP INDEX IF EXISTS otel_logs_severity_time;
DROP INDEX IF EXISTS otel_logs_errors;

UPDATE otel_traces SET TraceErrored = 1
WHERE IsRoot = 1 AND TraceId IN (SELECT TraceId FROM otel_traces WHERE IsError = 1);

CREATE INDEX otel_traces_service ON otel_traces (ServiceName, Timestamp, SpanName, Duration, IsError);
CREATE INDEX otel_traces_errors ON otel_traces (Timestamp, ServiceName, TraceId, Fingerprint, ExceptionType, ErrorMessage)
	WHERE IsError = 1;
CREATE INDEX otel_traces_error_traces ON otel_traces (TraceId) WHERE IsError = 1;
CREATE INDEX otel_traces_runs ON otel_traces (Timestamp, ServiceName, Domain, TraceErrored, JobStatus, TraceId, RunId)
	WHERE IsRoot = 1;
CREATE INDEX otel_traces_errored_runs ON otel_traces (Timestamp, TraceId, RunId, Domain)
	WHERE IsRoot = 1 AND TraceErrored = 1;
CREATE INDEX otel_traces_run_ids ON otel_traces (RunId) WHERE IsRoot = 1 AND RunId != '';
CREATE INDEX otel_traces_jobs ON otel_traces (JobName, Timestamp) WHERE JobId != '';
CREATE INDEX otel_traces_job_time ON otel_traces (Timestamp, JobId, ServiceName) WHERE JobId != '';
CREATE INDEX otel_traces_db ON otel_traces (DbLabel, Timestamp, Duration, ServiceName, IsError, DbSystem)
	WHERE DbLabel != '';
CREATE INDEX otel_logs_time ON otel_logs (Timestamp, ServiceName, IsError);
CREATE INDEX otel_logs_errors ON otel_logs (Timestamp, ServiceName, TraceId, Fingerprint, ExceptionType, ErrorMessage)
	WHERE IsError = 1;

CREATE TABLE otel_activity (
	Bucket      INTEGER NOT NULL,
	ServiceName TEXT    NOT NULL,
	Spans       INTEGER NOT NULL DEFAULT 0,
	SpanErrors  INTEGER NOT NULL DEFAULT 0,
	Logs        INTEGER NOT NULL DEFAULT 0,
	LogErrors   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (Bucket, ServiceName)
) WITHOUT ROWID;
CREATE TABLE otel_db_activity (
	Bucket      INTEGER NOT NULL,
	DbLabel     TEXT    NOT NULL,
	ServiceName TEXT    NOT NULL,
	DbSystem    TEXT    NOT NULL,
	Spans       INTEGER NOT NULL DEFAULT 0,
	Duration    INTEGER NOT NULL DEFAULT 0,
	Errors      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (Bucket, DbLabel, ServiceName, DbSystem)
) WITHOUT ROWID;
CREATE TABLE otel_run_activity (
	Bucket      INTEGER NOT NULL,
	ServiceName TEXT    NOT NULL,
	Domain      TEXT    NOT NULL,
	Runs        INTEGER NOT NULL DEFAULT 0,
	ErroredRuns INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (Bucket, ServiceName, Domain)
) WITHOUT ROWID;
INSERT INTO otel_activity (Bucket, ServiceName, Spans, SpanErrors)
	SELECT Timestamp / 300000000000, ServiceName, COUNT(*), SUM(IsError) FROM otel_traces GROUP BY 1, 2;
INSERT INTO otel_activity (Bucket, ServiceName, Logs, LogErrors)
	SELECT Timestamp / 300000000000, ServiceName, COUNT(*), SUM(IsError) FROM otel_logs WHERE true GROUP BY 1, 2
	ON CONFLICT (Bucket, ServiceName) DO UPDATE SET Logs = excluded.Logs, LogErrors = excluded.LogErrors;
INSERT INTO otel_db_activity (Bucket, DbLabel, ServiceName, DbSystem, Spans, Duration, Errors)
	SELECT Timestamp / 3600000000000, DbLabel, ServiceName, COALESCE(DbSystem, ''), COUNT(*), SUM(Duration), SUM(IsError)
	FROM otel_traces WHERE DbLabel != '' GROUP BY 1, 2, 3, 4;
INSERT INTO otel_run_activity (Bucket, ServiceName, Domain, Runs, ErroredRuns)
	SELECT Timestamp / 300000000000, ServiceName, COALESCE(Domain, ''), COUNT(*), SUM(TraceErrored)
	FROM otel_traces WHERE IsRoot = 1 GROUP BY 1, 2, 3;
`,
	// 3: the engine's semantics — entry spans, error occurrences, normalized run status and
	// database operations keyed by statement. The new columns start at their defaults and the
	// rollups are made to agree with them here; the background recomputation Open starts (the
	// derivation version changed) then fills them in, moving the rollups as it goes.
	`
ALTER TABLE otel_traces ADD COLUMN RunVerdict INTEGER;
ALTER TABLE otel_traces ADD COLUMN RunErrored INTEGER NOT NULL DEFAULT 0;
ALTER TABLE otel_traces ADD COLUMN DbKey TEXT;
ALTER TABLE otel_traces ADD COLUMN IsEntry INTEGER NOT NULL DEFAULT 0;
ALTER TABLE otel_traces ADD COLUMN EntryRevisable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE otel_traces ADD COLUMN IsOrigin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE otel_traces ADD COLUMN OccRunId TEXT;
ALTER TABLE otel_traces ADD COLUMN OccDomain TEXT;
ALTER TABLE otel_logs ADD COLUMN TraceFailing INTEGER NOT NULL DEFAULT 0;

DROP INDEX IF EXISTS otel_traces_trace;
DROP INDEX IF EXISTS otel_traces_errors;
DROP INDEX IF EXISTS otel_traces_errored_runs;
DROP INDEX IF EXISTS otel_traces_runs;
DROP INDEX IF EXISTS otel_traces_db;
DROP INDEX IF EXISTS otel_logs_errors;

-- One span per trace and span id, the first that arrived: a retried export sent the others.
CREATE INDEX otel_traces_copies ON otel_traces (TraceId, SpanId);
DELETE FROM otel_traces WHERE Seq IN (SELECT t.Seq FROM otel_traces t WHERE EXISTS (
	SELECT 1 FROM otel_traces o INDEXED BY otel_traces_copies WHERE o.TraceId = t.TraceId AND o.SpanId = t.SpanId AND o.Seq < t.Seq));
DROP INDEX otel_traces_copies;
CREATE UNIQUE INDEX otel_traces_trace_span ON otel_traces (TraceId, SpanId);
CREATE INDEX otel_traces_entries ON otel_traces (ServiceName, Timestamp, SpanName, Duration, IsError) WHERE IsEntry = 1;
CREATE INDEX otel_traces_revisable ON otel_traces (TraceId, ParentSpanId) WHERE EntryRevisable = 1;
CREATE INDEX otel_traces_origins ON otel_traces (Timestamp, ServiceName, TraceId, SpanId, Fingerprint, ExceptionType,
	ErrorMessage, OccRunId, OccDomain) WHERE IsOrigin = 1;
CREATE INDEX otel_traces_runs ON otel_traces (Timestamp, ServiceName, Domain, RunErrored, TraceId, RunId, SpanId, RunVerdict)
	WHERE IsRoot = 1;
CREATE INDEX otel_traces_db ON otel_traces (DbKey, Timestamp, Duration, ServiceName, IsError, DbSystem) WHERE DbKey != '';
CREATE INDEX otel_logs_lone ON otel_logs (Timestamp, ServiceName, TraceId, Fingerprint, ExceptionType, ErrorMessage)
	WHERE IsError = 1 AND TraceFailing = 0;

CREATE TABLE otel_deferred_traces (
	TraceId TEXT PRIMARY KEY
) WITHOUT ROWID;

-- The rollups, counted again over what is left, with the new columns at their defaults (no
-- origin span, no errored run, no error record folded, no database operation yet).
DROP TABLE otel_activity;
CREATE TABLE otel_activity (
	Bucket          INTEGER NOT NULL,
	ServiceName     TEXT    NOT NULL,
	Spans           INTEGER NOT NULL DEFAULT 0,
	SpanOccurrences INTEGER NOT NULL DEFAULT 0,
	Logs            INTEGER NOT NULL DEFAULT 0,
	LogOccurrences  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (Bucket, ServiceName)
) WITHOUT ROWID;
INSERT INTO otel_activity (Bucket, ServiceName, Spans)
	SELECT Timestamp / 300000000000, ServiceName, COUNT(*) FROM otel_traces GROUP BY 1, 2;
INSERT INTO otel_activity (Bucket, ServiceName, Logs, LogOccurrences)
	SELECT Timestamp / 300000000000, ServiceName, COUNT(*), SUM(IsError) FROM otel_logs WHERE true GROUP BY 1, 2
	ON CONFLICT (Bucket, ServiceName) DO UPDATE SET Logs = excluded.Logs, LogOccurrences = excluded.LogOccurrences;
DELETE FROM otel_run_activity;
INSERT INTO otel_run_activity (Bucket, ServiceName, Domain, Runs)
	SELECT Timestamp / 300000000000, ServiceName, COALESCE(Domain, ''), COUNT(*) FROM otel_traces WHERE IsRoot = 1 GROUP BY 1, 2, 3;
DROP TABLE otel_db_activity;
CREATE TABLE otel_db_activity (
	Bucket      INTEGER NOT NULL,
	DbKey       TEXT    NOT NULL,
	ServiceName TEXT    NOT NULL,
	DbSystem    TEXT    NOT NULL,
	Spans       INTEGER NOT NULL DEFAULT 0,
	Duration    INTEGER NOT NULL DEFAULT 0,
	Errors      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (Bucket, DbKey, ServiceName, DbSystem)
) WITHOUT ROWID;
`,
	// 4: duration sketches (sketch.go) in the database rollup, now with five-minute buckets,
	// and a rollup of entry spans per service and span name. Both start empty; migrate fills
	// them from the rows in the same transaction (fillSketchRollups), as the columns stand —
	// a recomputation still pending moves them as it goes.
	`
DROP TABLE otel_db_activity;
CREATE TABLE otel_db_activity (
	Bucket      INTEGER NOT NULL,
	DbKey       TEXT    NOT NULL,
	ServiceName TEXT    NOT NULL,
	DbSystem    TEXT    NOT NULL,
	Spans       INTEGER NOT NULL DEFAULT 0,
	Duration    INTEGER NOT NULL DEFAULT 0,
	Errors      INTEGER NOT NULL DEFAULT 0,
	Sketch      BLOB,
	PRIMARY KEY (DbKey, Bucket, ServiceName, DbSystem)
) WITHOUT ROWID;
CREATE TABLE otel_entry_activity (
	Bucket      INTEGER NOT NULL,
	ServiceName TEXT    NOT NULL,
	SpanName    TEXT    NOT NULL,
	Spans       INTEGER NOT NULL DEFAULT 0,
	Duration    INTEGER NOT NULL DEFAULT 0,
	Errors      INTEGER NOT NULL DEFAULT 0,
	Sketch      BLOB,
	PRIMARY KEY (ServiceName, Bucket, SpanName)
) WITHOUT ROWID;
CREATE INDEX otel_traces_origin_groups ON otel_traces (Fingerprint, OccDomain, ServiceName, Timestamp, ExceptionType)
	WHERE IsOrigin = 1;
CREATE TABLE otel_error_activity (
	GroupKey    TEXT    NOT NULL,
	Bucket      INTEGER NOT NULL,
	Occurrences INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (GroupKey, Bucket)
) WITHOUT ROWID;
INSERT INTO otel_error_activity (GroupKey, Bucket, Occurrences)
	SELECT COALESCE(Fingerprint, '') || char(31) || COALESCE(OccDomain, '') || char(31) || ServiceName, Timestamp / 300000000000, COUNT(*)
	FROM otel_traces WHERE IsOrigin = 1 GROUP BY 1, 2;
`,
	// 5: a domain's roots in time order, so get_app_status finds a domain's newest run with one
	// seek (walking otel_traces_runs back from a bucket's end read every newer root of every
	// other domain: 55 ms for a rare domain in a five-minute bucket of 128,000 roots).
	`
CREATE INDEX otel_traces_domain_runs ON otel_traces (Domain, Timestamp, ServiceName) WHERE IsRoot = 1;
`,
	// 6: resources and instrumentation scopes stored once (otel_resource_scopes). Rows written
	// before keep their own texts (ResourceScopeId NULL); readers take either.
	`
CREATE TABLE otel_resource_scopes (
	Id                 INTEGER PRIMARY KEY,
	Hash               INTEGER NOT NULL,
	ResourceAttributes TEXT    NOT NULL,
	ScopeName          TEXT    NOT NULL,
	ScopeVersion       TEXT    NOT NULL,
	LastTimestamp      INTEGER NOT NULL
);
CREATE INDEX otel_resource_scopes_hash ON otel_resource_scopes (Hash);
ALTER TABLE otel_traces ADD COLUMN ResourceScopeId INTEGER;
ALTER TABLE otel_logs ADD COLUMN ResourceScopeId INTEGER;
`,
	// 7: a trace's root in one seek, with what an occurrence reads off its run (service and
	// verdict: docs/semantics.md R8, R12); otel_traces_trace walked every span of the trace.
	`
CREATE INDEX otel_traces_trace_roots ON otel_traces (TraceId, Timestamp DESC, SpanId DESC, Seq, ServiceName, RunErrored)
	WHERE IsRoot = 1;
`,
}

// Table and meta key names, shared by the writer, the pruner and the query code so a rename
// cannot miss a spot.
const (
	// TracesTable holds one row per span.
	TracesTable = "otel_traces"
	// LogsTable holds one row per log record.
	LogsTable = "otel_logs"
	// metaInstanceID names the random id created with the store file.
	metaInstanceID = "instance_id"
	// metaHighWater names the last committed ingest sequence number.
	metaHighWater = "high_water"
	// ActivityTable and RunActivityTable are the rollups of get_app_status, DBActivityTable
	// the one of analyze_db_bottlenecks.
	ActivityTable    = "otel_activity"
	RunActivityTable = "otel_run_activity"
	DBActivityTable  = "otel_db_activity"
	// EntryActivityTable is the rollup of analyze_service_performance: entry spans per service
	// and span name.
	EntryActivityTable = "otel_entry_activity"
	// GroupActivityTable is the rollup of get_recent_errors: origin spans per error group.
	GroupActivityTable = "otel_error_activity"
	// DeferredTable lists the failing traces too large to recompute at ingest.
	DeferredTable = "otel_deferred_traces"
	// ResourceScopesTable holds each distinct resource and instrumentation scope once.
	ResourceScopesTable = "otel_resource_scopes"
	// bucketNs is the width of a rollup bucket: five minutes. The migration's SQL repeats it;
	// bucketExpr is the same number for SQL text.
	bucketNs   int64 = 300_000_000_000
	bucketExpr       = "300000000000"
	// dbBucketNs is the width of a database rollup bucket: five minutes since schema version 4
	// (an hour before), so a window's partial edges hold at most ten minutes of rows.
	dbBucketNs = bucketNs
)

// SchemaVersion is the number of migrations this build knows; PRAGMA user_version of an
// up-to-date store file equals it.
var SchemaVersion = len(migrations)
