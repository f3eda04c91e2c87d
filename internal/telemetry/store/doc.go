// Package store is runlens's embedded telemetry store: one SQLite file, written by the OTLP
// receiver through a single writer connection and read by any number of reader connections and
// processes (WAL mode). Its tables mirror the OpenTelemetry Collector ClickHouse exporter's
// otel_traces and otel_logs so that queries written for one source read alike for the other,
// plus columns the conventions derive at ingest and activity rollups, so that the telemetry
// tools aggregate in SQL over indexes instead of decoding every row of a window (schema.go).
package store
