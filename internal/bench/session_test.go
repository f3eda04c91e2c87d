package bench

import "testing"

func TestQuickCheckRejectsErrorAnswers(t *testing.T) {
	tests := []struct {
		name string
		line string
		ok   bool
	}{
		{"a result passes", `{"jsonrpc":"2.0","id":3,"result":{}}`, true},
		{"a JSON-RPC error fails", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}`, false},
		{"a tool error result fails", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := quickCheck([]byte(tt.line)); (err == nil) != tt.ok {
				t.Errorf("quickCheck(%s) = %v, want ok=%v", tt.line, err, tt.ok)
			}
		})
	}
}

func TestCheckMatchesTheRequestID(t *testing.T) {
	tests := []struct {
		name string
		line string
		id   int
		ok   bool
	}{
		{"the right id passes", `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`, 7, true},
		{"another id fails", `{"jsonrpc":"2.0","id":8,"result":{}}`, 7, false},
		{"an error fails", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}`, 7, false},
		{"a missing result fails", `{"jsonrpc":"2.0","id":7}`, 7, false},
		{"not JSON fails", `nope`, 7, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := check([]byte(tt.line), tt.id); (err == nil) != tt.ok {
				t.Errorf("check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestCallRequestNumbersEachLine(t *testing.T) {
	got := string(CallRequest("list_docs", `{"limit":2}`)(42))
	want := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"list_docs","arguments":{"limit":2}}}` + "\n"
	if got != want {
		t.Errorf("CallRequest = %q, want %q", got, want)
	}
	if got := string(PingRequest()(9)); got != `{"jsonrpc":"2.0","id":9,"method":"ping"}`+"\n" {
		t.Errorf("PingRequest = %q", got)
	}
}
