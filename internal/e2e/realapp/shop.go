package realapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"
)

// authToken is the bearer token the shop expects; the driver sends it.
const authToken = "Bearer shop-demo-token"

// shop is the shop-api service: otelhttp's server span, then three middleware layers with
// spans of their own (recover, log, auth), then one span per route handler.
type shop struct {
	p        *process
	pool     *pgxpool.Pool
	payments string
	client   *http.Client
	ledger   *ledger
	rt       *routes
}

// dailyTargets has one entry per weekday; a report for day 7 or later indexes past it and
// panics, the workload's deliberate bug.
var dailyTargets = []float64{1200, 900, 950, 1000, 1100, 1800, 2100}

func newShop(p *process, pool *pgxpool.Pool, paymentsURL string, l *ledger) http.Handler {
	s := &shop{p: p, pool: pool, payments: paymentsURL, client: clientFor(p), ledger: l, rt: newRoutes()}
	tr := p.tracer
	s.rt.handle("GET /orders/{id}", traced(tr, "orders.get", s.getOrder))
	s.rt.handle("POST /checkout", traced(tr, "checkout.create", s.checkout))
	s.rt.handle("GET /customers/search", traced(tr, "customers.search", s.search))
	s.rt.handle("GET /reports/{day}", traced(tr, "reports.daily", s.report))
	h := s.recoverMW(s.logMW(s.authMW(s.rt.serve)))
	return serveApp(p, s.rt, h, func(_ *http.Request, sv *served) { l.shopServed(sv) })
}

// recoverMW turns a panic of anything below it into a 500 and an error log.
func (s *shop) recoverMW(next appHandler) appHandler {
	return traced(s.p.tracer, "middleware.recover", func(w http.ResponseWriter, r *http.Request) (err error) {
		defer func() {
			if v := recover(); v != nil {
				pe, ok := v.(*PanicError)
				if !ok {
					pe = &PanicError{Value: v}
				}
				s.p.log.ErrorContext(r.Context(), "panic recovered", "error", pe.Error(), "path", r.URL.Path)
				s.ledger.fail(KindPanic, ServiceShop, traceIDOf(r), pe.Error())
				err = pe
			}
		}()
		return next(w, r)
	})
}

// logMW logs every request, and every failure at error level inside the failing span.
func (s *shop) logMW(next appHandler) appHandler {
	return traced(s.p.tracer, "middleware.log", logged(s.p, next))
}

func logged(p *process, next appHandler) appHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		p.log.InfoContext(ctx, "request received", "method", r.Method, "path", r.URL.Path)
		err := next(w, r)
		if err != nil {
			p.log.ErrorContext(ctx, "request failed", "error", err.Error(), "status", statusOf(err))
			return err
		}
		p.log.InfoContext(ctx, "request handled", "method", r.Method, "path", r.URL.Path)
		return nil
	}
}

// authError is a 401; the driver always authenticates, so it never happens.
type authError struct{}

func (authError) Error() string   { return "missing or wrong bearer token" }
func (authError) HTTPStatus() int { return http.StatusUnauthorized }

func (s *shop) authMW(next appHandler) appHandler {
	return traced(s.p.tracer, "middleware.auth", func(w http.ResponseWriter, r *http.Request) error {
		if r.Header.Get("Authorization") != authToken {
			return fail(r.Context(), authError{})
		}
		return next(w, r)
	})
}

type order struct {
	ID         int64   `json:"id"`
	CustomerID int64   `json:"customerId"`
	Total      float64 `json:"total"`
	Status     string  `json:"status"`
}

// loadOrder is the fast statement: a primary-key read.
func (s *shop) loadOrder(r *http.Request, id int64) (order, error) {
	var o order
	err := s.pool.QueryRow(r.Context(), sqlOrderByID, id).Scan(&o.ID, &o.CustomerID, &o.Total, &o.Status)
	return o, err
}

func (s *shop) getOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return fail(r.Context(), fmt.Errorf("order id %q: %w", r.PathValue("id"), err))
	}
	o, err := s.loadOrder(r, id)
	if errors.Is(err, pgx.ErrNoRows) {
		nf := &OrderNotFoundError{OrderID: id}
		s.ledger.fail(KindOrderNotFound, ServiceShop, traceIDOf(r), nf.Error())
		return fail(r.Context(), nf)
	}
	if err != nil {
		return fail(r.Context(), fmt.Errorf("load order %d: %w", id, err))
	}
	return writeJSON(w, http.StatusOK, o)
}

// checkoutRequest is what the driver posts.
type checkoutRequest struct {
	OrderID int64  `json:"orderId"`
	Card    string `json:"card"`
}

// charge is what the shop asks the payments service for.
type charge struct {
	OrderID int64   `json:"orderId"`
	Amount  float64 `json:"amount"`
	Card    string  `json:"card"`
}

func (s *shop) checkout(w http.ResponseWriter, r *http.Request) error {
	var in checkoutRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return fail(r.Context(), fmt.Errorf("decode checkout: %w", err))
	}
	o, err := s.loadOrder(r, in.OrderID)
	if err != nil {
		return fail(r.Context(), fmt.Errorf("load order %d: %w", in.OrderID, err))
	}
	body, _ := json.Marshal(charge{OrderID: o.ID, Amount: o.Total, Card: in.Card})
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, s.payments+"/charges", bytes.NewReader(body))
	if err != nil {
		return fail(r.Context(), err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fail(r.Context(), fmt.Errorf("call payments: %w", err))
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if err != nil {
		return fail(r.Context(), fmt.Errorf("read payments answer: %w", err))
	}
	switch resp.StatusCode {
	case http.StatusCreated:
		return writeJSON(w, http.StatusCreated, map[string]any{"orderId": o.ID, "charged": o.Total})
	case http.StatusPaymentRequired:
		return fail(r.Context(), &PaymentDeclinedError{OrderID: o.ID, Reason: declineReason})
	}
	return fail(r.Context(), fmt.Errorf("payments answered %d: %s", resp.StatusCode, answer))
}

// search runs the slow statement.
func (s *shop) search(w http.ResponseWriter, r *http.Request) error {
	found, err := searchOrders(r, s.pool, "%"+r.URL.Query().Get("q")+"%")
	if err != nil {
		return fail(r.Context(), err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"orders": found})
}

func searchOrders(r *http.Request, pool *pgxpool.Pool, pattern string) (int, error) {
	rows, err := pool.Query(r.Context(), sqlSearchOrders, pattern)
	if err != nil {
		return 0, fmt.Errorf("search orders: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

func (s *shop) report(w http.ResponseWriter, r *http.Request) error {
	day, err := strconv.Atoi(r.PathValue("day"))
	if err != nil || day < 0 {
		return fail(r.Context(), fmt.Errorf("report day %q: not a day number", r.PathValue("day")))
	}
	var count int64
	var sum float64
	if err := s.pool.QueryRow(r.Context(), sqlOrderRange, day*100+1, day*100+100).Scan(&count, &sum); err != nil {
		return fail(r.Context(), fmt.Errorf("report day %d: %w", day, err))
	}
	target := dailyTargets[day] // the bug: days past the table panic
	return writeJSON(w, http.StatusOK, map[string]any{"day": day, "orders": count, "revenue": sum, "target": target})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

func traceIDOf(r *http.Request) string {
	return trace.SpanContextFromContext(r.Context()).TraceID().String()
}
