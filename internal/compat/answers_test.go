package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runlens/runlens/internal/contract"
	"github.com/runlens/runlens/internal/contract/oracle"

	"github.com/runlens/runlens/internal/testkit"
)

// answer is what a client reported for one tool call, whichever client it was.
type answer struct {
	isError    bool
	structured json.RawMessage // structuredContent; nil when the result carried none
	text       string          // the first text content block
}

// published validates answers against the published, bundled schemas with the same 2020-12
// validator the server uses; clients such as the Go SDK do not validate at all.
type published struct {
	root string
	v    *oracle.Validator

	mu    sync.Mutex
	cache map[string][]byte
}

// sharedSchemas is one validator for the whole run, so each schema compiles once.
var sharedSchemas = sync.OnceValue(func() *published {
	root, _ := testkit.Root() // schemas checks it first
	return &published{root: root, v: oracle.NewValidator(), cache: map[string][]byte{}}
})

// schemas returns the run's shared validator.
func schemas(t testing.TB) *published {
	repoRoot(t) // fails the test when there is no root to read schemas from
	return sharedSchemas()
}

// file reads a schema below schemas/ once.
func (p *published) file(t testing.TB, rel string) []byte {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.cache[rel]; ok {
		return b
	}
	b, err := os.ReadFile(filepath.Join(p.root, "schemas", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("read published schema: %v", err)
	}
	p.cache[rel] = b
	return b
}

// validate returns the failing fields of instance against the schema at rel (below schemas/).
func (p *published) validate(t testing.TB, rel string, instance []byte) []contract.FieldError {
	t.Helper()
	fields, err := p.v.Validate(rel, p.file(t, rel), instance)
	if err != nil {
		t.Fatalf("validate against %s: %v", rel, err)
	}
	return fields
}

// errorSchema is the shape of every tool error's structuredContent.
const errorSchema = "defs/error.json"

// checkAnswer asserts that a client's answer to call is the expected kind (success or the
// expected tool error), that its structuredContent validates against the published output
// schema (or the error schema), and that the text block carries the same JSON. A successful
// answer must carry structuredContent when structured is set (revisions from 2025-06-18).
func checkAnswer(t testing.TB, client string, call toolCall, a answer, structured bool) {
	t.Helper()
	where := fmt.Sprintf("%s: %s %s", client, call.label, call.args)
	body := a.structured
	switch {
	case body == nil && structured && call.wantError == "":
		t.Errorf("%s: no structuredContent; text: %.300s", where, a.text)
		return
	case body == nil:
		// Before 2025-06-18 the JSON travels as text only, and a tool error may carry its
		// error object as text alone (clients that check structuredContent against the
		// tool's output schema do so even for error results).
		body = json.RawMessage(a.text)
	case a.text != "" && !sameJSON(body, []byte(a.text)):
		t.Errorf("%s: the text block is not the structuredContent's JSON:\ntext: %.300s\nstructured: %.300s", where, a.text, body)
	}
	if !json.Valid(body) {
		t.Errorf("%s: answer is not JSON: %.300s", where, body)
		return
	}
	if call.wantError == "" {
		if a.isError {
			t.Errorf("%s: want a successful answer, got a tool error: %.500s", where, body)
			return
		}
		schema := "bundled/tools/" + call.tool + ".output.json"
		if fields := schemas(t).validate(t, schema, body); fields != nil {
			t.Errorf("%s: answer breaks %s: %s\nanswer: %.500s", where, schema, fieldList(fields), body)
		}
		if want, ok := seededFacts[call.tool]; ok && !hasFact(body, want) {
			t.Errorf("%s: answer does not show the seeded telemetry (want %s = %v): %.500s", where, want.key, want.value, body)
		}
		if op := routedOperation(call); op != "" {
			// The router answers with the operation's own output: hold it to that schema too.
			schema := "bundled/tools/" + op + ".output.json"
			if fields := schemas(t).validate(t, schema, body); fields != nil {
				t.Errorf("%s: routed answer breaks %s: %s\nanswer: %.500s", where, schema, fieldList(fields), body)
			}
		}
		return
	}
	if !a.isError {
		t.Errorf("%s: want a tool error %q, got a successful answer: %.300s", where, call.wantError, body)
		return
	}
	if fields := schemas(t).validate(t, errorSchema, body); fields != nil {
		t.Errorf("%s: tool error breaks %s: %s\nanswer: %.500s", where, errorSchema, fieldList(fields), body)
	}
	var e struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Code != call.wantError {
		t.Errorf("%s: want error code %q, got %.300s", where, call.wantError, body)
	}
}

// fact is one top-level field of an answer and the value it must have.
type fact struct {
	key   string
	value any
}

// seededFacts are what a few answers must say about the seeded workspace's telemetry, so the
// proof shows every client received real data, not only well-formed empty answers.
var seededFacts = map[string]fact{
	"get_run":             {"errorMessage", "payment declined for order 42"},
	"list_runs":           {"count", float64(4)},
	"get_last_job_result": {"found", true},
}

// hasFact reports whether body's top-level field has the wanted value.
func hasFact(body []byte, f fact) bool {
	var m map[string]any
	return json.Unmarshal(body, &m) == nil && m[f.key] == f.value
}

// routedOperation is the operation a call of the compact profile's router names, or "".
func routedOperation(call toolCall) string {
	if call.tool != "runlens" {
		return ""
	}
	var in struct {
		Operation string `json:"operation"`
	}
	_ = json.Unmarshal(call.args, &in)
	return in.Operation
}

// sameJSON reports whether a and b encode the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// fieldList renders failing fields on one line.
func fieldList(fields []contract.FieldError) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Pointer + ": " + f.Message
	}
	return strings.Join(parts, "; ")
}
