package compat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCursorsSurviveARestartOfTheServer pages list_docs across separate `runlens serve`
// processes on one project, as an agent does when its host restarts the server: a cursor from
// one process works in the next while the key file and the corpus hold, and each way it can
// stop working is refused with cursor_invalid and a message that says which.
func TestCursorsSurviveARestartOfTheServer(t *testing.T) {
	bin := runlensBinary(t)
	ws := newWorkspace(t)

	first := serveCalls(t, bin, ws, `{"name":"list_docs","arguments":{"limit":1}}`)
	cursor, slug := docsPage(t, "the first server", first[0])
	if cursor == "" {
		t.Fatal("the first page has no nextCursor")
	}
	checkKeyFile(t, ws)

	second := serveCalls(t, bin, ws,
		fmt.Sprintf(`{"name":"list_docs","arguments":{"limit":1,"cursor":%q}}`, cursor),
		fmt.Sprintf(`{"name":"list_docs","arguments":{"limit":2,"cursor":%q}}`, cursor),
	)
	if _, next := docsPage(t, "a restarted server given the cursor", second[0]); next == slug || next == "" {
		t.Errorf("a restarted server's second page starts with %q, want the document after %q", next, slug)
	}
	checkRefusal(t, "a cursor used with other arguments", second[1], "different arguments")

	if err := os.WriteFile(filepath.Join(ws, "docs", "zz-new.md"), []byte("# New\n\nA new page.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third := serveCalls(t, bin, ws,
		fmt.Sprintf(`{"name":"list_docs","arguments":{"limit":1,"cursor":%q}}`, cursor),
		`{"name":"list_docs","arguments":{"limit":1}}`,
	)
	checkRefusal(t, "a cursor after the corpus changed", third[0], "the data changed")
	fresh, _ := docsPage(t, "the first page of the changed corpus", third[1])

	if err := os.Remove(filepath.Join(ws, ".runlens", "cursor.key")); err != nil {
		t.Fatal(err)
	}
	fourth := serveCalls(t, bin, ws, fmt.Sprintf(`{"name":"list_docs","arguments":{"limit":1,"cursor":%q}}`, fresh))
	checkRefusal(t, "a cursor after the key file was removed", fourth[0], "another cursor key")
	checkKeyFile(t, ws)
}

// serveCalls runs one `runlens serve` process on ws through the handshake and the given
// tools/call params, closes its input, and returns the results in the order of the calls.
func serveCalls(t *testing.T, bin, ws string, calls ...string) []json.RawMessage {
	t.Helper()
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"compat","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, c := range calls {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", 100+i, c)
	}
	p := run(t, runOpts{dir: ws, stdin: &in}, bin, serveArgs(ws)...)
	if p.exitCode != 0 {
		t.Fatalf("runlens serve exited %d; stderr:\n%s", p.exitCode, tail(p.stderr))
	}
	results := make([]json.RawMessage, len(calls))
	sc := bufio.NewScanner(bytes.NewReader(p.stdout))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("server line is not JSON: %v: %s", err, sc.Bytes())
		}
		if i := msg.ID - 100; i >= 0 && i < len(calls) {
			if msg.Error != nil {
				t.Fatalf("call %s: JSON-RPC error %s", calls[i], msg.Error)
			}
			results[i] = msg.Result
		}
	}
	for i, r := range results {
		if r == nil {
			t.Fatalf("no answer to %s; stdout:\n%s", calls[i], tail(p.stdout))
		}
	}
	return results
}

// callResult is the part of a tools/call result these checks read.
type callResult struct {
	IsError           bool `json:"isError"`
	StructuredContent *struct {
		Docs []struct {
			Slug string `json:"slug"`
		} `json:"docs"`
		Page struct {
			NextCursor string `json:"nextCursor"`
		} `json:"page"`
	} `json:"structuredContent"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// docsPage asserts a successful list_docs page of one document and returns its next cursor and
// the slug it holds.
func docsPage(t *testing.T, what string, raw json.RawMessage) (cursor, slug string) {
	t.Helper()
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: decode result: %v", what, err)
	}
	if r.IsError || r.StructuredContent == nil || len(r.StructuredContent.Docs) != 1 {
		t.Fatalf("%s: want a page of one document, got %s", what, raw)
	}
	return r.StructuredContent.Page.NextCursor, r.StructuredContent.Docs[0].Slug
}

// checkRefusal asserts a cursor_invalid tool error whose message contains want.
func checkRefusal(t *testing.T, what string, raw json.RawMessage, want string) {
	t.Helper()
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: decode result: %v", what, err)
	}
	if !r.IsError || len(r.Content) == 0 {
		t.Fatalf("%s: want a tool error, got %s", what, raw)
	}
	var e struct{ Code, Message, Hint string }
	if err := json.Unmarshal([]byte(r.Content[0].Text), &e); err != nil {
		t.Fatalf("%s: the error text is not JSON: %v", what, err)
	}
	if e.Code != "cursor_invalid" || !strings.Contains(e.Message, want) || e.Hint == "" {
		t.Errorf("%s: error = %+v, want code cursor_invalid, a message saying %q and a hint", what, e, want)
	}
}

// checkKeyFile asserts the project keeps its cursor key private: a 32-byte file only its owner
// reads in a folder only its owner enters.
func checkKeyFile(t *testing.T, ws string) {
	t.Helper()
	dir := filepath.Join(ws, ".runlens")
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("no .runlens folder: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, "cursor.key"))
	if err != nil {
		t.Fatalf("no cursor key file: %v", err)
	}
	if di.Mode().Perm() != 0o700 || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Errorf("folder %v, key file %v of %d bytes; want drwx------, -rw------- and 32 bytes", di.Mode(), fi.Mode(), fi.Size())
	}
}
