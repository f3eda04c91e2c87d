'use strict';
// An inventory API: Koa 3, @koa/router, mysql2 on MariaDB, ioredis as a cache, pino.
// Instrumented only by telemetry.js.
const Koa = require('koa');
const Router = require('@koa/router');
const mysql = require('mysql2/promise');
const Redis = require('ioredis');
const pino = require('pino');
const { trace } = require('@opentelemetry/api');

const logger = pino({ level: 'info' });
const db = mysql.createPool({ uri: process.env.MYSQL_URL, connectionLimit: 5 });
// Cache reads must be quick: a command that takes longer than this is abandoned and retried.
const redis = new Redis(process.env.REDIS_URL, { commandTimeout: 120, maxRetriesPerRequest: 1 });

// The stock counter is recomputed server-side by a script; under load (simulated by its
// argument) it is slow.
const STOCK_SCRIPT = `
local start = redis.call('TIME')
local t0 = start[1] * 1000000 + start[2]
local wait = tonumber(ARGV[1]) * 1000
while true do
  local now = redis.call('TIME')
  if now[1] * 1000000 + now[2] - t0 >= wait then break end
end
return redis.call('GET', KEYS[1])
`;

const app = new Koa();
const router = new Router();

// Errors: anything thrown below becomes a JSON answer; server errors are logged.
app.use(async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    ctx.status = err.status || 500;
    ctx.body = { error: err.expose ? err.message : 'internal error' };
    if (ctx.status >= 500) {
      logger.error({ err, method: ctx.method, path: ctx.path }, 'request failed');
    } else {
      logger.warn({ method: ctx.method, path: ctx.path, reason: err.message }, 'request rejected');
    }
  }
});

// Every answer names its trace, so a caller can report it.
app.use(async (ctx, next) => {
  const span = trace.getActiveSpan();
  if (span) ctx.set('x-trace-id', span.spanContext().traceId);
  await next();
});

async function readJSON(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  if (chunks.length === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    ctx.throw(400, 'body is not JSON');
  }
}

router.get('/healthz', (ctx) => {
  ctx.body = { ok: true };
});

router.get('/items/:sku', async (ctx) => {
  const cached = await redis.get(`item:${ctx.params.sku}`);
  if (cached) {
    ctx.body = JSON.parse(cached);
    return;
  }
  const [rows] = await db.execute('SELECT sku, name, quantity FROM items WHERE sku = ?', [ctx.params.sku]);
  if (rows.length === 0) {
    ctx.status = 404;
    ctx.body = { error: 'no such item' };
    return;
  }
  await redis.set(`item:${ctx.params.sku}`, JSON.stringify(rows[0]), 'EX', 60);
  ctx.body = rows[0];
});

async function stockOf(sku, loadMs) {
  const key = `stock:${sku}`;
  try {
    return await redis.eval(STOCK_SCRIPT, 1, key, loadMs);
  } catch (err) {
    if (err.message !== 'Command timed out') throw err;
    logger.warn({ sku }, 'stock read timed out, retrying');
    return await redis.get(key);
  }
}

router.get('/items/:sku/stock', async (ctx) => {
  const loadMs = Number(ctx.query.load || 0);
  let stock = await stockOf(ctx.params.sku, loadMs);
  if (stock === null) {
    const [rows] = await db.execute('SELECT quantity FROM items WHERE sku = ?', [ctx.params.sku]);
    stock = rows.length ? String(rows[0].quantity) : '0';
    await redis.set(`stock:${ctx.params.sku}`, stock, 'EX', 60);
  }
  ctx.body = { sku: ctx.params.sku, stock: Number(stock) };
});

router.post('/items', async (ctx) => {
  const body = await readJSON(ctx);
  if (typeof body.sku !== 'string' || body.sku === '' || typeof body.name !== 'string') {
    ctx.throw(400, 'sku and name are required');
  }
  await db.execute('INSERT INTO items (sku, name, quantity) VALUES (?, ?, ?)', [body.sku, body.name, body.quantity || 0]);
  ctx.status = 201;
  ctx.body = { sku: body.sku };
});

function renderReport(kind, rows) {
  if (kind !== 'summary') {
    throw new Error('report renderer crashed: unknown layout');
  }
  return { items: rows.length };
}

router.get('/reports/:kind', async (ctx) => {
  const [rows] = await db.query('SELECT sku FROM items ORDER BY sku');
  ctx.body = renderReport(ctx.params.kind, rows);
});

// The valuation is slow: the database sleeps before it sums (long enough that a busy
// machine's slower ordinary queries never add up to more).
router.get('/valuation', async (ctx) => {
  const [rows] = await db.query('SELECT SLEEP(0.5) AS slept, SUM(quantity) AS units FROM items');
  ctx.body = { units: Number(rows[0].units) };
});

app.use(router.routes());
app.use(router.allowedMethods());

const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => {
  logger.info({ port: server.address().port }, 'listening');
});
