package realapp

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Cards the workload pays with: the processor approves the first and declines the second.
const (
	cardApproved = "tok_visa_approved"
	cardDeclined = "tok_visa_insufficient_funds"
	// declineReason is the processor's word for the decline.
	declineReason = "insufficient funds"
)

// payments is the second service, called by the shop over HTTP: otelhttp's server span, a
// logging middleware span, the charges.create handler span, and inside it a card.authorize
// span for the processor call. A decline is raised in card.authorize; the handler then runs a
// fraud review (the slow statement) before it answers 402, so the request's last span to end
// is that query, not the short span that raised the error.
type payments struct {
	p      *process
	pool   *pgxpool.Pool
	ledger *ledger
}

func newPayments(p *process, pool *pgxpool.Pool, l *ledger) http.Handler {
	s := &payments{p: p, pool: pool, ledger: l}
	rt := newRoutes()
	rt.handle("POST /charges", traced(p.tracer, "charges.create", s.charge))
	h := traced(p.tracer, "middleware.log", logged(p, rt.serve))
	return serveApp(p, rt, h, func(_ *http.Request, sv *served) { l.paymentServed(sv) })
}

func (s *payments) charge(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var in charge
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return fail(ctx, fmt.Errorf("decode charge: %w", err))
	}
	if err := s.authorize(r, in); err != nil {
		// Declined: review the customer's other orders before answering.
		if _, rerr := searchOrders(r, s.pool, fmt.Sprintf("%%%04x%%", in.OrderID%0x10000)); rerr != nil {
			return fail(ctx, rerr)
		}
		s.p.log.ErrorContext(ctx, "charge declined", "order", in.OrderID, "reason", declineReason)
		return err
	}
	if _, err := s.pool.Exec(ctx, sqlInsertPayment, in.OrderID, in.Amount); err != nil {
		return fail(ctx, fmt.Errorf("record payment: %w", err))
	}
	s.p.log.InfoContext(ctx, "payment captured", "order", in.OrderID)
	return writeJSON(w, http.StatusCreated, map[string]any{"orderId": in.OrderID, "status": "captured"})
}

// authorize is the card processor call, a span of its own; it raises the decline.
func (s *payments) authorize(r *http.Request, in charge) error {
	_, span := s.p.tracer.Start(r.Context(), "card.authorize", trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	if in.Card != cardDeclined {
		return nil
	}
	err := &PaymentDeclinedError{OrderID: in.OrderID, Reason: declineReason}
	span.RecordError(err, trace.WithStackTrace(true))
	span.SetStatus(codes.Error, err.Error())
	s.ledger.fail(KindPaymentDeclined, ServicePayments, traceIDOf(r), err.Error())
	return err
}
