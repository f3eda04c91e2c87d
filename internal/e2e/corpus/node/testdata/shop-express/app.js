'use strict';
// A small shop API: Express 5, node-postgres, pino. Instrumented only by telemetry.js.
const express = require('express');
const { Pool } = require('pg');
const pino = require('pino');
const { trace, SpanStatusCode } = require('@opentelemetry/api');

const logger = pino({ level: 'info' });
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 5 });
const tracer = trace.getTracer('shop-express');

class InventoryError extends Error {
  constructor(message) {
    super(message);
    this.name = 'InventoryError';
  }
}

const app = express();
app.use(express.json());

// Every answer names its trace, so a caller can report it.
app.use((req, res, next) => {
  const span = trace.getActiveSpan();
  if (span) res.set('x-trace-id', span.spanContext().traceId);
  next();
});

app.get('/healthz', (req, res) => {
  res.json({ ok: true });
});

app.get('/products', async (req, res) => {
  const { rows } = await pool.query('SELECT id, name, price_cents FROM products ORDER BY id LIMIT 10');
  res.json(rows);
});

app.get('/products/:id', async (req, res) => {
  const { rows } = await pool.query('SELECT id, name, price_cents, stock FROM products WHERE id = $1', [req.params.id]);
  if (rows.length === 0) {
    res.status(404).json({ error: 'no such product' });
    return;
  }
  res.json(rows[0]);
});

function chargeCard(card, amountCents) {
  if (card === '4000-0000-0000-0002') {
    throw new Error('payment declined');
  }
  return { authorized: amountCents };
}

app.post('/checkout', async (req, res) => {
  const { productId, quantity, card } = req.body || {};
  if (!Number.isInteger(productId) || !Number.isInteger(quantity) || quantity < 1 || !card) {
    res.status(400).json({ error: 'productId, quantity and card are required' });
    return;
  }
  const { rows } = await pool.query('SELECT price_cents FROM products WHERE id = $1', [productId]);
  if (rows.length === 0) {
    res.status(404).json({ error: 'no such product' });
    return;
  }
  const total = rows[0].price_cents * quantity;
  chargeCard(card, total);
  const order = await pool.query(
    'INSERT INTO orders (product_id, quantity, total_cents) VALUES ($1, $2, $3) RETURNING id',
    [productId, quantity, total]);
  res.status(201).json({ orderId: order.rows[0].id, total });
});

app.post('/inventory/reserve', async (req, res) => {
  const { productId, quantity } = req.body || {};
  const { rowCount } = await pool.query(
    'UPDATE products SET stock = stock - $1 WHERE id = $2 AND stock >= $1', [quantity, productId]);
  if (rowCount === 0) {
    throw new InventoryError('insufficient inventory to reserve');
  }
  res.json({ reserved: quantity });
});

// An old report that still reads a table a migration dropped.
app.get('/reports/legacy', async (req, res) => {
  const { rows } = await pool.query('SELECT count(*) AS n FROM missing_table');
  res.json(rows[0]);
});

// The sales report is slow: the database sleeps before it counts.
app.get('/reports/sales', async (req, res) => {
  const { rows } = await pool.query('SELECT pg_sleep(0.2) AS slept, count(*) AS orders FROM orders');
  res.json({ orders: Number(rows[0].orders) });
});

// Background jobs: POST starts one and answers at once; the job runs in a trace of its own.
const jobs = new Map();
let jobSeq = 0;

async function reindex(batch) {
  const { rows } = await pool.query('SELECT id, name FROM products ORDER BY id');
  if (batch === 'corrupt') {
    throw new Error('reindex failed: product row has no name');
  }
  return rows.length;
}

function runJob(name, id, work) {
  jobs.set(id, { status: 'running' });
  return tracer.startActiveSpan(`job ${name}`, {
    root: true,
    attributes: { 'job.id': id, 'job.name': name },
  }, async (span) => {
    try {
      const indexed = await work();
      span.setAttribute('job.status', 'succeeded');
      span.setAttribute('job.exit_code', 0);
      jobs.set(id, { status: 'succeeded', indexed });
      logger.info({ jobId: id }, 'job finished');
    } catch (err) {
      span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
      span.setAttribute('job.status', 'failed');
      span.setAttribute('job.exit_code', 1);
      jobs.set(id, { status: 'failed', error: err.message });
      logger.error({ err, jobId: id }, 'job failed');
    } finally {
      span.end();
    }
  });
}

app.post('/jobs/reindex', (req, res) => {
  const batch = (req.body && req.body.batch) || 'all';
  const id = `reindex-${++jobSeq}`;
  setImmediate(() => runJob('reindex', id, () => reindex(batch)));
  res.status(202).json({ jobId: id });
});

app.get('/jobs/:id', (req, res) => {
  const job = jobs.get(req.params.id);
  if (!job) {
    res.status(404).json({ error: 'no such job' });
    return;
  }
  res.json(job);
});

// The error handler: log what went wrong and answer 500.
app.use((err, req, res, next) => {
  logger.error({ err, method: req.method, path: req.path }, 'request failed');
  if (res.headersSent) {
    next(err);
    return;
  }
  res.status(500).json({ error: err.message });
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => {
  logger.info({ port: server.address().port }, 'listening');
});
