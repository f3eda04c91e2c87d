package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/server"
)

// A jaeger+http source is read through the Jaeger adapter: get_app_status names it and says
// it holds no logs; a bad answer is a source_unreachable tool error and the next call, once
// Jaeger answers again, succeeds.
func TestAJaegerSourceIsReadAndABadAnswerDoesNotStopTheServer(t *testing.T) {
	var html atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if html.Load() {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>Sign in</html>")
			return
		}
		if r.URL.Path == "/api/v3/services" {
			fmt.Fprint(w, `{"services":[]}`)
			return
		}
		http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
	}))
	defer srv.Close()
	root := t.TempDir()
	a, err := Open(root, nil, config.Overrides{ProjectRoot: root, Receiver: "off", ReceiverGRPC: "off", Telemetry: "jaeger+" + srv.URL}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer a.Close()
	h := a.Handler(server.ProfileFull)
	call := func(tool string) (bool, map[string]any) {
		res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: tool, Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("call %s: %v", tool, err)
		}
		var out map[string]any
		if err := json.Unmarshal(res.Structured, &out); err != nil {
			t.Fatalf("decode %s: %v", tool, err)
		}
		return res.IsError, out
	}
	isErr, status := call("get_app_status")
	source, _ := status["source"].(map[string]any)
	if isErr || source["kind"] != "jaeger" || source["reachable"] != true || !strings.Contains(fmt.Sprint(source["note"]), "no logs") {
		t.Fatalf("get_app_status = %v, want a reachable jaeger source with a note saying it has no logs", status)
	}
	html.Store(true)
	isErr, answer := call("get_recent_errors")
	if !isErr || answer["code"] != "source_unreachable" {
		t.Fatalf("get_recent_errors against a login page = %v, want the source_unreachable tool error", answer)
	}
	html.Store(false)
	if isErr, answer := call("get_recent_errors"); isErr {
		t.Fatalf("get_recent_errors once Jaeger answers again = %v, want an answer", answer)
	}
}
