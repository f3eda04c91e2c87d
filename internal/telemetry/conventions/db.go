package conventions

// DBOperation is what the conventions read off a span that ran a database query.
type DBOperation struct {
	// Key identifies the operation in analyze_db_bottlenecks: the system and the normalized
	// statement, else the operation and collection, else the span name — so one slow query on
	// a table is never merged with the fast ones on the same table.
	Key string
	// Label is the operation's short name: the query summary, else operation and collection,
	// else the shortened normalized statement, else the operation alone, else the span name.
	Label string
	// System is the database system (stable name, else legacy).
	System string
	// Operation is the operation name, if any.
	Operation string
	// Collection is the table or collection, if any.
	Collection string
	// Statement is the query text with literals replaced by ?, whitespace collapsed (at most
	// MaxStatement runes); never the raw text. Empty when the span carries none.
	Statement string
}

// DBOperation reads the database fields of a span; ok is false when the span carries no
// attribute under the database key prefixes, or carries them but ran no query (no statement,
// summary or operation name: a connection-pool span such as connect or acquire).
func (c *Conventions) DBOperation(spanName string, attrs Attributes) (op DBOperation, ok bool) {
	if !attrs.hasPrefix(c.DBKeys.KeyPrefixes...) {
		return DBOperation{}, false
	}
	op = DBOperation{
		System:     attrs.first(c.DBKeys.SystemKeys),
		Operation:  attrs.first(c.DBKeys.OperationKeys),
		Collection: attrs.first(c.DBKeys.CollectionKeys),
	}
	summary := attrs.first(c.DBKeys.SummaryKeys)
	if raw := attrs.first(c.DBKeys.StatementKeys); raw != "" {
		op.Statement = NormalizeStatementN(raw, MaxStatement)
	}
	if op.Statement == "" && summary == "" && op.Operation == "" {
		return DBOperation{}, false
	}
	switch {
	case summary != "":
		op.Label = summary
	case op.Operation != "" && op.Collection != "":
		op.Label = op.Operation + " " + op.Collection
	case op.Statement != "":
		op.Label = op.Statement
	default:
		op.Label = op.Operation
	}
	op.Label = truncate(op.Label, maxLabel)
	switch {
	case op.Statement != "":
		op.Key = op.System + "\x00" + op.Statement
	case op.Operation != "" || op.Collection != "":
		op.Key = op.System + "\x00" + op.Operation + " " + op.Collection
	default:
		op.Key = op.System + "\x00" + summary
	}
	return op, true
}
