// Package shape is the disclosure layer every answer passes through before it leaves the
// server: detail levels, byte budgets with honest truncation flags, cursors bound to the query
// and the data they page through, and secret redaction.
//
// It works on serialized JSON answers and knows no tool: the glue code marshals a flow's output,
// redacts it, fits it into the budget of the requested detail level (Disclose does both, in that
// order) and only then validates and sends it. Flows reuse CapString, TailBytes and the cursor
// Codec directly.
package shape
