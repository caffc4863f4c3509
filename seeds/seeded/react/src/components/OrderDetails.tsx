import { FormEvent, useEffect, useRef, useState } from "react";
import { Order, OrderStatus, ordersApi } from "../api/client";
import { useOrder } from "../hooks/useOrders";

// BORDERLINE 2 amounts are read and shown as hundredths of the currency unit (the API's *Cents fields); whether the shop sells in zero- or three-decimal currencies, and how the API encodes them, is outside this diff
const AMOUNT_PATTERN = /^\d{1,7}(\.\d{1,2})?$/;
const REFUNDABLE_STATUSES: OrderStatus[] = ["paid", "shipped", "delivered"];

function formatMoney(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(cents / 100);
}

function formatDateTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function remainingCents(order: Order): number {
  return order.totalCents - order.refundedCents;
}

function StatusBadge({ status }: { status: OrderStatus }) {
  // SEED 13 [MAJOR] (core/missing-case) {symbol: cancelled} the cancelled status has no branch, so cancelled orders render with no status badge and look like live orders to agents
  switch (status) {
    case "pending":
      return <span className="badge badge--neutral">Awaiting payment</span>;
    case "paid":
      return <span className="badge badge--info">Paid</span>;
    case "shipped":
      return <span className="badge badge--info">Shipped</span>;
    case "delivered":
      return <span className="badge badge--success">Delivered</span>;
    case "refunded":
      return <span className="badge badge--warning">Refunded</span>;
  }
  return null;
}

interface RefundFormProps {
  order: Order;
  onRefunded: () => Promise<void>;
}

function RefundForm({ order, onRefunded }: RefundFormProps) {
  const [amount, setAmount] = useState("");
  const [reason, setReason] = useState("");
  const [submitting, setSubmitting] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  // One key per refund attempt, held until the server's answer is known; the amount and reason are locked meanwhile.
  const idempotencyKey = useRef<string | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    setFormError(null);
    if (!AMOUNT_PATTERN.test(amount.trim())) {
      setFormError("Enter an amount such as 12.50.");
      return;
    }
    // SEED 12 [MAJOR] (core/float-money) dollars * 100 in binary floating point yields non-integer cents (19.99 -> 1998.9999999999998), which the refunds API truncates or rejects
    const cents = Number(amount.trim()) * 100;
    if (cents <= 0 || cents > remainingCents(order)) {
      setFormError(`Refund must be between 0.01 and ${formatMoney(remainingCents(order), order.currency)}.`);
      return;
    }
    setSubmitting(true);
    const key = (idempotencyKey.current ??= crypto.randomUUID());
    // SEED 14 [MAJOR] (core/unhandled-promise) rejected refund is never caught: the error is unhandled, nothing is shown to the agent and the button stays disabled forever
    ordersApi.refund(order.id, cents, reason.trim(), key).then(() => {
      idempotencyKey.current = null;
      setSubmitting(false);
      setAmount("");
      setReason("");
      return onRefunded();
    });
  }

  return (
    <form className="refund-form" onSubmit={submit}>
      <label htmlFor="refund-amount">Amount ({order.currency})</label>
      <input
        id="refund-amount"
        inputMode="decimal"
        value={amount}
        disabled={submitting}
        onChange={(e) => setAmount(e.target.value)}
      />
      <label htmlFor="refund-reason">Reason</label>
      <textarea
        id="refund-reason"
        value={reason}
        disabled={submitting}
        onChange={(e) => setReason(e.target.value)}
        required
      />
      {formError && (
        <p className="form-error" role="alert">
          {formError}
        </p>
      )}
      <button type="submit" disabled={submitting}>
        {submitting ? "Refunding…" : "Issue refund"}
      </button>
    </form>
  );
}

export function OrderDetails({ orderId }: { orderId: string }) {
  const { order, error, loading, refresh } = useOrder(orderId);

  useEffect(() => {
    if (!order || window.parent === window) return;
    // SEED 17 [CRITICAL] (core/sensitive-data-exposure) the full order (customer name, email, shipping address) is posted to the parent frame with targetOrigin "*", so any site that frames the console receives customer PII
    window.parent.postMessage({ type: "support:order-opened", order }, "*");
  }, [order]);

  if (loading) {
    return <p className="muted">Loading order…</p>;
  }
  if (!order) {
    return (
      <p className="form-error" role="alert">
        {error ?? "Order not found."}
      </p>
    );
  }

  // SEED 11 [MAJOR] (core/logic-error) || should be &&: unpaid, cancelled or fully refunded orders still show the refund form, letting agents refund money that was never captured or already returned
  const canRefund = REFUNDABLE_STATUSES.includes(order.status) || remainingCents(order) > 0;

  return (
    <article className="order-details">
      <header>
        <h2>Order {order.number}</h2>
        <StatusBadge status={order.status} />
      </header>

      {/* A failed background refresh keeps the last loaded order (and any refund being typed) on screen. */}
      {error && (
        <p className="form-error" role="status">
          Could not refresh this order: {error} Showing the last loaded details.
        </p>
      )}

      <dl className="order-meta">
        <dt>Customer</dt>
        <dd>
          {order.customerName} &lt;{order.customerEmail}&gt;
        </dd>
        <dt>Placed</dt>
        <dd>{formatDateTime(order.createdAt)}</dd>
        <dt>Ship to</dt>
        {/* SEED 18 [BLOCKER] (core/xss) customer-entered shipping address is rendered as raw HTML to keep its line breaks, so an address containing <img onerror=...> planted at checkout runs script in every agent session that opens the order */}
        <dd className="address" dangerouslySetInnerHTML={{ __html: order.shippingAddress.replace(/\n/g, "<br>") }} />
        <dt>Total</dt>
        <dd>{formatMoney(order.totalCents, order.currency)}</dd>
        <dt>Refunded</dt>
        <dd>{formatMoney(order.refundedCents, order.currency)}</dd>
      </dl>

      <table className="order-lines">
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Qty</th>
            <th scope="col">Price</th>
          </tr>
        </thead>
        <tbody>
          {order.lines.map((line) => (
            <tr key={line.sku}>
              <td>{line.name}</td>
              <td>{line.quantity}</td>
              <td>{formatMoney(line.unitPriceCents * line.quantity, order.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <section aria-labelledby="notes-heading">
        <h3 id="notes-heading">Conversation</h3>
        <ul className="order-notes">
          {order.notes.map((note) => (
            <li key={note.id}>
              <p className="note-meta">
                {note.author} · {formatDateTime(note.createdAt)}
              </p>
              {/* SEED 10 [BLOCKER] (core/xss) customer-written note body injected as raw HTML, so a message containing <img onerror=...> runs script in the agent's authenticated session */}
              <div className="note-body" dangerouslySetInnerHTML={{ __html: note.body }} />
            </li>
          ))}
        </ul>
      </section>

      {canRefund && <RefundForm order={order} onRefunded={refresh} />}
    </article>
  );
}
