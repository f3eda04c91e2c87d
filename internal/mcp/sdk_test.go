package mcp

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectSDK serves a fake handler over pipes and connects the official Go SDK client to it,
// pinned to version, or with the SDK's default discovery probe when version is "".
func connectSDK(t *testing.T, h *fakeHandler, opts Options, version string, copts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- NewServer(h, opts).Serve(context.Background(), serverIn, serverOut) }()

	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1"}, copts)
	var sopts *sdk.ClientSessionOptions
	if version != "" {
		sopts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitDeadline)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, sopts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		clientOut.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(waitDeadline):
			t.Errorf("Serve did not return after the client closed")
		}
		serverOut.Close()
	})
	return cs
}

func TestGoSDKClient(t *testing.T) {
	tests := []struct {
		name, pin, want string
	}{
		{"the default probe lands in the modern era", "", Version20260728},
		{"a client pinned to 2025-11-25 gets it", Version20251125, Version20251125},
		{"a client pinned to 2025-06-18 gets it", Version20250618, Version20250618},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newFakeHandler()
			opts := testOptions()
			opts.PageSize = 2
			cs := connectSDK(t, h, opts, tt.pin, nil)
			ctx, cancel := context.WithTimeout(context.Background(), waitDeadline)
			defer cancel()

			init := cs.InitializeResult()
			if init.ProtocolVersion != tt.want {
				t.Errorf("negotiated %q, want %q", init.ProtocolVersion, tt.want)
			}
			if init.ServerInfo == nil || init.ServerInfo.Name != "runlens-test" {
				t.Errorf("server info = %+v, want name runlens-test", init.ServerInfo)
			}
			if init.Instructions != "Start with echo." {
				t.Errorf("instructions = %q", init.Instructions)
			}

			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("list tools: %v", err)
				}
				names = append(names, tool.Name)
			}
			var want []string
			for _, tool := range h.Tools() {
				want = append(want, tool.Name)
			}
			if !slices.Equal(names, want) {
				t.Errorf("listed %v across pages, want %v", names, want)
			}

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"k": "v"}})
			if err != nil {
				t.Fatalf("call echo: %v", err)
			}
			got, _ := json.Marshal(res.StructuredContent)
			if wantJSON := `{"echo":{"k":"v"},"version":"` + tt.want + `"}`; string(got) != wantJSON {
				t.Errorf("structuredContent = %s, want %s", got, wantJSON)
			}
			if text, ok := res.Content[0].(*sdk.TextContent); !ok || text.Text != string(got) {
				t.Errorf("text content = %#v, want the same JSON as structuredContent", res.Content[0])
			}

			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "denied"})
			if err != nil || !res.IsError {
				t.Errorf("call denied = %+v, %v; want an isError result", res, err)
			}
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope"}); err == nil {
				t.Errorf("call of an unknown tool succeeded, want a JSON-RPC error")
			}
		})
	}
}

func TestGoSDKClientCancelsAndFollowsProgress(t *testing.T) {
	h := newFakeHandler()
	var mu sync.Mutex
	var progress []float64
	copts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, req.Params.Progress)
		mu.Unlock()
	}}
	cs := connectSDK(t, h, testOptions(), Version20251125, copts)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "slow"})
		errc <- err
	}()
	select {
	case <-h.started:
	case <-time.After(waitDeadline):
		t.Fatal("the slow call never started")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call returned no error")
	}
	deadline := time.Now().Add(waitDeadline)
	for h.cancelled.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the handler's context was not cancelled")
		}
		time.Sleep(5 * time.Millisecond) // polling a counter the handler sets; no event to wait on
	}

	params := &sdk.CallToolParams{Name: "progress"}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatalf("call progress: %v", err)
	}
	// Notifications are handled before the response that follows them on the stream.
	deadline = time.Now().Add(waitDeadline)
	for {
		mu.Lock()
		got := slices.Clone(progress)
		mu.Unlock()
		if slices.Equal(got, []float64{1, 3}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress seen = %v, want [1 3]", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
