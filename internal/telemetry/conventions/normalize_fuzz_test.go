package conventions

import (
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzNormalizeStatement checks what a database operation's label rests on: no panic, the same
// label for the same statement, at most n runes, normalizing a label again changes nothing,
// and no statement takes long.
func FuzzNormalizeStatement(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM orders WHERE id = 42",
		"SELECT id, name FROM products WHERE category = 'books' LIMIT 20",
		"INSERT INTO orders (customer_id, total) VALUES (1017, 12.50)",
		"UPDATE users SET pw = 'it''s' WHERE id IN (1, 2, 3)",
		"SELECT x'DEADBEEF', 0x1F, 1e-5, 3rd FROM t",
		`SELECT "quoted 'ident'" FROM "t" WHERE a = $1 AND b = :name AND c = ?`,
		"SELECT 'unterminated",
		"SELECT date(created_at), sum(total) FROM orders WHERE created_at > now() - interval '90 days' GROUP BY 1",
	} {
		f.Add(s, uint16(maxStatement))
	}
	f.Fuzz(func(t *testing.T, s string, n uint16) {
		limit := int(n%MaxStatement) + 2
		var once string
		for i := range 2 {
			start := time.Now()
			once = NormalizeStatementN(s, limit)
			if took := time.Since(start); took > time.Second {
				if i == 1 {
					t.Fatalf("NormalizeStatementN of %d bytes took %v", len(s), took)
				}
				continue // a pause of a busy machine happens once, a quadratic path every time
			}
			break
		}
		if again := NormalizeStatementN(s, limit); again != once {
			t.Fatalf("NormalizeStatementN(%q) gave %q, then %q", s, once, again)
		}
		if c := utf8.RuneCountInString(once); c > limit {
			t.Fatalf("NormalizeStatementN(%q, %d) has %d runes", s, limit, c)
		}
		if twice := NormalizeStatementN(once, limit); twice != once {
			t.Fatalf("normalizing %q again changed it: %q, then %q", s, once, twice)
		}
		msg := NormalizeMessage(s)
		if again := NormalizeMessage(msg); again != msg {
			t.Fatalf("NormalizeMessage(%q) = %q, then %q", s, msg, again)
		}
	})
}
