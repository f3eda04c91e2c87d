package realapp

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// The shop's tables. customers.name has no index and orders.customer_id none either, so the
// search by a name pattern scans both tables and hash-joins them: the one deliberately slow
// statement. Orders are read by primary key everywhere else, which is fast.
const (
	seedCustomers = 20000
	seedOrders    = 100000
	// dbName is the database the services use.
	dbName = "shop"
)

var schemaSQL = []string{
	`CREATE TABLE customers (
		id    bigint PRIMARY KEY,
		name  text   NOT NULL,
		email text   NOT NULL
	)`,
	`CREATE TABLE orders (
		id          bigint        PRIMARY KEY,
		customer_id bigint        NOT NULL,
		total       numeric(10,2) NOT NULL,
		status      text          NOT NULL,
		created_at  timestamptz   NOT NULL
	)`,
	`CREATE TABLE payments (
		id         bigserial     PRIMARY KEY,
		order_id   bigint        NOT NULL,
		amount     numeric(10,2) NOT NULL,
		status     text          NOT NULL,
		created_at timestamptz   NOT NULL DEFAULT now()
	)`,
	fmt.Sprintf(`INSERT INTO customers (id, name, email)
		SELECT g, 'customer ' || md5(g::text), 'c' || g || '@example.test' FROM generate_series(1, %d) g`, seedCustomers),
	fmt.Sprintf(`INSERT INTO orders (id, customer_id, total, status, created_at)
		SELECT g, 1 + (g * 7919) %% %d, (g %% 500) + 0.99,
		       CASE WHEN g %% 10 = 0 THEN 'cancelled' ELSE 'placed' END,
		       now() - (g %% 90) * interval '1 day'
		  FROM generate_series(1, %d) g`, seedCustomers, seedOrders),
	`ANALYZE`,
}

// The statements the services run, exactly as they send them. They are written over several
// lines with literals in them, as application code is: runlens must collapse the whitespace
// and replace the literals when it groups them.
const (
	// sqlOrderByID is the fast primary-key read on orders.
	sqlOrderByID = `SELECT id, customer_id, total, status
  FROM orders
 WHERE id = $1`
	// sqlSearchOrders is the slow one: a name pattern over an unindexed join of orders and
	// customers. The search endpoint and the payment service's fraud review both run it.
	sqlSearchOrders = `SELECT o.id, o.total, c.name
  FROM orders o
  JOIN customers c ON c.id = o.customer_id
 WHERE c.name ILIKE $1
   AND o.status <> 'cancelled'
 ORDER BY o.id
 LIMIT 20`
	// sqlInsertPayment records a captured payment.
	sqlInsertPayment = `INSERT INTO payments (order_id, amount, status) VALUES ($1, $2, 'captured')`
	// sqlOrderRange is the daily report's read: a primary-key range.
	sqlOrderRange = `SELECT count(*), coalesce(sum(total), 0) FROM orders WHERE id BETWEEN $1 AND $2`
	// sqlCountByStatus is the nightly export's read.
	sqlCountByStatus = `SELECT count(*) FROM orders WHERE status = $1 AND id <= 2000`
)

// Seed creates the shop database in the cluster at adminURL and fills it; it returns the URL
// of the shop database. It runs outside any trace, so it leaves no telemetry.
func Seed(ctx context.Context, adminURL string) (string, error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to the cluster: %w", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbName); err != nil {
		return "", fmt.Errorf("create database %s: %w", dbName, err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + dbName
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", dbName, err)
	}
	defer conn.Close(ctx)
	for _, stmt := range schemaSQL {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("seed: %w", err)
		}
	}
	return u.String(), nil
}
