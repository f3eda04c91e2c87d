'use strict';
// Creates and fills the inventory tables. Run once before the app, without telemetry.
const mysql = require('mysql2/promise');

async function main() {
  const conn = await mysql.createConnection(process.env.MYSQL_URL);
  await conn.query('DROP TABLE IF EXISTS items');
  await conn.query(`CREATE TABLE items (
    sku VARCHAR(32) PRIMARY KEY,
    name VARCHAR(100) NOT NULL,
    quantity INT NOT NULL
  )`);
  for (let i = 1; i <= 20; i++) {
    const sku = `SKU-${String(i).padStart(3, '0')}`;
    await conn.execute('INSERT INTO items (sku, name, quantity) VALUES (?, ?, ?)', [sku, `item ${i}`, i * 10]);
  }
  await conn.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
