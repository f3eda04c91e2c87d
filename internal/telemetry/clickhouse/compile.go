package clickhouse

import (
	"strings"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// The conventions compiler: each function writes, into q, a ClickHouse expression over an
// attribute map column (SpanAttributes, ResourceAttributes, LogAttributes or an event's
// Attributes: Map(LowCardinality(String), String)) that computes what the conventions
// package computes in Go on the same attributes. Keys and values are bound parameters. It is
// the only place conventions become SQL; compile_test.go holds it to the Go evaluation on
// generated attribute sets.

// space is unicode.IsSpace as an RE2 class (inside a ClickHouse string literal): the ASCII
// white space, U+0085 and the Unicode separators (Z), which strings.TrimSpace trims.
const space = `[\\t\\n\\v\\f\\r \\x{85}\\p{Z}]`

// errorLogExpr is conventions.IsErrorLog over the exporter's log columns.
const errorLogExpr = `(SeverityNumber >= 17 OR match(SeverityText, '(?i)^` + space + `*(error|fatal)` + space + `*$'))`

// trimmed is strings.TrimSpace.
func trimmed(expr string) string {
	return `replaceRegexpAll(` + expr + `, '^` + space + `+|` + space + `+$', '')`
}

// first is Attributes.first: the first non-empty value among keys, else ”.
func first(q *sqlText, col string, keys []string) string {
	if len(keys) == 0 {
		return "''"
	}
	var b strings.Builder
	b.WriteString("multiIf(")
	for _, k := range keys {
		v := col + "[" + q.str(k) + "]"
		b.WriteString(v + " != '', " + v + ", ")
	}
	b.WriteString("'')")
	return b.String()
}

// anyKey is a necessary condition of a non-empty value under one of keys: the map has one of
// them. It adds nothing to a condition it is ANDed to, but ClickHouse evaluates it with the
// exporter's bloom filter index on mapKeys, skipping the granules without any of the keys.
func anyKey(q *sqlText, col string, keys ...[]string) string {
	var parts []string
	for _, ks := range keys {
		for _, k := range ks {
			parts = append(parts, "mapContains("+col+", "+q.str(k)+")")
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// hasKeyPrefix is Attributes.hasPrefix: some key starts with one of prefixes.
func hasKeyPrefix(q *sqlText, col string, prefixes []string) string {
	if len(prefixes) == 0 {
		return "0"
	}
	return "arrayExists(k -> arrayExists(p -> startsWith(k, p), " + q.strs(prefixes) + "), mapKeys(" + col + "))"
}

// attrCondition is the AttrKeys/AttrValue filter of a scan (telemetry.MatchSpan's hasAttr):
// a non-empty value under one of keys (a key ending in "." is a prefix), equal to value when
// value is set.
func attrCondition(q *sqlText, col string, keys []string, value string) string {
	var parts []string
	for _, k := range keys {
		if n := len(k); n > 0 && k[n-1] == '.' && value == "" {
			parts = append(parts, "arrayExists((k, v) -> v != '' AND startsWith(k, "+q.str(k)+"), mapKeys("+col+"), mapValues("+col+"))")
			continue
		}
		v := col + "[" + q.str(k) + "]"
		if value == "" {
			parts = append(parts, v+" != ''")
		} else {
			parts = append(parts, "("+v+" != '' AND "+v+" = "+q.str(value)+")")
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " OR ")
}

// condition is Condition.matches.
func condition(q *sqlText, col string, c conventions.Condition) string {
	if c.KeyPrefix != "" {
		return hasKeyPrefix(q, col, []string{c.KeyPrefix})
	}
	v := col + "[" + q.str(c.Key) + "]"
	if c.Equals == nil {
		return v + " != ''"
	}
	return "(" + v + " != '' AND " + v + " = " + q.str(*c.Equals) + ")"
}

// domainExpr is Conventions.Domain over a root span's attributes.
func domainExpr(q *sqlText, conv *conventions.Conventions, col string) string {
	if len(conv.Domains) == 0 {
		return q.str(conv.DefaultDomain)
	}
	var b strings.Builder
	b.WriteString("multiIf(")
	for _, r := range conv.Domains {
		b.WriteString(condition(q, col, r.When) + ", " + q.str(r.Domain) + ", ")
	}
	b.WriteString(q.str(conv.DefaultDomain) + ")")
	return b.String()
}

// executionIDExpr is Conventions.ExecutionID.
func executionIDExpr(q *sqlText, conv *conventions.Conventions, col string) string {
	return first(q, col, conv.ExecutionIDKeys)
}

// exitCodeExpr is conventions.ParseExitCode of the first exit-code attribute: a Nullable(Int64),
// NULL when it is no integer.
func exitCodeExpr(q *sqlText, conv *conventions.Conventions, col string) string {
	return integerExpr(q, col, conv.JobKeys.ExitCodeKeys)
}

// spanFailedExpr is telemetry.SpanFailed of the span's columns: status Error, or a server span
// whose HTTP response status is 500–599. It restates docs/semantics.md R5 in SQL.
func spanFailedExpr(q *sqlText, col string) string {
	code := integerExpr(q, col, conventions.HTTPStatusKeys)
	return "(StatusCode = 'Error' OR (SpanKind = 'Server' AND ifNull(" + code + " BETWEEN 500 AND 599, 0)))"
}

// integerExpr is conventions.ParseExitCode of the first non-empty value under keys, NULL when
// it does not parse.
func integerExpr(q *sqlText, col string, keys []string) string {
	t := trimmed(first(q, col, keys))
	// ParseInt: an optional sign and decimal digits; else ParseFloat of a decimal literal (Go
	// syntax: _ between digits allowed) whose value is integral and fits.
	const d = `[0-9](_?[0-9])*`
	f := "toFloat64OrNull(replaceAll(" + t + ", '_', ''))"
	return "if(match(" + t + ", '^[+-]?[0-9]+$'), toInt64OrNull(" + t + "), " +
		"if(match(" + t + ", '^[+-]?(" + d + "([.](" + d + ")?)?|[.]" + d + ")([eE][+-]?" + d + ")?$') AND " + f + " = floor(" + f + ") " +
		"AND " + f + " >= -9223372036854775808 AND " + f + " < 9223372036854775808, toInt64(" + f + "), NULL))"
}

// isErrorStatusExpr is Conventions.IsErrorStatus of a word expression.
func isErrorStatusExpr(q *sqlText, conv *conventions.Conventions, word string) string {
	if len(conv.JobKeys.ErrorStatuses) == 0 {
		return "0"
	}
	lower := make([]string, len(conv.JobKeys.ErrorStatuses))
	for i, s := range conv.JobKeys.ErrorStatuses {
		lower[i] = strings.ToLower(s)
	}
	return "has(" + q.strs(lower) + ", lowerUTF8(" + trimmed(word) + "))"
}

// normalizeStatusExpr is Conventions.NormalizeStatus: 'ok' or 'error'.
func normalizeStatusExpr(q *sqlText, conv *conventions.Conventions, word, failed, exitCode string) string {
	return "multiIf(" + trimmed(word) + " != '', if(" + isErrorStatusExpr(q, conv, word) + ", 'error', 'ok'), " +
		"(" + failed + ") OR ifNull((" + exitCode + ") != 0, 0), 'error', 'ok')"
}

// jobStatusExpr is the normalized status of a job span (JobFromSpan).
func jobStatusExpr(q *sqlText, conv *conventions.Conventions, col string) string {
	return normalizeStatusExpr(q, conv, first(q, col, conv.JobKeys.StatusKeys), "StatusCode = 'Error'", exitCodeExpr(q, conv, col))
}

// jobNameExpr is a job span's name: the job-name attribute, else the span name.
func jobNameExpr(q *sqlText, conv *conventions.Conventions, col string) string {
	n := first(q, col, conv.JobKeys.NameKeys)
	return "if(" + n + " != '', " + n + ", SpanName)"
}
