// Package realapp is a small shop built the way applications are instrumented in the wild, for
// runlens's end-to-end tests: two HTTP services (net/http with otelhttp on the server and on
// the client between them, middleware layers with spans of their own), PostgreSQL through pgx
// with otelpgx, logs through the otelslog bridge, and a background job — all exported by the
// OpenTelemetry SDK's OTLP/HTTP exporters. It counts what it does as it runs (requests,
// failures by kind, statements and their durations, job runs, spans and log records per
// service), so a test can hold runlens's answers to the workload's own record rather than to
// anything runlens computed.
//
// The throwaway PostgreSQL cluster it runs against is started by package dbservers.
package realapp
