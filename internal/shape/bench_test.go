package shape

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/secretenv"
)

// typicalAnswer is a list_runs-like answer of about 6 KiB without secrets.
func typicalAnswer() []byte {
	runs := make([]map[string]any, 20)
	for i := range runs {
		runs[i] = map[string]any{
			"id": fmt.Sprintf("run-%04d", i), "domain": "checkout", "name": "POST /api/orders/{id}/confirm",
			"status": "ok", "startUnixMs": 1767000000000 + i, "durationMs": 12.5, "service": "orders-api",
			"traceId": fmt.Sprintf("%032x", i), "spanCount": 42, "errorCount": 0,
		}
	}
	raw, _ := json.Marshal(map[string]any{
		"count": 20, "runs": runs, "page": map[string]any{"returned": 20, "truncated": false},
		"scan": map[string]any{"windowStartUnixMs": 1, "windowEndUnixMs": 2, "scanned": 4000, "limited": false},
	})
	return raw
}

func BenchmarkRedactStringWithoutSecrets(b *testing.B) {
	r := NewRedactor(RedactorOptions{SecretValues: secretenv.RedactionValues([]string{"GITHUB_TOKEN=plainOpaqueValue"}, nil)})
	s := "GET /api/orders/1234/confirm returned 200 in 12ms; service orders-api, region eu-west-1"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(s)
	}
}

func BenchmarkRedactStringWithSecrets(b *testing.B) {
	r := NewRedactor(RedactorOptions{})
	s := "connect postgres://app:s3cretPassw0rd@db/app with Authorization: Bearer abcDEF123ghiJKL456mno"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(s)
	}
}

func BenchmarkRedactJSONWithoutSecrets(b *testing.B) {
	r := NewRedactor(RedactorOptions{})
	raw := typicalAnswer()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.JSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedactJSONWithSecrets(b *testing.B) {
	r := NewRedactor(RedactorOptions{})
	raw := []byte(strings.Replace(string(typicalAnswer()), "POST /api/orders/{id}/confirm", "POST /login?password=hunter2secret", 5))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.JSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFitWithinBudget(b *testing.B) {
	raw := typicalAnswer()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Fit(raw, Standard, Limits{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFitOverBudget(b *testing.B) {
	raw := runsAnswer(1000, 60, true)
	paging := &Paging{Field: "runs", Count: "count", Remint: remintAt}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Fit(raw, Standard, Limits{}, paging); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCursorRoundTrip(b *testing.B) {
	c := NewCodec(nil)
	q := listRunsQuery{Domain: "checkout", Window: "1h"}
	b.ReportAllocs()
	for b.Loop() {
		cur, err := c.Encode("list_runs", q, "fp", 20)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Decode(cur, "list_runs", q, "fp"); err != nil {
			b.Fatal(err)
		}
	}
}
