// Package store is runlens's embedded telemetry store: one SQLite file, written by the OTLP
// receiver through a single writer connection and read by any number of reader connections and
// processes (WAL mode). Its tables mirror the OpenTelemetry Collector ClickHouse exporter's
// otel_traces and otel_logs so that queries written for one source read alike for the other.
//
// The store is a backend of the telemetry engine (Backend; engine.New over it): it scans rows with the
// engine's filters pushed down into SQL, and answers the engine's aggregate questions itself
// (capabilities.go) from columns derived at ingest with the engine's own functions, their
// indexes and activity rollups (schema.go), so that the tools aggregate over indexes instead of
// reading every row of a window — with the same answers the engine computes from the scans.
package store
