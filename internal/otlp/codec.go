package otlp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// maxDecodeMessage bounds the decoder's text echoed to the client.
const maxDecodeMessage = 200

// Unknown fields are accepted and ignored by both decoders: protobuf skips unknown field
// numbers by the wire rules, and pdata's JSON reader skips unknown keys (OTLP/JSON requires
// receivers to ignore them), so a newer exporter's additions never cost a batch.

func decodeTraces(enc encoding, body []byte) (ptrace.Traces, error) {
	var (
		td  ptrace.Traces
		err error
	)
	if enc == encodingJSON {
		if err := checkJSONDepth(body); err != nil {
			return ptrace.Traces{}, err
		}
		td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
	} else {
		td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
	}
	if err != nil {
		return ptrace.Traces{}, decodeError(enc, err)
	}
	return td, nil
}

func decodeLogs(enc encoding, body []byte) (plog.Logs, error) {
	var (
		ld  plog.Logs
		err error
	)
	if enc == encodingJSON {
		if err := checkJSONDepth(body); err != nil {
			return plog.Logs{}, err
		}
		ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(body)
	} else {
		ld, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
	}
	if err != nil {
		return plog.Logs{}, decodeError(enc, err)
	}
	return ld, nil
}

func decodeError(enc encoding, err error) error {
	msg := err.Error()
	if len(msg) > maxDecodeMessage {
		msg = msg[:maxDecodeMessage] + "…"
	}
	if enc == encodingJSON {
		return fmt.Errorf("undecodable OTLP/JSON (ids must be hex): %s", msg)
	}
	return fmt.Errorf("undecodable OTLP protobuf: %s", msg)
}

// tracesResponse is ExportTraceServiceResponse, with partialSuccess when spans were rejected.
func tracesResponse(rejected int) ptraceotlp.ExportResponse {
	resp := ptraceotlp.NewExportResponse()
	if rejected > 0 {
		resp.PartialSuccess().SetRejectedSpans(int64(rejected))
		resp.PartialSuccess().SetErrorMessage(strconv.Itoa(rejected) + " spans rejected: empty trace or span id")
	}
	return resp
}

// logsResponse is ExportLogsServiceResponse, with partialSuccess when records were rejected.
func logsResponse(rejected int) plogotlp.ExportResponse {
	resp := plogotlp.NewExportResponse()
	if rejected > 0 {
		resp.PartialSuccess().SetRejectedLogRecords(int64(rejected))
		resp.PartialSuccess().SetErrorMessage(strconv.Itoa(rejected) + " log records rejected")
	}
	return resp
}

// exportResponse is what the three OTLP export responses share.
type exportResponse interface {
	MarshalJSON() ([]byte, error)
	MarshalProto() ([]byte, error)
}

// marshalResponse encodes an export response in the request's encoding.
func marshalResponse(enc encoding, resp exportResponse) ([]byte, error) {
	if enc == encodingJSON {
		return resp.MarshalJSON()
	}
	return resp.MarshalProto()
}

func writeResponse(w http.ResponseWriter, enc encoding, body []byte) {
	w.Header().Set("Content-Type", enc.contentType())
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeStatus answers with a google.rpc.Status {code, message}, as OTLP/HTTP prescribes for
// failures, in the request's encoding.
func writeStatus(w http.ResponseWriter, enc encoding, httpStatus int, msg string) {
	code := grpcCode(httpStatus)
	var body []byte
	if enc == encodingJSON {
		body, _ = json.Marshal(rpcStatus{Code: code, Message: msg}) // cannot fail: int and string
	} else {
		body = statusProto(code, msg)
	}
	w.Header().Set("Content-Type", enc.contentType())
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(httpStatus)
	_, _ = w.Write(body)
}

// rpcStatus is google.rpc.Status in OTLP/JSON (details omitted).
type rpcStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writePlain answers before the request's encoding is known.
func writePlain(w http.ResponseWriter, httpStatus int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(httpStatus)
	_, _ = w.Write([]byte(msg + "\n"))
}

// grpcCode maps the receiver's HTTP statuses to google.rpc.Code values.
func grpcCode(httpStatus int) int {
	switch httpStatus {
	case http.StatusBadRequest:
		return 3 // INVALID_ARGUMENT
	case http.StatusRequestTimeout:
		return 4 // DEADLINE_EXCEEDED
	case http.StatusRequestEntityTooLarge:
		return 8 // RESOURCE_EXHAUSTED
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return 14 // UNAVAILABLE
	default:
		return 13 // INTERNAL
	}
}

// statusProto encodes google.rpc.Status{code: 1, message: 2} by hand: two fields do not
// justify a dependency on the generated type.
func statusProto(code int, msg string) []byte {
	b := make([]byte, 0, len(msg)+16)
	b = append(b, 0x08) // field 1, varint
	b = appendVarint(b, uint64(code))
	b = append(b, 0x12) // field 2, length-delimited
	b = appendVarint(b, uint64(len(msg)))
	return append(b, msg...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
