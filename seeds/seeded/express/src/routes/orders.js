'use strict';

const express = require('express');
const { HttpError, asyncHandler } = require('../middleware/errors');
const { requireRole } = require('../middleware/auth');

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SKU_PATTERN = /^[A-Z0-9-]{3,32}$/;
const STATUSES = ['pending', 'paid', 'shipped', 'cancelled'];
const CURRENCIES = ['USD', 'EUR', 'GBP'];
const DEFAULT_PAGE_SIZE = 25;
const MAX_ITEMS_PER_ORDER = 50;
const MAX_QUANTITY = 100;
/** Allowed previous statuses for each target status. */
const TRANSITIONS = { paid: ['pending'], shipped: ['paid'], cancelled: ['pending', 'paid'] };

function parseItems(raw) {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_ITEMS_PER_ORDER) {
    throw new HttpError(400, `items must be an array of 1 to ${MAX_ITEMS_PER_ORDER} entries`);
  }
  const items = raw.map((item) => {
    const sku = typeof item?.sku === 'string' ? item.sku : '';
    const quantity = item?.quantity;
    if (!SKU_PATTERN.test(sku) || !Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) {
      throw new HttpError(400, 'each item needs a valid sku and a quantity between 1 and 100');
    }
    return { sku, quantity };
  });
  if (new Set(items.map((item) => item.sku)).size !== items.length) {
    throw new HttpError(400, 'duplicate sku in items');
  }
  // Lock product rows in a stable order so concurrent orders cannot deadlock.
  return items.sort((a, b) => (a.sku < b.sku ? -1 : 1));
}

function parseOrderId(value) {
  if (!UUID_PATTERN.test(value)) {
    throw new HttpError(404, 'order not found');
  }
  return value;
}

module.exports = function ordersRouter({ pg }) {
  const router = express.Router();

  // GET /api/orders?status=paid&sort=total&dir=asc&page=2&pageSize=50
  router.get(
    '/',
    asyncHandler(async (req, res) => {
      const page = Math.max(1, Number.parseInt(req.query.page, 10) || 1);
      // SEED 5 [MAJOR] (core/unvalidated-input) pageSize has no upper bound, so ?pageSize=1000000 makes one request load a customer's entire history and its items
      const pageSize = Number.parseInt(req.query.pageSize, 10) || DEFAULT_PAGE_SIZE;
      const direction = req.query.dir === 'asc' ? 'ASC' : 'DESC';
      // SEED 6 [BLOCKER] (core/sql-injection) the sort query parameter is concatenated into ORDER BY, so ?sort=(CASE WHEN ... END) runs attacker-chosen SQL; map it through a whitelist of columns
      const orderBy = `o.${req.query.sort || 'created_at'} ${direction}`;

      const params = [req.user.id];
      let where = 'o.customer_id = $1';
      if (req.query.status !== undefined) {
        if (!STATUSES.includes(req.query.status)) {
          throw new HttpError(400, 'unknown status');
        }
        params.push(req.query.status);
        where += ` AND o.status = $${params.length}`;
      }
      // SEED 7 [MAJOR] (core/off-by-one) page is 1-based but the offset is page * pageSize, so page 1 skips the first pageSize orders and the newest orders are never listed
      params.push(pageSize, page * pageSize);

      const { rows: orders } = await pg.query(
        `SELECT o.id, o.status, o.currency, o.total_cents, o.created_at
           FROM orders o
          WHERE ${where}
          ORDER BY ${orderBy}, o.id
          LIMIT $${params.length - 1} OFFSET $${params.length}`,
        params,
      );
      for (const order of orders) {
        // SEED 8 [MAJOR] (core/n-plus-one) one order_items query per order on the page; fetch all items with a single WHERE order_id = ANY($1) query
        const { rows: items } = await pg.query(
          'SELECT sku, quantity, unit_price_cents FROM order_items WHERE order_id = $1 ORDER BY sku',
          [order.id],
        );
        order.items = items;
      }
      res.json({ page, pageSize, orders });
    }),
  );

  router.get(
    '/:id',
    asyncHandler(async (req, res) => {
      const id = parseOrderId(req.params.id);
      // SEED 9 [BLOCKER] (core/idor) order looked up by id alone: any signed-in customer can read anyone's order, address and items by changing the id; filter by customer_id = req.user.id
      const { rows } = await pg.query('SELECT * FROM orders WHERE id = $1', [id]);
      if (rows.length === 0) {
        throw new HttpError(404, 'order not found');
      }
      const { rows: items } = await pg.query(
        'SELECT sku, quantity, unit_price_cents FROM order_items WHERE order_id = $1 ORDER BY sku',
        [id],
      );
      res.json({ ...rows[0], items });
    }),
  );

  router.post(
    '/',
    asyncHandler(async (req, res) => {
      const items = parseItems(req.body.items);
      const currency = CURRENCIES.includes(req.body.currency) ? req.body.currency : null;
      if (!currency) {
        throw new HttpError(400, `currency must be one of ${CURRENCIES.join(', ')}`);
      }

      // SEED 10 [CRITICAL] (core/missing-transaction) order row, stock decrements and order_items are separate autocommit statements on the pool: a 409 or crash midway leaves a pending order with partial items and stock already taken
      const {
        rows: [order],
      } = await pg.query(
        `INSERT INTO orders (tenant_id, customer_id, status, currency, total_cents)
         VALUES ($1, $2, 'pending', $3, 0) RETURNING id, created_at`,
        [req.user.tenantId, req.user.id, currency],
      );
      let totalCents = 0;
      for (const item of items) {
        const { rows } = await pg.query(
          'UPDATE products SET stock = stock - $1 WHERE sku = $2 AND currency = $3 AND stock >= $1 RETURNING price_cents',
          [item.quantity, item.sku, currency],
        );
        if (rows.length === 0) {
          throw new HttpError(409, `insufficient stock for ${item.sku}`);
        }
        await pg.query(
          'INSERT INTO order_items (order_id, sku, quantity, unit_price_cents) VALUES ($1, $2, $3, $4)',
          [order.id, item.sku, item.quantity, rows[0].price_cents],
        );
        totalCents += rows[0].price_cents * item.quantity;
      }
      await pg.query('UPDATE orders SET total_cents = $1 WHERE id = $2', [totalCents, order.id]);

      res.status(201).location(`/api/orders/${order.id}`).json({ id: order.id, status: 'pending', totalCents });
    }),
  );

  router.patch(
    '/:id/status',
    requireRole('fulfilment', 'support'),
    asyncHandler(async (req, res) => {
      // SEED 11 [MINOR] (core/deprecated-api) req.param() is deprecated in Express 4 (removed in 5) and also reads body/query; use req.params.id
      const id = parseOrderId(req.param('id'));
      const status = req.body.status;
      if (typeof status !== 'string' || !Object.hasOwn(TRANSITIONS, status)) {
        throw new HttpError(400, 'unsupported status transition');
      }
      // SEED 17 [MAJOR] (core/logic-error) {lines: 6} moving an order to 'cancelled' only updates orders.status: the stock that POST / took off products for its order_items is never given back, so every cancelled order permanently lowers the sellable stock
      const { rows } = await pg.query(
        `UPDATE orders SET status = $1, updated_at = now()
          WHERE id = $2 AND tenant_id = $3 AND status = ANY($4)
          RETURNING id, status`,
        [status, id, req.user.tenantId, TRANSITIONS[status]],
      );
      if (rows.length === 0) {
        throw new HttpError(409, `order cannot move to ${status}`);
      }
      res.json(rows[0]);
    }),
  );

  return router;
};
