package shape

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

type listRunsQuery struct {
	Domain  string `json:"domain,omitempty"`
	Service string `json:"service,omitempty"`
	Window  string `json:"window,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

func TestCursorRoundTrip(t *testing.T) {
	c := NewCodec(nil)
	q := listRunsQuery{Domain: "checkout", Window: "1h"}
	for _, offset := range []int{0, 1, 20, 99999, maxOffset} {
		cur, err := c.Encode("list_runs", q, "fp-1", offset)
		if err != nil {
			t.Fatalf("Encode offset %d: %v", offset, err)
		}
		if len(cur) > 200 || strings.ContainsAny(cur, "+/=") {
			t.Errorf("cursor %q is not short base64url", cur)
		}
		got, err := c.Decode(cur, "list_runs", q, "fp-1")
		if err != nil || got != offset {
			t.Errorf("Decode = %d, %v; want %d", got, err, offset)
		}
	}
}

func TestCursorQueryNormalization(t *testing.T) {
	c := NewCodec([]byte("k"))
	cur, err := c.Encode("list_runs", map[string]any{"window": "1h", "domain": "checkout", "service": nil}, "fp", 20)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		query any
	}{
		{name: "a struct with the same arguments", query: listRunsQuery{Domain: "checkout", Window: "1h"}},
		{name: "the query carrying the cursor itself", query: listRunsQuery{Domain: "checkout", Window: "1h", Cursor: cur}},
		{name: "raw JSON with members in another order", query: rawQuery(`{"window":"1h","domain":"checkout"}`)},
		{name: "an explicit null for an absent argument", query: rawQuery(`{"domain":"checkout","window":"1h","service":null}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := c.Decode(cur, "list_runs", tt.query, "fp"); err != nil || got != 20 {
				t.Errorf("Decode = %d, %v; want 20", got, err)
			}
		})
	}
}

type rawQuery string

func (r rawQuery) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func TestCursorFailsClosed(t *testing.T) {
	c := NewCodec(nil)
	q := listRunsQuery{Domain: "checkout", Window: "1h"}
	cur, err := c.Encode("list_runs", q, "fp-1", 40)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(cur)
	flip := func(i int) string {
		b := []byte(string(raw))
		b[i] ^= 0x01
		return base64.RawURLEncoding.EncodeToString(b)
	}
	foreign, err := NewCodec(nil).Encode("list_runs", q, "fp-1", 40)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cursor string
		tool   string
		query  any
		fp     string
		reason CursorReason
	}{
		{name: "a cursor for another tool", cursor: cur, tool: "get_recent_errors", query: q, fp: "fp-1", reason: CursorWrongTool},
		{name: "a changed filter", cursor: cur, tool: "list_runs", query: listRunsQuery{Domain: "billing", Window: "1h"}, fp: "fp-1", reason: CursorQueryChanged},
		{name: "an added filter", cursor: cur, tool: "list_runs", query: listRunsQuery{Domain: "checkout", Window: "1h", Service: "api"}, fp: "fp-1", reason: CursorQueryChanged},
		{name: "changed data", cursor: cur, tool: "list_runs", query: q, fp: "fp-2", reason: CursorDataChanged},
		{name: "a tampered offset byte", cursor: flip(len(raw) - macLen - 1), tool: "list_runs", query: q, fp: "fp-1", reason: CursorForged},
		{name: "a tampered tag byte", cursor: flip(1 + keyIDLen + 2), tool: "list_runs", query: q, fp: "fp-1", reason: CursorForged},
		{name: "a tampered key id", cursor: flip(2), tool: "list_runs", query: q, fp: "fp-1", reason: CursorOtherKey},
		{name: "a tampered MAC byte", cursor: flip(len(raw) - 1), tool: "list_runs", query: q, fp: "fp-1", reason: CursorForged},
		{name: "a cursor minted with another key", cursor: foreign, tool: "list_runs", query: q, fp: "fp-1", reason: CursorOtherKey},
		{name: "a cursor of the previous format", cursor: base64.RawURLEncoding.EncodeToString(append([]byte{1}, raw[1+keyIDLen:]...)), tool: "list_runs", query: q, fp: "fp-1", reason: CursorOtherVersion},
		{name: "garbage", cursor: "not a cursor!", tool: "list_runs", query: q, fp: "fp-1", reason: CursorMalformed},
		{name: "valid base64 of the wrong length", cursor: "AAAA", tool: "list_runs", query: q, fp: "fp-1", reason: CursorMalformed},
		{name: "the empty string", cursor: "", tool: "list_runs", query: q, fp: "fp-1", reason: CursorMalformed},
		{name: "a future version", cursor: base64.RawURLEncoding.EncodeToString(append([]byte{9}, raw[1:]...)), tool: "list_runs", query: q, fp: "fp-1", reason: CursorMalformed},
		{name: "a cursor with padding appended", cursor: cur + "==", tool: "list_runs", query: q, fp: "fp-1", reason: CursorMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, err := c.Decode(tt.cursor, tt.tool, tt.query, tt.fp)
			if !errors.Is(err, ErrCursorInvalid) {
				t.Fatalf("Decode = %d, %v; want ErrCursorInvalid", off, err)
			}
			var ce *CursorError
			if !errors.As(err, &ce) || ce.Reason != tt.reason {
				t.Errorf("Decode error = %v, want reason %q", err, tt.reason)
			}
			if off != 0 {
				t.Errorf("Decode returned offset %d with an error", off)
			}
		})
	}
}

func TestCursorEncodeRejectsBadInput(t *testing.T) {
	c := NewCodec(nil)
	if _, err := c.Encode("list_runs", nil, "fp", -1); err == nil {
		t.Error("Encode accepted a negative offset")
	}
	if _, err := c.Encode("list_runs", map[string]any{"f": func() {}}, "fp", 1); err == nil {
		t.Error("Encode accepted a query that cannot be marshaled")
	}
}

func TestCursorKeyIsCopied(t *testing.T) {
	key := []byte("secret-key")
	c := NewCodec(key)
	cur, err := c.Encode("t", nil, "", 5)
	if err != nil {
		t.Fatal(err)
	}
	key[0] = 'X'
	if got, err := c.Decode(cur, "t", nil, ""); err != nil || got != 5 {
		t.Errorf("Decode after the caller changed its key slice = %d, %v; want 5", got, err)
	}
}

func TestCursorRefusalsSayWhy(t *testing.T) {
	seen := map[string]CursorReason{}
	for _, r := range []CursorReason{CursorMalformed, CursorOtherVersion, CursorOtherKey, CursorForged, CursorWrongTool, CursorQueryChanged, CursorDataChanged} {
		msg := (&CursorError{Reason: r}).Message()
		if prev, dup := seen[msg]; dup {
			t.Errorf("reasons %q and %q share the message %q", prev, r, msg)
		}
		seen[msg] = r
	}
	for reason, want := range map[CursorReason]string{
		CursorOtherKey:     "another cursor key",
		CursorQueryChanged: "different arguments",
		CursorDataChanged:  "the data changed",
	} {
		if msg := (&CursorError{Reason: reason}).Message(); !strings.Contains(msg, want) {
			t.Errorf("the message of %q is %q, want it to say %q", reason, msg, want)
		}
	}
}
