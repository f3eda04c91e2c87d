package doctor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry/jaeger"
)

// The source family over a Jaeger source: the real backend against an imitation of the query
// API, so what the doctor says comes from what the backend found.
func TestSourceFamilyOverJaeger(t *testing.T) {
	now := time.Now()
	recent := fmt.Sprintf(`{"result":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"api"}}]},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"GET /","kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d"}]}]}]}}`,
		now.Add(-time.Minute).UnixNano(), now.Add(-time.Minute+time.Millisecond).UnixNano())
	tests := []struct {
		name string
		// services and traces answer the two endpoints ("" for the gateway's 404).
		servicesType, services, traces string
		wantStatus                     Status
		wantChecks                     map[string]string // check name → a substring of its summary
		wantFix                        string
	}{
		{
			name: "a login page at the address fails and says what answered", servicesType: "text/html", services: "<html>Sign in</html>",
			wantStatus: Fail, wantChecks: map[string]string{"source_reachable": "text/html, not JSON"}, wantFix: "jaeger+http://HOST:16686",
		},
		{
			name: "a Jaeger with recent traces passes and says it holds no logs", servicesType: "application/json", services: `{"services":["api"]}`, traces: recent,
			wantStatus: Pass, wantChecks: map[string]string{"source_reachable": "jaeger", "source_coverage": "traces only", "source_recent_data": "old"},
		},
		{
			name: "an empty Jaeger warns with the receiver to send to", servicesType: "application/json", services: `{"services":[]}`,
			wantStatus: Warn, wantChecks: map[string]string{"source_coverage": "no log", "source_recent_data": "no traces yet"}, wantFix: "OTLP receiver",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/v3/services" {
					w.Header().Set("Content-Type", tt.servicesType)
					fmt.Fprint(w, tt.services)
					return
				}
				if tt.traces == "" {
					http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
					return
				}
				fmt.Fprint(w, tt.traces)
			}))
			defer srv.Close()
			b, err := jaeger.New(srv.URL, jaeger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			d := Deps{Telemetry: engine.New(b, nil), Now: time.Now, ReceiverAddr: "127.0.0.1:4318"}
			rep := Run(context.Background(), Families(d, ""), FamilySource)
			if rep.Status != tt.wantStatus {
				t.Fatalf("status = %s, want %s (%+v)", rep.Status, tt.wantStatus, rep.Families[0].Checks)
			}
			fixes := ""
			for name, want := range tt.wantChecks {
				c, ok := checkByName(rep, name)
				if !ok || !strings.Contains(c.Summary, want) {
					t.Errorf("check %s = %+v, want a summary containing %q", name, c, want)
				}
				fixes += c.Fix
			}
			if !strings.Contains(fixes, tt.wantFix) {
				t.Errorf("fixes %q, want one containing %q", fixes, tt.wantFix)
			}
		})
	}
}
