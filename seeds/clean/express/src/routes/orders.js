'use strict';

const express = require('express');
const { HttpError, asyncHandler } = require('../middleware/errors');
const { requireRole } = require('../middleware/auth');

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SKU_PATTERN = /^[A-Z0-9-]{3,32}$/;
const STATUSES = ['pending', 'paid', 'shipped', 'cancelled'];
const CURRENCIES = ['USD', 'EUR', 'GBP'];
const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 100;
const MAX_ITEMS_PER_ORDER = 50;
const MAX_QUANTITY = 100;
/** Allowed previous statuses for each target status. */
// BORDERLINE 3 pending -> paid can be set by support/fulfilment staff with no payment reference; whether manual payment reconciliation by staff is allowed is a business rule outside this diff (the route is role-gated and tenant-scoped)
const TRANSITIONS = { paid: ['pending'], shipped: ['paid'], cancelled: ['pending', 'paid'] };
const SORT_COLUMNS = { created: 'o.created_at', total: 'o.total_cents', status: 'o.status' };

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
      const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(1, Number.parseInt(req.query.pageSize, 10) || DEFAULT_PAGE_SIZE));
      const direction = req.query.dir === 'asc' ? 'ASC' : 'DESC';
      const sortColumn = Object.hasOwn(SORT_COLUMNS, req.query.sort) ? SORT_COLUMNS[req.query.sort] : SORT_COLUMNS.created;
      const orderBy = `${sortColumn} ${direction}`;

      const params = [req.user.id];
      let where = 'o.customer_id = $1';
      if (req.query.status !== undefined) {
        if (!STATUSES.includes(req.query.status)) {
          throw new HttpError(400, 'unknown status');
        }
        params.push(req.query.status);
        where += ` AND o.status = $${params.length}`;
      }
      params.push(pageSize, (page - 1) * pageSize);

      const { rows: orders } = await pg.query(
        `SELECT o.id, o.status, o.currency, o.total_cents, o.created_at
           FROM orders o
          WHERE ${where}
          ORDER BY ${orderBy}, o.id
          LIMIT $${params.length - 1} OFFSET $${params.length}`,
        params,
      );
      const { rows: items } = await pg.query(
        'SELECT order_id, sku, quantity, unit_price_cents FROM order_items WHERE order_id = ANY($1) ORDER BY sku',
        [orders.map((order) => order.id)],
      );
      const itemsByOrder = new Map(orders.map((order) => [order.id, []]));
      for (const { order_id: orderId, ...item } of items) {
        itemsByOrder.get(orderId).push(item);
      }
      for (const order of orders) {
        order.items = itemsByOrder.get(order.id);
      }
      res.json({ page, pageSize, orders });
    }),
  );

  router.get(
    '/:id',
    asyncHandler(async (req, res) => {
      const id = parseOrderId(req.params.id);
      const { rows } = await pg.query('SELECT * FROM orders WHERE id = $1 AND customer_id = $2', [id, req.user.id]);
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

      const client = await pg.connect();
      let order;
      let totalCents = 0;
      try {
        await client.query('BEGIN');
        const inserted = await client.query(
          `INSERT INTO orders (tenant_id, customer_id, status, currency, total_cents)
           VALUES ($1, $2, 'pending', $3, 0) RETURNING id, created_at`,
          [req.user.tenantId, req.user.id, currency],
        );
        order = inserted.rows[0];
        for (const item of items) {
          const { rows } = await client.query(
            'UPDATE products SET stock = stock - $1 WHERE sku = $2 AND currency = $3 AND stock >= $1 RETURNING price_cents',
            [item.quantity, item.sku, currency],
          );
          if (rows.length === 0) {
            throw new HttpError(409, `insufficient stock for ${item.sku}`);
          }
          await client.query(
            'INSERT INTO order_items (order_id, sku, quantity, unit_price_cents) VALUES ($1, $2, $3, $4)',
            [order.id, item.sku, item.quantity, rows[0].price_cents],
          );
          totalCents += rows[0].price_cents * item.quantity;
        }
        await client.query('UPDATE orders SET total_cents = $1 WHERE id = $2', [totalCents, order.id]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }

      res.status(201).location(`/api/orders/${order.id}`).json({ id: order.id, status: 'pending', totalCents });
    }),
  );

  // BORDERLINE 4 only JWT users with the fulfilment/support role reach this route; a fulfilment webhook using X-Internal-Key (requireInternalKey, tenantId null) is not wired to it here, which matters only if such a service-to-service caller exists outside this diff
  router.patch(
    '/:id/status',
    requireRole('fulfilment', 'support'),
    asyncHandler(async (req, res) => {
      const id = parseOrderId(req.params.id);
      const status = req.body.status;
      if (typeof status !== 'string' || !Object.hasOwn(TRANSITIONS, status)) {
        throw new HttpError(400, 'unsupported status transition');
      }
      const client = await pg.connect();
      let order;
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(
          `UPDATE orders SET status = $1, updated_at = now()
            WHERE id = $2 AND tenant_id = $3 AND status = ANY($4)
            RETURNING id, status, currency`,
          [status, id, req.user.tenantId, TRANSITIONS[status]],
        );
        if (rows.length === 0) {
          throw new HttpError(409, `order cannot move to ${status}`);
        }
        order = rows[0];
        if (status === 'cancelled') {
          // Give back the stock POST / reserved for this order's items.
          await client.query(
            `UPDATE products p SET stock = p.stock + oi.quantity
               FROM order_items oi
              WHERE oi.order_id = $1 AND p.sku = oi.sku AND p.currency = $2`,
            [order.id, order.currency],
          );
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }
      res.json({ id: order.id, status: order.status });
    }),
  );

  return router;
};
