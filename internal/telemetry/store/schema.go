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
//	ResourceAttributes TEXT  JSON object string->string
//	ScopeName       TEXT
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
//	ResourceAttributes TEXT     JSON object string->string
//	ScopeName          TEXT
//	ScopeVersion       TEXT
//	LogAttributes      TEXT     JSON object string->string
//	IsError            INTEGER  derived: 1 when SeverityNumber >= 17 or lower(SeverityText) is
//	                            'error' or 'fatal' (TELEMETRY.md's error event), else 0
//
// meta, key/value TEXT pairs: 'instance_id' (random, created with the file; a cursor from
// another store file is detectably foreign) and 'high_water' (the last Seq committed, decimal).
//
// Indexes, named for the access paths of the telemetry tools:
//
//	otel_traces_service_time (ServiceName, Timestamp)   per-service windows, performance
//	otel_traces_time         (Timestamp)                  windows across services, retention
//	otel_traces_trace        (TraceId)                    get_run, run assembly
//	otel_traces_errors       (StatusCode, Timestamp) WHERE StatusCode = 'Error'
//	                         get_recent_errors; a query must say StatusCode = 'Error' literally
//	                         for SQLite to use this partial index
//	otel_traces_roots        (ServiceName, Timestamp) WHERE IsRoot = 1
//	                         list_runs over root spans; a query must say IsRoot = 1 literally
//	otel_logs_trace          (TraceId)
//	otel_logs_time           (Timestamp)
//	otel_logs_severity_time  (SeverityNumber, Timestamp)
//	otel_logs_errors         (Timestamp) WHERE IsError = 1
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
)

// SchemaVersion is the number of migrations this build knows; PRAGMA user_version of an
// up-to-date store file equals it.
var SchemaVersion = len(migrations)
