package conventions

// DBOperation is what the conventions read off a span that touches a database.
type DBOperation struct {
	// Label groups operations in analyze_db_bottlenecks: the query summary, else operation and
	// collection, else the normalized statement, else the operation alone, else the span name.
	Label string
	// System is the database system (stable name, else legacy).
	System string
	// Operation is the operation name, if any.
	Operation string
	// Collection is the table or collection, if any.
	Collection string
	// Statement is the query text with literals replaced by ?; never the raw text.
	Statement string
}

// DBOperation reads the database fields of a span; ok is false when the span carries no
// attribute under the database key prefixes.
func (c *Conventions) DBOperation(spanName string, attrs Attributes) (op DBOperation, ok bool) {
	if !attrs.hasPrefix(c.DBKeys.KeyPrefixes...) {
		return DBOperation{}, false
	}
	op = DBOperation{
		System:     attrs.first(c.DBKeys.SystemKeys),
		Operation:  attrs.first(c.DBKeys.OperationKeys),
		Collection: attrs.first(c.DBKeys.CollectionKeys),
	}
	if raw := attrs.first(c.DBKeys.StatementKeys); raw != "" {
		op.Statement = NormalizeStatement(raw)
	}
	switch summary := attrs.first(c.DBKeys.SummaryKeys); {
	case summary != "":
		op.Label = summary
	case op.Operation != "" && op.Collection != "":
		op.Label = op.Operation + " " + op.Collection
	case op.Statement != "":
		op.Label = op.Statement
	case op.Operation != "":
		op.Label = op.Operation
	default:
		op.Label = spanName
	}
	op.Label = truncate(op.Label, maxLabel)
	return op, true
}
