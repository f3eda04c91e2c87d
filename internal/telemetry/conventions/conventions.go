// Package conventions turns raw span and log attributes into the concepts the telemetry tools
// reason about — runs, domains, jobs, database operations, error events — following a
// conventions document rather than hard-coded attribute names, so a project whose
// instrumentation speaks another dialect changes data, not code.
//
// A document is validated by schemas/conventions.schema.json. It names a built-in preset
// (otel, the default, or netscript) and overrides parts of it: objects merge key by key, lists
// replace the preset's list whole, and scalars override.
package conventions

import (
	"strings"
)

// Conventions is a complete, validated conventions document. Its zero value matches nothing;
// obtain one from Preset or Load.
type Conventions struct {
	// Preset names the built-in document this one started from.
	Preset string `json:"preset"`
	// ExecutionIDKeys identify a run, in priority order.
	ExecutionIDKeys []string `json:"executionIdKeys"`
	// JobKeys says which spans are job executions and where their fields are.
	JobKeys JobKeys `json:"job"`
	// Domains are evaluated in order on a run's root span.
	Domains []DomainRule `json:"domains"`
	// DefaultDomain is the domain of a run no rule matches.
	DefaultDomain string `json:"defaultDomain"`
	// DBKeys says which spans are database operations and how to label them.
	DBKeys DBKeys `json:"db"`
	// SensitiveKeys are attribute keys whose values never leave unredacted.
	SensitiveKeys []string `json:"sensitiveKeys"`
}

// JobKeys lists, per job field, the attribute keys tried in order.
type JobKeys struct {
	// IDKeys make a span a job; the value is the job id.
	IDKeys []string `json:"idKeys"`
	// NameKeys hold the job name.
	NameKeys []string `json:"nameKeys"`
	// StatusKeys hold the application's own job status.
	StatusKeys []string `json:"statusKeys"`
	// ExitCodeKeys hold the exit code, as a number or a numeric string.
	ExitCodeKeys []string `json:"exitCodeKeys"`
	// OutcomeKeys hold a short outcome text.
	OutcomeKeys []string `json:"outcomeKeys"`
	// ErrorStatuses are the status words that mean failure (case-insensitive).
	ErrorStatuses []string `json:"errorStatuses,omitempty"`
}

// DomainRule assigns Domain to a run whose root span matches When.
type DomainRule struct {
	// Domain is the name the tools report.
	Domain string `json:"domain"`
	// When is the condition on the root span's attributes.
	When Condition `json:"when"`
}

// Condition is either a key prefix, or a key that is present (optionally with an exact value).
type Condition struct {
	// KeyPrefix matches when any attribute key starts with it.
	KeyPrefix string `json:"keyPrefix,omitempty"`
	// Key matches when the attribute is present and non-empty.
	Key string `json:"key,omitempty"`
	// Equals, with Key, requires exactly this value.
	Equals *string `json:"equals,omitempty"`
}

// DBKeys lists the attribute keys that recognise and describe a database operation.
type DBKeys struct {
	// KeyPrefixes: any attribute key with one of them makes the span a database operation.
	KeyPrefixes []string `json:"keyPrefixes"`
	// SystemKeys name the database system, stable name first.
	SystemKeys []string `json:"systemKeys"`
	// SummaryKeys hold a low-cardinality query summary.
	SummaryKeys []string `json:"summaryKeys"`
	// OperationKeys name the operation.
	OperationKeys []string `json:"operationKeys"`
	// CollectionKeys name the table or collection.
	CollectionKeys []string `json:"collectionKeys"`
	// StatementKeys hold the query text.
	StatementKeys []string `json:"statementKeys"`
}

// Attributes is the string view of a span's or record's attributes (resource attributes
// excluded) that every rule reads. Non-string values are expected in their canonical text form
// (an integer 3 as "3").
type Attributes map[string]string

// first returns the first non-empty value among keys.
func (a Attributes) first(keys []string) string {
	for _, k := range keys {
		if v := a[k]; v != "" {
			return v
		}
	}
	return ""
}

// hasPrefix reports whether any key starts with one of prefixes.
func (a Attributes) hasPrefix(prefixes ...string) bool {
	for k := range a {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
	}
	return false
}

// matches reports whether the condition holds on attrs.
func (c Condition) matches(attrs Attributes) bool {
	if c.KeyPrefix != "" {
		return attrs.hasPrefix(c.KeyPrefix)
	}
	v, ok := attrs[c.Key]
	if !ok || v == "" {
		return false
	}
	return c.Equals == nil || v == *c.Equals
}

// ExecutionID returns the run key a span carries itself, or "" when it carries none (the run is
// then its trace).
func (c *Conventions) ExecutionID(attrs Attributes) string {
	return attrs.first(c.ExecutionIDKeys)
}

// Domain classifies a run by its root span's attributes: the first matching rule wins.
func (c *Conventions) Domain(rootAttrs Attributes) string {
	for _, r := range c.Domains {
		if r.When.matches(rootAttrs) {
			return r.Domain
		}
	}
	return c.DefaultDomain
}

// DomainNames lists every domain the document can produce, in rule order, each once, the
// default last: get_app_status reports one entry per configured domain even when unseen.
func (c *Conventions) DomainNames() []string {
	seen := make(map[string]bool, len(c.Domains)+1)
	var out []string
	for _, r := range c.Domains {
		if !seen[r.Domain] {
			seen[r.Domain] = true
			out = append(out, r.Domain)
		}
	}
	if !seen[c.DefaultDomain] {
		out = append(out, c.DefaultDomain)
	}
	return out
}

// IsSensitive reports whether the value of key must be redacted.
func (c *Conventions) IsSensitive(key string) bool {
	for _, k := range c.SensitiveKeys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}
