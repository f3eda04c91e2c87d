package otlp

import (
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// Metrics are read, counted and dropped: runlens's tools answer from traces and logs only.
// Refusing them outright would make an exporter configured with one endpoint for every signal
// log errors forever, and answering a bare success would hide that they go nowhere. So the
// answer is a partial success rejecting every data point, whose message says why, and the
// receiver counts them, so the doctor can tell an app that sends only metrics from a silent one.

// metricsDropped is the partial-success message of a metrics export.
const metricsDropped = " metric data points dropped: runlens keeps traces and logs only; send traces and logs (OTEL_TRACES_EXPORTER=otlp, OTEL_LOGS_EXPORTER=otlp), and set OTEL_METRICS_EXPORTER=none to stop sending metrics"

// Stats counts what the receivers of one process received and did not keep. One Stats may be
// shared by the HTTP and gRPC receivers; it is safe for concurrent use.
type Stats struct {
	metricPoints atomic.Int64
}

// MetricPointsDropped is the number of metric data points received and dropped since the
// process started.
func (s *Stats) MetricPointsDropped() int64 {
	if s == nil {
		return 0
	}
	return s.metricPoints.Load()
}

// dropMetrics counts the data points of md and returns the export response saying they were
// dropped.
func (s *Stats) dropMetrics(md pmetric.Metrics) pmetricotlp.ExportResponse {
	points := md.DataPointCount()
	s.metricPoints.Add(int64(points))
	resp := pmetricotlp.NewExportResponse()
	if points > 0 {
		resp.PartialSuccess().SetRejectedDataPoints(int64(points))
		resp.PartialSuccess().SetErrorMessage(strconv.Itoa(points) + metricsDropped)
	}
	return resp
}

func decodeMetrics(enc encoding, body []byte) (pmetric.Metrics, error) {
	var (
		md  pmetric.Metrics
		err error
	)
	if enc == encodingJSON {
		if err := checkJSONDepth(body); err != nil {
			return pmetric.Metrics{}, err
		}
		md, err = (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(body)
	} else {
		md, err = (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(body)
	}
	if err != nil {
		return pmetric.Metrics{}, decodeError(enc, err)
	}
	return md, nil
}
