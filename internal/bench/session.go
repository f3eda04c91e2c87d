package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// protocolVersion is the handshake revision the benchmarks negotiate, the newest legacy one that
// hosts speak today.
const protocolVersion = "2025-11-25"

// The fixed lines of a session's start, prebuilt so the client costs nothing measurable.
var (
	initializeLine = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` +
		protocolVersion + `","capabilities":{},"clientInfo":{"name":"runlens-bench","version":"1.0.0"}}}` + "\n")
	initializedLine = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	toolsListLine   = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
)

// Ids 1 and 2 belong to initialize and tools/list; measured requests count up from firstID.
const firstID = 3

// Request builds the line of one measured request from its id.
type Request func(id int) []byte

// CallRequest is a tools/call of tool with the given arguments (a JSON object).
func CallRequest(tool, arguments string) Request {
	head := []byte(`{"jsonrpc":"2.0","id":`)
	tail := []byte(`,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + arguments + "}}\n")
	return func(id int) []byte {
		b := make([]byte, 0, len(head)+len(tail)+20)
		b = append(b, head...)
		b = strconv.AppendInt(b, int64(id), 10)
		return append(b, tail...)
	}
}

// PingRequest is a ping, the cheapest request a server answers.
func PingRequest() Request {
	return func(id int) []byte {
		b := append([]byte(`{"jsonrpc":"2.0","id":`), strconv.Itoa(id)...)
		return append(b, `,"method":"ping"}`+"\n"...)
	}
}

// response is what the harness checks of a JSON-RPC response.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// check decodes line as the successful response to request id; a JSON-RPC error or a tool error
// result fails it, since a benchmark of failing calls measures the wrong path.
func check(line []byte, id int) (response, error) {
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("decode response %.200q: %w", line, err)
	}
	if string(r.ID) != strconv.Itoa(id) {
		return r, fmt.Errorf("response id %s, want %d", r.ID, id)
	}
	if r.Error != nil {
		return r, fmt.Errorf("request %d failed: %d %s", id, r.Error.Code, r.Error.Message)
	}
	if r.Result == nil {
		return r, fmt.Errorf("response %d has no result", id)
	}
	var tool struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &tool); err == nil && tool.IsError {
		return r, fmt.Errorf("request %d answered a tool error: %.300s", id, r.Result)
	}
	return r, nil
}

// exchange sends one request line and reads until the response with that id, skipping any
// notification the server sends in between.
func exchange(p *Proc, line []byte, id int) (response, error) {
	if err := p.Send(line); err != nil {
		return response{}, err
	}
	for {
		got, err := p.Recv()
		if err != nil {
			return response{}, err
		}
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(got, &head); err == nil && head.ID == nil && head.Method != "" {
			continue
		}
		return check(got, id)
	}
}

// Discovery is what a host learns at start-up: the tools/list result.
type Discovery struct {
	// ToolsList is the tools/list result as the server wrote it.
	ToolsList json.RawMessage
}

// discover performs the host's start-up exchange: initialize, initialized, tools/list.
func discover(p *Proc) (Discovery, error) {
	if _, err := exchange(p, initializeLine, 1); err != nil {
		return Discovery{}, fmt.Errorf("initialize: %w", err)
	}
	if err := p.Send(initializedLine); err != nil {
		return Discovery{}, err
	}
	r, err := exchange(p, toolsListLine, 2)
	if err != nil {
		return Discovery{}, fmt.Errorf("tools/list: %w", err)
	}
	return Discovery{ToolsList: r.Result}, nil
}

// toolNames lists the names in a tools/list result.
func toolNames(list json.RawMessage) ([]string, error) {
	var l struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		return nil, fmt.Errorf("decode tools/list: %w", err)
	}
	names := make([]string, len(l.Tools))
	for i, t := range l.Tools {
		names[i] = t.Name
	}
	return names, nil
}
