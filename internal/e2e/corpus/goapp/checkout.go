package goapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Cart reads: a short read timeout, so a read that has to wait for the cart writer times out,
// and up to cartAttempts tries.
const (
	cartReadTimeout = 15 * time.Millisecond
	cartAttempts    = 5
)

// checkout places an order: it reads the cart from the cache, has legacy validate the address
// and inventory reserve the stock.
type checkout struct {
	p            *process
	cache        *redis.Client
	http         *http.Client
	legacyURL    string
	inventoryURL string
	l            *ledger
}

func newCheckout(p *process, redisAddr, legacyURL, inventoryURL string, l *ledger) (*checkout, error) {
	cache := redis.NewClient(&redis.Options{
		Addr:         redisAddr,
		ReadTimeout:  cartReadTimeout,
		WriteTimeout: time.Second,
		DialTimeout:  time.Second,
		// The app retries itself, each try a command of its own.
		MaxRetries: -1,
		PoolSize:   32,
		// Redis 7.0 knows neither CLIENT SETINFO nor CLIENT MAINT_NOTIFICATIONS; asking would
		// add a failed handshake to requests that dial.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	// The pool redials each connection a timed-out read left broken, from a context of its
	// own: without the dial filter every redial would be a one-span trace.
	if err := redisotel.InstrumentTracing(cache, redisotel.WithTracerProvider(p.tp), redisotel.WithDialFilter(true)); err != nil {
		_ = cache.Close()
		return nil, fmt.Errorf("instrument the cache client: %w", err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: otelhttp.NewTransport(http.DefaultTransport.(*http.Transport).Clone(),
		otelhttp.WithTracerProvider(p.tp), otelhttp.WithMeterProvider(noop.NewMeterProvider()), otelhttp.WithPropagators(propagator))}
	return &checkout{p: p, cache: cache, http: client, legacyURL: legacyURL, inventoryURL: inventoryURL, l: l}, nil
}

func (c *checkout) server() *grpc.Server {
	s := grpc.NewServer(grpc.ForceServerCodec(jsonCodec{}),
		grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(c.p.tp),
			otelgrpc.WithMeterProvider(noop.NewMeterProvider()), otelgrpc.WithPropagators(propagator))))
	s.RegisterService(&checkoutServiceDesc, c)
	return s
}

func (c *checkout) close() error {
	c.http.CloseIdleConnections()
	return c.cache.Close()
}

func cartKey(order int64) string { return "cart:" + strconv.FormatInt(order, 10) }

// PlaceOrder implements checkoutServer.
func (c *checkout) PlaceOrder(ctx context.Context, in *PlaceOrderRequest) (*PlaceOrderReply, error) {
	if err := c.readCart(ctx, in.OrderID); err != nil {
		c.p.log.ErrorContext(ctx, "cart read failed", "order", in.OrderID, "err", err.Error())
		return nil, status.Errorf(codes.Unavailable, "cart read failed: %v", err)
	}
	var addr struct {
		Zone string `json:"zone"`
	}
	if code, err := c.post(ctx, c.legacyURL+"/validate", map[string]any{"zip": in.Zip, "verify": in.Verify}, &addr); err != nil || code != http.StatusOK {
		msg := fmt.Sprintf("address check failed: legacy answered %d", code)
		if err != nil {
			msg = "address check failed: " + err.Error()
		}
		c.p.log.ErrorContext(ctx, "place order failed", "order", in.OrderID, "err", msg)
		return nil, status.Error(codes.Internal, msg)
	}
	var res struct {
		Reservation int64 `json:"reservation"`
	}
	if code, err := c.post(ctx, c.inventoryURL+"/reserve", map[string]any{"order": in.OrderID, "sku": in.SKU, "qty": in.Qty, "audit": in.Audit}, &res); err != nil || code != http.StatusOK {
		msg := fmt.Sprintf("reserve failed: inventory answered %d", code)
		if err != nil {
			msg = "reserve failed: " + err.Error()
		}
		c.p.log.ErrorContext(ctx, "place order failed", "order", in.OrderID, "err", msg)
		return nil, status.Error(codes.Internal, msg)
	}
	return &PlaceOrderReply{Confirmation: fmt.Sprintf("R-%d", res.Reservation), Zone: addr.Zone}, nil
}

// readCart pops the order's cart, which the cart writer pushes when it gets to it. A read
// that times out is retried; after cartAttempts the order goes on without the cached cart.
func (c *checkout) readCart(ctx context.Context, order int64) error {
	for attempt := 1; attempt <= cartAttempts; attempt++ {
		start := time.Now()
		err := c.cache.Do(ctx, "blpop", cartKey(order), "2").Err()
		// All cart reads as one statement: whatever runlens makes of the keys, together they
		// must stay well below the slow statement.
		c.l.statement(ServiceCheckout, SystemRedis, "blpop", time.Since(start), err)
		var ne net.Error
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ne) && ne.Timeout():
			c.l.cacheTimeout(ctx, order)
			c.p.log.WarnContext(ctx, "cart read timed out, retrying", "order", order, "attempt", attempt, "err", err.Error())
		default:
			return err
		}
	}
	c.p.log.WarnContext(ctx, "cart cache unavailable, pricing from the catalog", "order", order)
	return nil
}

// post sends a JSON request and decodes a 200 answer into out.
func (c *checkout) post(ctx context.Context, url string, body, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
}
