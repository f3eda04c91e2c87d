// Command floor is the calibration point of runlens's start-up benchmark: a bare hand-written
// stdio loop that answers initialize, tools/list (with no tools) and any other request with a
// constant result. Spawning it and completing the same exchange measures what the machine
// itself costs — process creation, the Go runtime, pipes, scheduling — at that moment, so a
// noisy run can be told apart from a slow server.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			answer(out, line)
		}
		if err != nil {
			out.Flush()
			return
		}
	}
}

// answer writes the constant response to one request line; notifications get none.
func answer(out *bufio.Writer, line []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &req) != nil || req.ID == nil {
		return
	}
	result := `{}`
	switch req.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1.0.0"}}`
	case "tools/list":
		result = `{"tools":[]}`
	}
	out.WriteString(`{"jsonrpc":"2.0","id":`)
	out.Write(req.ID)
	out.WriteString(`,"result":` + result + "}\n")
	out.Flush()
}
