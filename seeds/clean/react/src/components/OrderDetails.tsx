import { FormEvent, ReactElement, useEffect, useRef, useState } from "react";
import { ApiError, Order, OrderStatus, ordersApi } from "../api/client";
import { describeError, useOrder } from "../hooks/useOrders";

// BORDERLINE 2 amounts are read and shown as hundredths of the currency unit (the API's *Cents fields); whether the shop sells in zero- or three-decimal currencies, and how the API encodes them, is outside this diff
const AMOUNT_PATTERN = /^\d{1,7}(\.\d{1,2})?$/;
const REFUNDABLE_STATUSES: OrderStatus[] = ["paid", "shipped", "delivered"];
/** The CRM that embeds this console in an iframe; the only frame allowed to receive order events. */
const CRM_ORIGIN = "https://crm.northwind-support.example";

function formatMoney(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(cents / 100);
}

function formatDateTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function remainingCents(order: Order): number {
  return order.totalCents - order.refundedCents;
}

/** No answer, or a server error: the refund may or may not have been applied. */
function isInconclusive(err: unknown): boolean {
  return !(err instanceof ApiError) || err.status >= 500 || err.status === 408 || err.status === 409;
}

function StatusBadge({ status }: { status: OrderStatus }): ReactElement {
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
    case "cancelled":
      return <span className="badge badge--muted">Cancelled</span>;
  }
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
  // One key per refund attempt, held until the server's answer is known. While it is held the amount and
  // reason are locked, so a retry resends the same request under the same key and is applied at most once.
  const idempotencyKey = useRef<string | null>(null);
  const [unresolved, setUnresolved] = useState(false);
  const locked = submitting || unresolved;

  function submit(event: FormEvent) {
    event.preventDefault();
    setFormError(null);
    if (!AMOUNT_PATTERN.test(amount.trim())) {
      setFormError("Enter an amount such as 12.50.");
      return;
    }
    const cents = Math.round(Number(amount.trim()) * 100);
    // A retry is not checked against the refreshed balance: that balance may already include this refund.
    if (!unresolved && (cents <= 0 || cents > remainingCents(order))) {
      setFormError(`Refund must be between 0.01 and ${formatMoney(remainingCents(order), order.currency)}.`);
      return;
    }
    setSubmitting(true);
    const key = (idempotencyKey.current ??= crypto.randomUUID());
    ordersApi
      .refund(order.id, cents, reason.trim(), key)
      .then(() => {
        idempotencyKey.current = null;
        setUnresolved(false);
        setAmount("");
        setReason("");
        return onRefunded();
      })
      .catch((err: unknown) => {
        if (isInconclusive(err)) {
          setUnresolved(true);
          setFormError(`${describeError(err)} The refund may already have gone through: retry to finish it, it will not be applied twice.`);
          void onRefunded();
        } else {
          // The server answered and refused it: nothing was refunded, so an edited request may use a new key.
          idempotencyKey.current = null;
          setUnresolved(false);
          setFormError(describeError(err));
        }
      })
      .finally(() => setSubmitting(false));
  }

  return (
    <form className="refund-form" onSubmit={submit}>
      <label htmlFor="refund-amount">Amount ({order.currency})</label>
      <input
        id="refund-amount"
        inputMode="decimal"
        value={amount}
        disabled={locked}
        onChange={(e) => setAmount(e.target.value)}
      />
      <label htmlFor="refund-reason">Reason</label>
      <textarea
        id="refund-reason"
        value={reason}
        disabled={locked}
        onChange={(e) => setReason(e.target.value)}
        required
      />
      {formError && (
        <p className="form-error" role="alert">
          {formError}
        </p>
      )}
      <button type="submit" disabled={submitting}>
        {submitting ? "Refunding…" : unresolved ? "Retry refund" : "Issue refund"}
      </button>
    </form>
  );
}

export function OrderDetails({ orderId }: { orderId: string }) {
  const { order, error, loading, refresh } = useOrder(orderId);

  useEffect(() => {
    if (!order || window.parent === window) return;
    window.parent.postMessage({ type: "support:order-opened", orderId: order.id, number: order.number }, CRM_ORIGIN);
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

  const canRefund = REFUNDABLE_STATUSES.includes(order.status) && remainingCents(order) > 0;

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
        <dd className="address">{order.shippingAddress}</dd>
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
              <p className="note-body">{note.body}</p>
            </li>
          ))}
        </ul>
      </section>

      {canRefund && <RefundForm order={order} onRefunded={refresh} />}
    </article>
  );
}
