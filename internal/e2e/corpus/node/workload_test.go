package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Service names, as OTEL_SERVICE_NAME sets them.
const (
	serviceShop      = "shop-express"
	serviceInventory = "inventory-koa"
)

// throwSite is "app/file.js:LINE" of the line of the project's file that holds needle: where
// the app raises an error, the location a correct answer names.
func throwSite(t *testing.T, root, rel, needle string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, needle) {
			return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), i+1)
		}
	}
	t.Fatalf("%s has no line with %q", rel, needle)
	return ""
}

// driver sends the workload's requests to one app, one at a time, and records them.
type driver struct {
	t      *testing.T
	app    *nodeApp
	client *http.Client
	truth  *Truth
}

// do sends one request and records it with the cause it is designed to produce (nil for
// none). want is the status the design expects; another one is a problem of the truth.
func (d *driver) do(method, path, route string, body any, want int, cause *Cause) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.app.base+path, rd)
	if err != nil {
		d.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v\napp output:\n%s", method, path, err, d.app.out.String())
	}
	out, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	r := Request{Route: route, Status: res.StatusCode, TraceID: res.Header.Get("x-trace-id"), Took: time.Since(start)}
	if res.StatusCode >= 500 || (cause != nil && cause.Handled) {
		r.Cause = cause
	}
	if res.StatusCode != want {
		d.truth.problems = append(d.truth.problems, fmt.Sprintf("%s %s answered %d, want %d: %s", method, path, res.StatusCode, want, out))
	}
	d.truth.Requests = append(d.truth.Requests, r)
	return res.StatusCode, out
}

// driveShop runs the express shop's workload: reads, checkouts (some declined, some invalid),
// reservations (some beyond the stock), the report on a dropped table, the slow sales report,
// and reindex jobs, every other one on a corrupt batch.
func driveShop(t *testing.T, app *nodeApp, root string) *Truth {
	declined := &Cause{Key: "payment declined", Message: "payment declined", Domain: "http",
		Throw: throwSite(t, root, "shop-express/app.js", "throw new Error('payment declined')")}
	inventory := &Cause{Key: "inventory", Message: "insufficient inventory to reserve", Domain: "http",
		Throw: throwSite(t, root, "shop-express/app.js", "throw new InventoryError(")}
	missing := &Cause{Key: "missing table", Message: `relation "missing_table" does not exist`, Domain: "http",
		Generic: "PostgreSQL error of type",
		Throw:   throwSite(t, root, "shop-express/app.js", "FROM missing_table")}
	reindex := &Cause{Key: "reindex job", Message: "reindex failed: product row has no name", Domain: "job",
		Throw: throwSite(t, root, "shop-express/app.js", "throw new Error('reindex failed")}
	tr := &Truth{Service: serviceShop, Causes: []*Cause{declined, inventory, missing, reindex},
		SlowStatement: "pg_sleep", SlowRoute: "GET /reports/sales", DBSystems: []string{"postgresql"}}
	d := &driver{t: t, app: app, client: &http.Client{Timeout: 15 * time.Second}, truth: tr}
	card, bad := "4242-4242-4242-4242", "4000-0000-0000-0002"
	for i := range 12 {
		switch i % 3 {
		case 0:
			d.do("GET", "/products", "GET /products", nil, 200, nil)
		default:
			d.do("GET", fmt.Sprintf("/products/%d", i+1), "GET /products/:id", nil, 200, nil)
		}
		d.do("POST", "/checkout", "POST /checkout", map[string]any{"productId": i%5 + 1, "quantity": 1, "card": card}, 201, nil)
		if i%3 == 1 {
			d.do("POST", "/checkout", "POST /checkout", map[string]any{"productId": 2, "quantity": 2, "card": bad}, 500, declined)
			d.do("POST", "/inventory/reserve", "POST /inventory/reserve", map[string]any{"productId": 13, "quantity": 5}, 500, inventory)
			d.do("GET", "/reports/legacy", "GET /reports/legacy", nil, 500, missing)
		}
		if i%4 == 2 {
			d.do("POST", "/checkout", "POST /checkout", map[string]any{"productId": "seven"}, 400, nil)
			d.do("GET", "/products/999", "GET /products/:id", nil, 404, nil)
			d.do("POST", "/inventory/reserve", "POST /inventory/reserve", map[string]any{"productId": 3, "quantity": 1}, 200, nil)
		}
	}
	d.do("GET", "/products/9999", "GET /products/:id", nil, 404, nil)
	d.do("POST", "/checkout", "POST /checkout", map[string]any{"productId": 1}, 400, nil)
	for range 4 {
		d.do("GET", "/reports/sales", "GET /reports/sales", nil, 200, nil)
	}
	// Jobs run one at a time: start one, poll until it ended.
	for i := range 4 {
		batch, cause := "all", (*Cause)(nil)
		if i%2 == 1 {
			batch, cause = "corrupt", reindex
		}
		_, out := d.do("POST", "/jobs/reindex", "POST /jobs/reindex", map[string]any{"batch": batch}, 202, nil)
		var started struct {
			JobID string `json:"jobId"`
		}
		if err := json.Unmarshal(out, &started); err != nil || started.JobID == "" {
			t.Fatalf("POST /jobs/reindex answered %s", out)
		}
		job := JobRun{ID: started.JobID, Name: "reindex", Cause: cause}
		for deadline := time.Now().Add(10 * time.Second); ; {
			_, out := d.do("GET", "/jobs/"+job.ID, "GET /jobs/:id", nil, 200, nil)
			var st struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(out, &st)
			if st.Status != "running" {
				job.Status = st.Status
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s still running after 10 s", job.ID)
			}
			time.Sleep(20 * time.Millisecond)
		}
		tr.Jobs = append(tr.Jobs, job)
	}
	return tr
}

// driveInventory runs the koa inventory's workload: item reads (cached after the first),
// stock reads (some under load: the cache script times out and the read is retried, and the
// request succeeds), item creation (some invalid, some duplicates), reports (some with an
// unknown layout that crashes the renderer), and the slow valuation.
func driveInventory(t *testing.T, app *nodeApp, root string) *Truth {
	timeout := &Cause{Key: "cache timeout", Message: "Command timed out", Domain: "http", Handled: true}
	dup := &Cause{Key: "duplicate sku", Message: "Duplicate entry 'SKU-001' for key 'PRIMARY'", Domain: "http"}
	crash := &Cause{Key: "report crash", Message: "report renderer crashed: unknown layout", Domain: "http",
		Throw: throwSite(t, root, "inventory-koa/app.js", "throw new Error('report renderer crashed")}
	tr := &Truth{Service: serviceInventory, Causes: []*Cause{timeout, dup, crash},
		SlowStatement: "SLEEP", SlowRoute: "GET /valuation", DBSystems: []string{"mysql", "mariadb"}}
	d := &driver{t: t, app: app, client: &http.Client{Timeout: 15 * time.Second}, truth: tr}
	for i := range 12 {
		sku := fmt.Sprintf("SKU-%03d", i%6+1)
		d.do("GET", "/items/"+sku, "GET /items/:sku", nil, 200, nil)
		d.do("GET", "/items/"+sku+"/stock", "GET /items/:sku/stock", nil, 200, nil)
		switch i % 4 {
		case 0:
			d.do("GET", fmt.Sprintf("/items/%s/stock?load=200", sku), "GET /items/:sku/stock", nil, 200, timeout)
			d.do("POST", "/items", "POST /items", map[string]any{"sku": "SKU-001", "name": "again"}, 500, dup)
		case 1:
			d.do("POST", "/items", "POST /items", map[string]any{"name": "no sku"}, 400, nil)
			d.do("GET", "/reports/fancy", "GET /reports/:kind", nil, 500, crash)
		case 2:
			d.do("POST", "/items", "POST /items", map[string]any{"sku": fmt.Sprintf("NEW-%d", i), "name": "new", "quantity": 3}, 201, nil)
			d.do("GET", "/items/NOPE", "GET /items/:sku", nil, 404, nil)
			d.do("GET", "/reports/summary", "GET /reports/:kind", nil, 200, nil)
		case 3:
			d.do("GET", "/valuation", "GET /valuation", nil, 200, nil)
			d.do("GET", "/valuation", "GET /valuation", nil, 200, nil)
		}
	}
	return tr
}

// jobTraces fills in each job run's trace id from the app's log: the pino instrumentation
// stamps the job span's trace id on the record the job logs when it ends.
func jobTraces(tr *Truth, logs []logLine) {
	for i, j := range tr.Jobs {
		for _, l := range logs {
			if l.JobID == j.ID && l.TraceID != "" {
				tr.Jobs[i].TraceID = l.TraceID
			}
		}
	}
}
