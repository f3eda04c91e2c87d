package bench

import "testing"

func TestTailBufferKeepsTheNewestBytes(t *testing.T) {
	tb := &tailBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "h"} {
		if n, err := tb.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tb.String(); got != "defgh" {
		t.Errorf("tail = %q, want %q", got, "defgh")
	}
}
