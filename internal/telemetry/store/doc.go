// Package store is runlens's embedded telemetry store: one SQLite file, written by the OTLP
// receiver through a single writer connection and read by any number of reader connections and
// processes (WAL mode). Its tables mirror the OpenTelemetry Collector ClickHouse exporter's
// otel_traces and otel_logs so that queries written for one source read alike for the other.
package store
