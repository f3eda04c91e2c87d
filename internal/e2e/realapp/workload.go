package realapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Options size and place a workload run.
type Options struct {
	// Endpoint is the OTLP/HTTP base URL the services export to, e.g. http://127.0.0.1:4318.
	Endpoint string
	// DatabaseURL is the seeded shop database (see Seed).
	DatabaseURL string
	// Seed makes the request mix and order repeatable.
	Seed uint64
	// Concurrency is how many requests are in flight at once (default 4).
	Concurrency int
}

// The request mix: how many requests of each kind, and how many of them fail. There are
// enough searches that the slow statement's total time stays well above the point reads' on a
// busy machine too, where every short statement's round trip stretches far more than the
// search's own work does: with 30, a loaded run measured 1.70 s against 0.96 s; with 90,
// 6.6–6.9 s against 1.8–2.6 s.
const (
	ordersRequests    = 120
	ordersNotFound    = 12
	checkouts         = 60
	checkoutsDeclined = 9
	searches          = 90
	reports           = 30
	reportsPanicking  = 6
	jobRuns           = 4
)

// plan is one request the driver will send.
type plan struct {
	method, path, route string
	body                any
	want                int
}

func requestPlan(rng *rand.Rand) []plan {
	var out []plan
	for i := range ordersRequests {
		id := 1 + rng.Int64N(seedOrders)
		want := http.StatusOK
		if i < ordersNotFound {
			id, want = 900000+int64(i)*37, http.StatusNotFound
		}
		out = append(out, plan{method: http.MethodGet, path: fmt.Sprintf("/orders/%d", id), route: "GET /orders/{id}", want: want})
	}
	for i := range checkouts {
		card, want := cardApproved, http.StatusCreated
		if i < checkoutsDeclined {
			card, want = cardDeclined, http.StatusPaymentRequired
		}
		out = append(out, plan{method: http.MethodPost, path: "/checkout", route: "POST /checkout", want: want,
			body: checkoutRequest{OrderID: 1 + rng.Int64N(seedOrders), Card: card}})
	}
	for range searches {
		out = append(out, plan{method: http.MethodGet, path: fmt.Sprintf("/customers/search?q=%04x", rng.IntN(0x10000)),
			route: "GET /customers/search", want: http.StatusOK})
	}
	for i := range reports {
		day, want := rng.IntN(len(dailyTargets)), http.StatusOK
		if i < reportsPanicking {
			day, want = len(dailyTargets)+i%3, http.StatusInternalServerError
		}
		out = append(out, plan{method: http.MethodGet, path: fmt.Sprintf("/reports/%d", day), route: "GET /reports/{day}", want: want})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Run starts the three services against the database, emits the lone error log, drives the
// request mix through the shop, runs the job, stops everything and flushes every provider.
// When it returns the truth, the receiver has acknowledged all of the workload's telemetry.
func Run(ctx context.Context, o Options) (_ *Truth, err error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	t, l := newTally(), newLedger()
	// procs are flushed on every way out: on success before the truth is read, so it holds
	// the final tallies; on failure so nothing is left exporting in the background.
	var procs []*process
	flushAll := func() error {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		var errs []error
		for _, p := range procs {
			if err := p.flush(flushCtx); err != nil {
				errs = append(errs, fmt.Errorf("flush %s: %w", p.name, err))
			}
		}
		procs = nil
		return errors.Join(errs...)
	}
	defer func() { err = errors.Join(err, flushAll()) }()
	proc := func(name string) (*process, error) {
		p, err := newProcess(ctx, o.Endpoint, name, t)
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}
	shopProc, err := proc(ServiceShop)
	if err != nil {
		return nil, err
	}
	payProc, err := proc(ServicePayments)
	if err != nil {
		return nil, err
	}
	workerProc, err := proc(ServiceWorker)
	if err != nil {
		return nil, err
	}

	// The shop starts with a failed configuration reload, logged outside any request.
	const reloadFailure = "config reload failed: permission denied reading shop.yaml"
	shopProc.log.ErrorContext(ctx, reloadFailure)
	l.fail(KindLoneLog, ServiceShop, "", reloadFailure)

	pools := map[*process]func(){}
	defer func() {
		for _, closePool := range pools {
			closePool()
		}
	}()
	poolFor := func(p *process) (*pgxpool.Pool, error) {
		pool, err := openPool(ctx, o.DatabaseURL, p, l)
		if err != nil {
			return nil, fmt.Errorf("open the %s pool: %w", p.name, err)
		}
		pools[p] = pool.Close
		return pool, nil
	}
	shopPool, err := poolFor(shopProc)
	if err != nil {
		return nil, err
	}
	payPool, err := poolFor(payProc)
	if err != nil {
		return nil, err
	}
	workerPool, err := poolFor(workerProc)
	if err != nil {
		return nil, err
	}

	payLn, err := listen(newPayments(payProc, payPool, l))
	if err != nil {
		return nil, err
	}
	shopLn, err := listen(newShop(shopProc, shopPool, payLn.url, l))
	if err != nil {
		_ = payLn.close(ctx)
		return nil, err
	}
	driveErr := drive(ctx, shopLn.url, requestPlan(rand.New(rand.NewPCG(o.Seed, 2026))), o.Concurrency, l)
	closeErr := errors.Join(shopLn.close(ctx), payLn.close(ctx))
	if err := errors.Join(driveErr, closeErr); err != nil {
		return nil, err
	}
	if err := runJobs(ctx, workerProc, workerPool, l, jobRuns); err != nil {
		return nil, err
	}
	for _, closePool := range pools {
		closePool()
	}
	clear(pools)
	if err := flushAll(); err != nil {
		return nil, err
	}
	return l.finish(t), nil
}

// drive sends the plan to the shop with a plain HTTP client (the driver is not instrumented,
// so every request starts its own trace at the shop) and checks each answer's status.
func drive(ctx context.Context, base string, plans []plan, workers int, l *ledger) error {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	work := make(chan plan)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for p := range work {
				if err := send(ctx, client, base, p, l); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, p := range plans {
		if ctx.Err() != nil {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

func send(ctx context.Context, client *http.Client, base string, p plan, l *ledger) error {
	var body io.Reader
	if p.body != nil {
		b, err := json.Marshal(p.body)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, base+p.path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", authToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.method, p.path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != p.want {
		return fmt.Errorf("%s %s answered %d, want %d", p.method, p.path, resp.StatusCode, p.want)
	}
	l.driven(p.route, resp.StatusCode, resp.Header.Get("X-Trace-Id"))
	return nil
}
