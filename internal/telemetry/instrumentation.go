package telemetry

// InstrumentationQuery asks what the app's instrumentation sends.
type InstrumentationQuery struct {
	// Window is what is looked at; spans that start after NowMs plus a minute are clock skew.
	Window Window
	NowMs  int64
	// MaxSpans and MaxErrorLogs bound what is read (newest first; defaults 20,000 and 5,000):
	// the doctor's checks are judgements over a sample, and say how large it was.
	MaxSpans     int
	MaxErrorLogs int
}

// Instrumentation is what the doctor's instrumentation checks judge.
type Instrumentation struct {
	// Spans is how many spans were read; Limited is true when the window held more.
	Spans   int64
	Limited bool
	// Services are the distinct services among them; Unnamed the spans without service.name.
	Services []string
	Unnamed  int64
	// Future counts spans starting more than a minute after NowMs.
	Future int64
	// LegacyDB and StableDB count database spans carrying the legacy (db.statement,
	// db.system) and the stable (db.query.text, db.system.name) attribute names.
	LegacyDB, StableDB int64
	// ErrorLogs were read; Orphaned are those whose trace has no span at all (the spans were
	// sampled away, or never exported).
	ErrorLogs, Orphaned int64
	// DBLookalikes counts client spans that look like database calls (a SQL statement in an
	// attribute, or a span named for one) but are no database operation under the conventions
	// (docs/semantics.md R13); DBLookalikeSpans names a few ("service: span name") and
	// DBLookalikeKeys the attributes that held their statements.
	DBLookalikes                      int64
	DBLookalikeSpans, DBLookalikeKeys []string
}
