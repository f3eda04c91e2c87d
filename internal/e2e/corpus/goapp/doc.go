// Package goapp is a public-demo-style shop of four Go services for runlens's end-to-end
// tests, each instrumented the way such services are in the wild and each with its own
// TracerProvider (and LoggerProvider where it logs) under its own service.name:
//
//   - frontend: net/http with otelhttp; validates the order and calls checkout over gRPC.
//   - checkout: a gRPC service (a hand-written grpc.ServiceDesc with a JSON codec, otelgrpc
//     stats handlers on both ends) that reads the cart from Redis through go-redis with
//     redisotel, retrying the reads that time out, then calls legacy and inventory over HTTP.
//   - inventory: net/http with otelhttp, database/sql through otelsql wrapping
//     go-sql-driver/mysql on MariaDB, its database access serialized by one mutex.
//   - legacy: an address validator instrumented through the OpenTracing bridge: its database
//     calls are OpenTracing spans named "SQL SELECT" carrying sql.query and peer.service and no
//     db.* attribute, and it logs through span events (LogKV).
//
// Half of the services export over OTLP/HTTP and half over OTLP/gRPC. The workload counts what
// it does as it runs (requests and their statuses, the cause of each failure and the service
// it started in, the cache timeouts that were retried, each statement and how long it took), so
// a test can hold runlens's answers to the app's own record.
package goapp
