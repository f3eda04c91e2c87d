package aspiretest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

func get(t *testing.T, srv *aspiretest.Server, path, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func loaded(t *testing.T) *aspiretest.Server {
	d, err := fixture.New(fixture.Options{Now: time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := aspiretest.New(aspiretest.Options{APIKey: "key", Token: "tok"})
	t.Cleanup(srv.Close)
	srv.Load(d.Traces, d.Logs)
	return srv
}

func TestTheTestDashboardBehavesAsDocumented(t *testing.T) {
	srv := loaded(t)
	cases := []struct {
		name, path, key string
		status          int
		check           func(t *testing.T, body string)
	}{
		{"a call without the key is refused with 401", "/api/telemetry/spans", "", http.StatusUnauthorized, nil},
		{"a call with a wrong key is refused with 401", "/api/telemetry/spans", "nope", http.StatusUnauthorized, nil},
		{"attribute values are all strings and unset statuses are left out", "/api/telemetry/spans?limit=10000", "key", http.StatusOK, func(t *testing.T, body string) {
			for _, typed := range []string{`"intValue"`, `"boolValue"`, `"doubleValue"`, `"status":{}`, `"status":{"code":0`} {
				if strings.Contains(body, typed) {
					t.Errorf("the answer holds %s", typed)
				}
			}
			if !strings.Contains(body, `"stringValue"`) {
				t.Error("the answer holds no string values")
			}
		}},
		{"limit keeps the newest spans and the counts say what was cut", "/api/telemetry/spans?limit=3", "key", http.StatusOK, func(t *testing.T, body string) {
			var e struct{ TotalCount, ReturnedCount int }
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.ReturnedCount != 3 || e.TotalCount <= 3 {
				t.Errorf("counts %+v (%v), want 3 returned of more", e, err)
			}
		}},
		{"an unknown resource is 404", "/api/telemetry/spans?resource=nope", "key", http.StatusNotFound, nil},
		{"an unknown trace is 404", "/api/telemetry/traces/0123456789abcdef0123456789abcdef", "key", http.StatusNotFound, nil},
		{"severity keeps that level and above", "/api/telemetry/logs?severity=Error&limit=10000", "key", http.StatusOK, func(t *testing.T, body string) {
			if strings.Contains(body, `"severityNumber":9,`) || !strings.Contains(body, `"severityNumber":17`) {
				t.Errorf("error logs: %.300s", body)
			}
		}},
		{"resources list the services", "/api/telemetry/resources", "key", http.StatusOK, func(t *testing.T, body string) {
			if !strings.Contains(body, `"name":"checkout"`) || !strings.Contains(body, `"name":"unknown_service"`) {
				t.Errorf("resources: %s", body)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := get(t, srv, c.path, c.key)
			if status != c.status {
				t.Fatalf("HTTP %d, want %d: %.200s", status, c.status, body)
			}
			if c.check != nil {
				c.check(t, body)
			}
		})
	}
}

func TestTheTestDashboardExchangesALoginTokenForItsKey(t *testing.T) {
	srv := loaded(t)
	for _, c := range []struct {
		name, token string
		status      int
		key         string
	}{
		{"the right token gets the key", "tok", http.StatusOK, "key"},
		{"a wrong token is refused", "bad", http.StatusUnauthorized, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := srv.Client().Post(srv.URL+"/api/telemetry/validateToken", "application/json", strings.NewReader(`{"token":"`+c.token+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct{ APIKey string }
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != c.status || out.APIKey != c.key {
				t.Errorf("HTTP %d key %q, want %d %q", resp.StatusCode, out.APIKey, c.status, c.key)
			}
		})
	}
}
