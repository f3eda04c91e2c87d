'use strict';
// Creates and fills the shop's tables. Run once before the app, without telemetry.
const { Client } = require('pg');

async function main() {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query(`
    DROP TABLE IF EXISTS orders;
    DROP TABLE IF EXISTS products;
    CREATE TABLE products (
      id integer PRIMARY KEY,
      name text NOT NULL,
      price_cents integer NOT NULL,
      stock integer NOT NULL
    );
    CREATE TABLE orders (
      id serial PRIMARY KEY,
      product_id integer NOT NULL REFERENCES products(id),
      quantity integer NOT NULL,
      total_cents integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
  for (let id = 1; id <= 20; id++) {
    // Product 13 is nearly sold out: reserving more than one fails.
    const stock = id === 13 ? 1 : 1000;
    await client.query('INSERT INTO products (id, name, price_cents, stock) VALUES ($1, $2, $3, $4)',
      [id, `product ${id}`, 500 + id * 25, stock]);
  }
  await client.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
