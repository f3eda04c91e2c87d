package aspire

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
)

// envelope is the dashboard's answer around the OTLP data.
type envelope struct {
	Data          json.RawMessage `json:"data"`
	TotalCount    *int            `json:"totalCount"`
	ReturnedCount *int            `json:"returnedCount"`
}

// open decodes the envelope; a missing part is an error, not an empty answer.
func open(body []byte) (envelope, error) {
	var e envelope
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&e); err != nil {
		return e, errors.New("the answer is not complete JSON")
	}
	if len(e.Data) == 0 || bytes.Equal(e.Data, []byte("null")) || e.TotalCount == nil || e.ReturnedCount == nil {
		return e, errors.New("the answer lacks data, totalCount or returnedCount")
	}
	if *e.ReturnedCount < 0 || *e.TotalCount < 0 {
		return e, errors.New("the answer has negative counts")
	}
	return e, nil
}

// decodeSpans reads a spans answer with pdata (the one OTLP JSON reader that takes hex ids).
func decodeSpans(body []byte) (ptrace.Traces, int, int, error) {
	e, err := open(body)
	if err != nil {
		return ptrace.Traces{}, 0, 0, err
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(e.Data)
	if err != nil {
		return ptrace.Traces{}, 0, 0, fmt.Errorf("the spans do not decode: %s", short(err))
	}
	return td, *e.TotalCount, *e.ReturnedCount, nil
}

// decodeLogs reads a logs answer.
func decodeLogs(body []byte) (plog.Logs, int, int, error) {
	e, err := open(body)
	if err != nil {
		return plog.Logs{}, 0, 0, err
	}
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(e.Data)
	if err != nil {
		return plog.Logs{}, 0, 0, fmt.Errorf("the logs do not decode: %s", short(err))
	}
	return ld, *e.TotalCount, *e.ReturnedCount, nil
}

// short keeps the decoder's reason and drops the stretch of the answer it quotes (telemetry
// text that has no place in an error message).
func short(err error) string {
	s := err.Error()
	for _, cut := range []string{", error found in", ": bigger context"} {
		if i := bytes.Index([]byte(s), []byte(cut)); i >= 0 {
			s = s[:i]
		}
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

func oldestSpan(td ptrace.Traces) int64 {
	var oldest int64
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if t := int64(spans.At(k).StartTimestamp()); oldest == 0 || t < oldest {
					oldest = t
				}
			}
		}
	}
	return oldest
}

func oldestLog(ld plog.Logs) int64 {
	var oldest int64
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			recs := sls.At(j).LogRecords()
			for k := 0; k < recs.Len(); k++ {
				t := int64(cmp.Or(recs.At(k).Timestamp(), recs.At(k).ObservedTimestamp()))
				if oldest == 0 || t < oldest {
					oldest = t
				}
			}
		}
	}
	return oldest
}

// digest identifies a snapshot's content independently of the order the dashboard sent it in.
func digest(ctx context.Context, s *snapshot) string {
	spans, _ := s.rows.ScanSpans(ctx, telemetry.SpanScan{Oldest: true})
	logs, _ := s.rows.ScanLogs(ctx, telemetry.LogScan{Oldest: true})
	keys := make([]string, 0, len(spans.Spans)+len(logs.Logs))
	for _, r := range spans.Spans {
		keys = append(keys, fmt.Sprint("s", r.TraceID, r.SpanID, r.StartNs, r.DurationNs, r.StatusCode))
	}
	for _, r := range logs.Logs {
		keys = append(keys, fmt.Sprint("l", r.TimeNs, r.TraceID, r.SpanID, r.SeverityNumber, len(r.Body)))
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	cut := fmt.Sprint(s.spans.cut, s.logs != nil && s.logs.cut)
	h.Write([]byte(cut))
	return "aspire:" + strconv.FormatUint(h.Sum64(), 16)
}

func itoa(n int) string { return strconv.Itoa(n) }
