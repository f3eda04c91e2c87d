package goapp

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"
)

// The checkout service is defined without protoc: a hand-written service description whose
// messages are plain structs carried by a JSON codec, forced on both ends.

// PlaceOrderRequest is what frontend asks checkout for.
type PlaceOrderRequest struct {
	OrderID int64  `json:"orderId"`
	User    string `json:"user"`
	SKU     string `json:"sku"`
	Qty     int    `json:"qty"`
	Zip     string `json:"zip"`
	// Audit asks inventory for a stock audit before it reserves; Verify asks legacy to verify
	// the address with the carrier, not only look the zip up.
	Audit  bool `json:"audit"`
	Verify bool `json:"verify"`
}

// PlaceOrderReply is checkout's answer.
type PlaceOrderReply struct {
	Confirmation string `json:"confirmation"`
	Zone         string `json:"zone"`
}

const checkoutServiceName = "shop.checkout.v1.CheckoutService"

// checkoutServer is the service's handler interface.
type checkoutServer interface {
	PlaceOrder(context.Context, *PlaceOrderRequest) (*PlaceOrderReply, error)
}

var checkoutServiceDesc = grpc.ServiceDesc{
	ServiceName: checkoutServiceName,
	HandlerType: (*checkoutServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "PlaceOrder",
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(PlaceOrderRequest)
			if err := dec(in); err != nil {
				return nil, err
			}
			call := func(ctx context.Context, req any) (any, error) {
				return srv.(checkoutServer).PlaceOrder(ctx, req.(*PlaceOrderRequest))
			}
			if interceptor == nil {
				return call(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + checkoutServiceName + "/PlaceOrder"}, call)
		},
	}},
	Metadata: "checkout.proto",
}

// checkoutClient calls the service.
type checkoutClient struct{ cc *grpc.ClientConn }

func (c checkoutClient) PlaceOrder(ctx context.Context, in *PlaceOrderRequest) (*PlaceOrderReply, error) {
	out := new(PlaceOrderReply)
	if err := c.cc.Invoke(ctx, "/"+checkoutServiceName+"/PlaceOrder", in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonCodec carries the messages as JSON.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return "json" }
