package conventions

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestNormalizeStatement(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"numbers become placeholders", "SELECT * FROM t WHERE id = 42 AND x > 3.5", "SELECT * FROM t WHERE id = ? AND x > ?"},
		{"quoted strings become placeholders", "SELECT * FROM t WHERE name = 'O''Brien'", "SELECT * FROM t WHERE name = ?"},
		{"hex literals become placeholders", "SELECT * FROM t WHERE h = 0xDEADbeef OR b = X'0A1B'", "SELECT * FROM t WHERE h = ? OR b = ?"},
		{"an IN list folds to one placeholder", "SELECT * FROM t WHERE id IN (1, 2, 3,4)", "SELECT * FROM t WHERE id IN (?)"},
		{"an IN list of strings folds too", "select * from t where k in ('a','b')", "select * from t where k IN (?)"},
		{"whitespace collapses", "SELECT\n\t*   FROM  t ", "SELECT * FROM t"},
		{"identifiers with digits are kept", "SELECT col1 FROM t2 WHERE a = $1", "SELECT col1 FROM t2 WHERE a = $1"},
		{"double-quoted identifiers are kept", `SELECT "User" FROM "t" WHERE a = 1`, `SELECT "User" FROM "t" WHERE a = ?`},
		{"negative numbers keep their sign", "UPDATE t SET v = -5", "UPDATE t SET v = -?"},
		{"an unterminated quote does not leak", "SELECT 'secret", "SELECT ?"},
		{"a number after a keyword is a literal", "SELECT a FROM t ORDER BY a LIMIT 20 OFFSET\n40", "SELECT a FROM t ORDER BY a LIMIT ? OFFSET ?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormalizeStatement(tt.in); got != tt.want {
				t.Fatalf("NormalizeStatement(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeStatementIsAtMost120Characters(t *testing.T) {
	long := "SELECT " + strings.Repeat("column_name, ", 40) + "x FROM t"
	got := NormalizeStatement(long)
	if n := utf8.RuneCountInString(got); n > 120 {
		t.Fatalf("length %d > 120", n)
	}
	if !strings.HasSuffix(got, "…") {
		t.Fatalf("cut not marked: %q", got)
	}
}

func TestFingerprintGroupsTheSameFailureWithDifferentValues(t *testing.T) {
	same := [][2]string{
		{"order 17 not found", "order 18 not found"},
		{`user "alice" denied`, `user "bob" denied`},
		{"trace 4bf92f3577b34da6a3ce929d0e0e4736 lost", "trace 00f067aa0ba902b7a3ce929d0e0e4737 lost"},
		{"id 123e4567-e89b-12d3-a456-426614174000 bad", "id 9f0b1c2d-0000-4000-8000-000000000001 bad"},
		{"addr 0x7ff3 bad", "addr 0x1 bad"},
		{"timeout   after 30s", "timeout after 5s"},
	}
	for _, p := range same {
		if Fingerprint("E", p[0]) != Fingerprint("E", p[1]) {
			t.Errorf("%q and %q have different fingerprints (%q vs %q)", p[0], p[1], NormalizeMessage(p[0]), NormalizeMessage(p[1]))
		}
	}
	if Fingerprint("TimeoutError", "x") == Fingerprint("ValueError", "x") {
		t.Error("the exception type does not change the fingerprint")
	}
	if Fingerprint("", "connection refused") == Fingerprint("", "connection reset") {
		t.Error("different messages share a fingerprint")
	}
	if got := NormalizeMessage("cannot decode payload of job-7 in deadline"); got != "cannot decode payload of job-? in deadline" {
		t.Errorf("words were collapsed with the number: %q", got)
	}
}

// A remembered fingerprint is the one computed, before and after the memory fills and starts
// again, for texts short enough to be remembered and longer ones, from several goroutines.
func TestRememberedFingerprintsAreTheComputedOnes(t *testing.T) {
	long := strings.Repeat("x", maxRemembered)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3*maxFingerprints; i++ {
				typ, msg := fmt.Sprintf("E%d", i%7), fmt.Sprintf("order %d of %s failed", i%(maxFingerprints+100), []string{"'a'", "u-1", long}[i%3])
				want := fingerprint(typ, msg)
				for k := 0; k < 2; k++ {
					if got := Fingerprint(typ, msg); got != want {
						select {
						case errs <- fmt.Sprintf("Fingerprint(%q, %.40q) = %s, computed %s", typ, msg, got, want):
						default:
						}
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	remembered.mu.Lock()
	n := len(remembered.m)
	remembered.mu.Unlock()
	if n == 0 || n > maxFingerprints {
		t.Errorf("%d fingerprints remembered, want 1..%d", n, maxFingerprints)
	}
}
