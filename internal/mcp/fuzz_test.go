package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzMaxMessage is a small ceiling so fuzzed input reaches the over-long path.
const fuzzMaxMessage = 4096

// quickHandler answers at once, so fuzzing spends its time in the reader and decoder.
type quickHandler struct{}

func (quickHandler) Tools() []ToolInfo {
	return []ToolInfo{
		{Name: "echo", Description: "Returns its arguments."},
		{Name: "fail", Description: "Fails."},
		{Name: "progress", Description: "Reports progress."},
	}
}

func (quickHandler) CallTool(_ context.Context, req CallRequest) (CallResult, error) {
	switch req.Name {
	case "fail":
		return CallResult{}, errors.New("boom")
	case "progress":
		if req.Progress != nil {
			req.Progress(1, 2, "half")
			req.Progress(2, 2, "done")
		}
	}
	return CallResult{Structured: json.RawMessage(`{"echo":` + string(req.Arguments) + `}`)}, nil
}

// FuzzServe feeds arbitrary bytes to the server and checks that it never panics, writes only
// JSON lines that are valid UTF-8, and answers every request with a readable id exactly once
// (unless the input cancels that id). The seed corpus holds the client side of every transcript
// whose lines can fit the fuzz ceiling (deep_nesting's cannot: a value nested 10,000 levels
// deep takes 20,000 bytes).
func FuzzServe(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	// A handler that echoes raw bytes that are not UTF-8: the transport still writes UTF-8.
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":\"\xfe\xc3\"}}}"))
	f.Fuzz(checkServe)
}

// checkServe serves data to completion and checks the invariants FuzzServe states.
func checkServe(t *testing.T, data []byte) {
	opts := Options{
		Name: "fuzz", Version: "0", MaxMessageBytes: fuzzMaxMessage, Workers: 2, PageSize: 2,
		DrainTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	var out bytes.Buffer
	if err := NewServer(quickHandler{}, opts).Serve(context.Background(), bytes.NewReader(data), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	want, cancelled := expectedAnswers(data)
	got := map[string]int{}
	for _, line := range splitLines(out.String()) {
		if !json.Valid([]byte(line)) {
			t.Fatalf("output line is not JSON: %q", clip(line))
		}
		if !utf8.ValidString(line) {
			t.Fatalf("output line is not valid UTF-8: %q", clip(line))
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &obj) != nil {
			continue // a batch answer
		}
		if id := obj["id"]; readableID(id) {
			got[idKey(id)]++
		}
	}
	for key, n := range want {
		if !cancelled[key] && got[key] != n {
			t.Errorf("id %s: %d requests, %d responses", key, n, got[key])
		}
	}
	for key := range got {
		if want[key] == 0 {
			t.Errorf("id %s: answered but never asked", key)
		}
	}
}

// expectedAnswers counts, per id, the top-level requests that must be answered, and collects
// the ids any cancellation names (those may go unanswered).
func expectedAnswers(data []byte) (want map[string]int, cancelled map[string]bool) {
	want, cancelled = map[string]int{}, map[string]bool{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) > fuzzMaxMessage {
			continue
		}
		trimmed := bytes.Trim(line, jsonSpace)
		var elems []map[string]json.RawMessage
		if json.Unmarshal(trimmed, &elems) == nil {
			for _, e := range elems {
				noteCancel(e, cancelled)
			}
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(trimmed, &obj) != nil {
			continue
		}
		noteCancel(obj, cancelled)
		id, hasID := obj["id"]
		_, hasMethod := obj["method"]
		_, hasResult := obj["result"]
		_, hasError := obj["error"]
		if hasID && readableID(id) && (hasMethod || !(hasResult || hasError)) {
			want[idKey(id)]++
		}
	}
	return want, cancelled
}

func noteCancel(obj map[string]json.RawMessage, cancelled map[string]bool) {
	if strings.Contains(string(obj["method"]), "cancelled") {
		var params map[string]json.RawMessage
		if json.Unmarshal(obj["params"], &params) == nil && readableID(params["requestId"]) {
			cancelled[idKey(params["requestId"])] = true
		}
	}
}
