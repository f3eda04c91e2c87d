package goapp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// Options place a workload run.
type Options struct {
	Endpoints Endpoints
	// MariaDSN is a go-sql-driver DSN of an empty database the app may create tables in.
	MariaDSN string
	// RedisAddr is host:port of a Redis server.
	RedisAddr string
	// Seed makes the request mix and order repeatable.
	Seed uint64
	// Concurrency is how many requests are in flight at once (default 8).
	Concurrency int
	// Protocols says how each service exports; the default sends frontend and inventory over
	// OTLP/HTTP and checkout and legacy over OTLP/gRPC.
	Protocols map[string]Protocol
}

// The request mix.
const (
	planRequests = 250
	// planRejected orders have quantity 0: the frontend answers 400 itself.
	planRejected = 20
	// planAddressInvalid orders ship to a zip legacy cannot deliver to: 500 from legacy.
	planAddressInvalid = 18
	// planQtyLimit orders ask for more than the reservations table's CHECK allows: 500 from
	// inventory.
	planQtyLimit = 14
	// planArchiveZips orders ship to a zip legacy finds only on its retry, in the archive.
	planArchiveZips = 25
	// planSlowCart orders' carts are written after checkout starts reading: the first read
	// times out and the retry gets the cart.
	planSlowCart = 150
	// planAudit orders ask inventory for the slow stock audit, planVerify legacy for the
	// slow carrier verification; both run SlowStatement.
	planAudit  = 80
	planVerify = 80
)

// cartWait bounds how long the cart writer of a slow cart waits for its first read to time out
// (a request answered before it reads its cart ends the wait too).
const cartWait = 30 * time.Second

const invalidZip = "00000"

type plan struct {
	form     orderForm
	slowCart bool
	want     int
}

func requestPlan(rng *rand.Rand) []plan {
	n := planRequests - planRejected
	out := make([]plan, 0, planRequests)
	for i := range n {
		p := plan{want: http.StatusOK, form: orderForm{User: fmt.Sprintf("user-%d", rng.IntN(40)),
			SKU: fmt.Sprintf("SKU-%d", 1+rng.IntN(skus)), Qty: 1 + rng.IntN(5), Zip: fmt.Sprint(10001 + rng.IntN(zips))}}
		switch {
		case i < planAddressInvalid:
			p.form.Zip, p.want = invalidZip, http.StatusInternalServerError
		case i < planAddressInvalid+planQtyLimit:
			p.form.Qty, p.want = 7, http.StatusInternalServerError
		case i < planAddressInvalid+planQtyLimit+planArchiveZips:
			p.form.Zip = fmt.Sprint(20001 + rng.IntN(archiveZips))
		}
		out = append(out, p)
	}
	mark := func(count int, set func(*plan)) {
		for _, i := range rng.Perm(n)[:count] {
			set(&out[i])
		}
	}
	mark(planSlowCart, func(p *plan) { p.slowCart = true })
	mark(planAudit, func(p *plan) { p.form.Audit = true })
	mark(planVerify, func(p *plan) { p.form.Verify = true })
	for range planRejected {
		out = append(out, plan{want: http.StatusBadRequest, form: orderForm{User: "user-0", SKU: "SKU-1", Qty: 0, Zip: "10001"}})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i := range out {
		out[i].form.OrderID = int64(1000 + i)
	}
	return out
}

// DefaultProtocols: half of the services over each.
var DefaultProtocols = map[string]Protocol{
	ServiceFrontend: OTLPHTTP, ServiceInventory: OTLPHTTP,
	ServiceCheckout: OTLPGRPC, ServiceLegacy: OTLPGRPC,
}

// Run seeds the database, starts the four services, drives the request mix through the
// frontend, stops everything and flushes every provider. When it returns the truth, the
// receiver has acknowledged all of the app's telemetry.
func Run(ctx context.Context, o Options) (_ *Truth, err error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Protocols == nil {
		o.Protocols = DefaultProtocols
	}
	dsn, err := interpolating(o.MariaDSN)
	if err != nil {
		return nil, err
	}
	if err := seed(ctx, dsn); err != nil {
		return nil, fmt.Errorf("seed the database: %w", err)
	}
	t, l := newTally(), newLedger()
	var (
		procs   []*process
		closers []func() error
	)
	shutdown := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		closers = nil
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		for _, p := range procs {
			if err := p.flush(flushCtx); err != nil {
				errs = append(errs, fmt.Errorf("flush %s: %w", p.name, err))
			}
		}
		procs = nil
		return errors.Join(errs...)
	}
	defer func() { err = errors.Join(err, shutdown()) }()
	proc := func(name string, withLogs bool) (*process, error) {
		p, err := newProcess(ctx, o.Endpoints, name, o.Protocols[name], withLogs, t)
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}
	feProc, err := proc(ServiceFrontend, true)
	if err != nil {
		return nil, err
	}
	coProc, err := proc(ServiceCheckout, true)
	if err != nil {
		return nil, err
	}
	invProc, err := proc(ServiceInventory, true)
	if err != nil {
		return nil, err
	}
	lgProc, err := proc(ServiceLegacy, false)
	if err != nil {
		return nil, err
	}

	lg, err := newLegacy(lgProc, dsn, l)
	if err != nil {
		return nil, err
	}
	closers = append(closers, lg.db.Close)
	lgURL, stop, err := serveHTTP(lg.handler())
	if err != nil {
		return nil, err
	}
	closers = append(closers, stop)

	inv, err := newInventory(invProc, dsn, l)
	if err != nil {
		return nil, err
	}
	closers = append(closers, inv.db.Close)
	invURL, stop, err := serveHTTP(inv.handler())
	if err != nil {
		return nil, err
	}
	closers = append(closers, stop)

	co, err := newCheckout(coProc, o.RedisAddr, lgURL, invURL, l)
	if err != nil {
		return nil, err
	}
	closers = append(closers, co.close)
	coLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	gs := co.server()
	go func() { _ = gs.Serve(coLn) }()
	closers = append(closers, func() error { gs.GracefulStop(); return nil })

	fe, err := newFrontend(feProc, coLn.Addr().String())
	if err != nil {
		return nil, err
	}
	closers = append(closers, fe.cc.Close)
	feURL, stop, err := serveHTTP(fe.handler())
	if err != nil {
		return nil, err
	}
	closers = append(closers, stop)

	// The cart writer is not instrumented: it is the part of the shop this app leaves out.
	carts := redis.NewClient(&redis.Options{Addr: o.RedisAddr, DisableIdentity: true})
	closers = append(closers, carts.Close)
	if err := carts.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s: %w", o.RedisAddr, err)
	}

	if err := drive(ctx, feURL, carts, requestPlan(rand.New(rand.NewPCG(o.Seed, 2027))), o.Concurrency, l); err != nil {
		return nil, err
	}
	if err := shutdown(); err != nil {
		return nil, err
	}
	tr := l.finish(t)
	tr.Protocols = o.Protocols
	return tr, nil
}

// interpolating returns the DSN with client-side parameter interpolation, so each statement is
// one round trip (and one driver call) rather than a prepare, an execute and a close.
func interpolating(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("parse the MariaDB DSN: %w", err)
	}
	cfg.InterpolateParams = true
	return cfg.FormatDSN(), nil
}

const (
	skus        = 20
	zips        = 50
	archiveZips = 10
)

// seed creates the shop's tables through an uninstrumented connection.
func seed(ctx context.Context, dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmts := []string{
		"DROP TABLE IF EXISTS stock, reservations, zips, zips_archive",
		"CREATE TABLE stock (sku VARCHAR(32) PRIMARY KEY, qty INT NOT NULL)",
		"CREATE TABLE reservations (id BIGINT AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, sku VARCHAR(32) NOT NULL, qty INT NOT NULL, CONSTRAINT qty_limit CHECK (qty <= 5))",
		"CREATE TABLE zips (zip VARCHAR(10) PRIMARY KEY, zone VARCHAR(16) NOT NULL)",
		"CREATE TABLE zips_archive (zip VARCHAR(10) PRIMARY KEY, zone VARCHAR(16) NOT NULL)",
	}
	for i := 1; i <= skus; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO stock VALUES ('SKU-%d', 1000000)", i))
	}
	for i := range zips {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO zips VALUES ('%d', 'zone-%d')", 10001+i, i%5))
	}
	for i := range archiveZips {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO zips_archive VALUES ('%d', 'zone-%d')", 20001+i, i%5))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// serveHTTP serves h on a loopback port; stop shuts it down.
func serveHTTP(h http.Handler) (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// drive sends the plan to the frontend with a plain HTTP client (the driver is not
// instrumented, so every request starts its own trace at the frontend), writes each cart in
// time or late, and checks each answer's status.
func drive(ctx context.Context, base string, carts *redis.Client, plans []plan, workers int, l *ledger) error {
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
				if err := send(ctx, client, base, carts, p, l); err != nil {
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

func send(ctx context.Context, client *http.Client, base string, carts *redis.Client, p plan, l *ledger) error {
	var late sync.WaitGroup
	defer late.Wait()
	answered := make(chan struct{})
	defer close(answered)
	if p.want != http.StatusBadRequest {
		key := cartKey(p.form.OrderID)
		if p.slowCart {
			// Written once the first read has timed out, so the retry finds it: the timeout
			// happens whatever the machine's load.
			timedOut := l.firstTimeout(p.form.OrderID)
			late.Go(func() {
				select {
				case <-timedOut:
				case <-answered:
				case <-time.After(cartWait):
				}
				_ = carts.RPush(context.WithoutCancel(ctx), key, p.form.SKU).Err()
			})
		} else if err := carts.RPush(ctx, key, p.form.SKU).Err(); err != nil {
			return fmt.Errorf("write cart %s: %w", key, err)
		}
	}
	b, err := json.Marshal(p.form)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/checkout", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("order %d: %w", p.form.OrderID, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != p.want {
		return fmt.Errorf("order %d (%+v) answered %d, want %d", p.form.OrderID, p.form, resp.StatusCode, p.want)
	}
	l.driven(resp.Header.Get("X-Trace-Id"), resp.StatusCode)
	return nil
}
