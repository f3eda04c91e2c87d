package goapp

import (
	"encoding/json"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// orderForm is what a shopper posts to the frontend.
type orderForm struct {
	OrderID int64  `json:"orderId"`
	User    string `json:"user"`
	SKU     string `json:"sku"`
	Qty     int    `json:"qty"`
	Zip     string `json:"zip"`
	Audit   bool   `json:"audit"`
	Verify  bool   `json:"verify"`
}

// frontend serves POST /checkout: it rejects a malformed order itself (400) and hands the rest
// to checkout over gRPC, answering 500 when checkout failed.
type frontend struct {
	p        *process
	checkout checkoutClient
	cc       *grpc.ClientConn
}

func newFrontend(p *process, checkoutAddr string) (*frontend, error) {
	cc, err := grpc.NewClient(checkoutAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(jsonCodec{})),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(p.tp),
			otelgrpc.WithMeterProvider(noop.NewMeterProvider()), otelgrpc.WithPropagators(propagator))))
	if err != nil {
		return nil, err
	}
	return &frontend{p: p, checkout: checkoutClient{cc}, cc: cc}, nil
}

func (f *frontend) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /checkout", f.placeOrder)
	return otelhttp.NewHandler(mux, f.p.name,
		otelhttp.WithTracerProvider(f.p.tp), otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithPropagators(propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
}

func (f *frontend) placeOrder(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("X-Trace-Id", trace.SpanContextFromContext(ctx).TraceID().String())
	var form orderForm
	if err := json.NewDecoder(r.Body).Decode(&form); err != nil || form.Qty < 1 || form.SKU == "" {
		f.p.log.WarnContext(ctx, "order rejected: quantity must be at least 1", "sku", form.SKU, "qty", form.Qty)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "quantity must be at least 1"})
		return
	}
	reply, err := f.checkout.PlaceOrder(ctx, &PlaceOrderRequest{OrderID: form.OrderID, User: form.User, SKU: form.SKU,
		Qty: form.Qty, Zip: form.Zip, Audit: form.Audit, Verify: form.Verify})
	if err != nil {
		code := http.StatusInternalServerError
		if status.Code(err) == codes.InvalidArgument {
			code = http.StatusBadRequest
		}
		f.p.log.ErrorContext(ctx, "checkout failed", "order", form.OrderID, "err", err.Error())
		writeJSON(w, code, map[string]string{"error": "checkout failed"})
		return
	}
	f.p.log.InfoContext(ctx, "order placed", "order", form.OrderID, "confirmation", reply.Confirmation)
	writeJSON(w, http.StatusOK, reply)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
