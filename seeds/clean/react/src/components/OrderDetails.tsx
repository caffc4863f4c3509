import { FormEvent, ReactElement, useEffect, useRef, useState } from "react";
import { ApiError, Order, OrderStatus, ordersApi } from "../api/client";
import { describeError, useOrder } from "../hooks/useOrders";

// Amounts (the API's *Cents fields) are integers in the currency's minor unit (ISO 4217): cents for USD and EUR,
// yen for JPY, fils for KWD. The number of decimals always comes from the order's currency, never a fixed 2.
const REFUNDABLE_STATUSES: OrderStatus[] = ["paid", "shipped", "delivered"];
/** The CRM that embeds this console in an iframe; the only frame allowed to receive order events. */
const CRM_ORIGIN = "https://crm.northwind-support.example";

/** ISO 4217 minor-unit exponents other than 2 (the API's amounts follow ISO 4217, which CLDR's display digits do not always match). */
const ISO_MINOR_DIGITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0,
  XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** Digits of the currency's minor unit: 2 for USD, 0 for JPY, 3 for KWD. */
function minorDigits(currency: string): number {
  return ISO_MINOR_DIGITS[currency.toUpperCase()] ?? 2;
}

function amountPattern(digits: number): RegExp {
  return digits === 0 ? /^\d{1,9}$/ : new RegExp(`^\\d{1,7}(\\.\\d{1,${digits}})?$`);
}

function formatMoney(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  return new Intl.NumberFormat(undefined, { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(
    minor / 10 ** digits,
  );
}

/** A refund attempt whose outcome is not known yet, kept across reloads, remounts and tabs until it is. */
interface PendingRefund {
  key: string;
  amount: string;
  reason: string;
}

function pendingStorageKey(orderId: string): string {
  return `support.pendingRefund.${orderId}`;
}

function loadPendingRefund(orderId: string): PendingRefund | null {
  try {
    const raw = localStorage.getItem(pendingStorageKey(orderId));
    const parsed: unknown = raw ? JSON.parse(raw) : null;
    const p = parsed as Partial<PendingRefund> | null;
    return p && typeof p.key === "string" && typeof p.amount === "string" && typeof p.reason === "string"
      ? { key: p.key, amount: p.amount, reason: p.reason }
      : null;
  } catch {
    return null;
  }
}

function savePendingRefund(orderId: string, pending: PendingRefund | null): void {
  try {
    if (pending) {
      localStorage.setItem(pendingStorageKey(orderId), JSON.stringify(pending));
    } else {
      localStorage.removeItem(pendingStorageKey(orderId));
    }
  } catch {
    // Storage unavailable (private mode, quota): the key is still held in memory for this page.
  }
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
  // An attempt left unresolved by an earlier page, panel or tab is picked up again with its key and fields.
  const [restored] = useState(() => loadPendingRefund(order.id));
  const [amount, setAmount] = useState(restored?.amount ?? "");
  const [reason, setReason] = useState(restored?.reason ?? "");
  const [submitting, setSubmitting] = useState(false);
  const [formError, setFormError] = useState<string | null>(
    restored ? "An earlier refund attempt for this order has no known outcome: retry to finish it, it will not be applied twice." : null,
  );
  // One key per refund attempt, held (in memory and in localStorage) until the server's answer is known. While
  // it is held the amount and reason are locked, so a retry resends the same request under the same key.
  const idempotencyKey = useRef<string | null>(restored?.key ?? null);
  const [unresolved, setUnresolved] = useState(restored !== null);
  const locked = submitting || unresolved;
  const digits = minorDigits(order.currency);

  function forgetAttempt() {
    // Only this attempt's record is removed: another tab's unresolved attempt for the order stays.
    const stored = loadPendingRefund(order.id);
    if (stored === null || stored.key === idempotencyKey.current) {
      savePendingRefund(order.id, null);
    }
    idempotencyKey.current = null;
    setUnresolved(false);
  }

  function discardAttempt() {
    const refunded = formatMoney(order.refundedCents, order.currency);
    if (
      window.confirm(
        `Discard this refund attempt? Check the refunded total (${refunded}) first: if the attempt went through, a new refund pays the customer again.`,
      )
    ) {
      forgetAttempt();
      setFormError(null);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    setFormError(null);
    if (!amountPattern(digits).test(amount.trim())) {
      setFormError(digits === 0 ? `Enter a whole amount of ${order.currency}.` : `Enter an amount with at most ${digits} decimals.`);
      return;
    }
    const cents = Math.round(Number(amount.trim()) * 10 ** digits);
    // A retry is not checked against the refreshed balance: that balance may already include this refund.
    if (!unresolved && (cents <= 0 || cents > remainingCents(order))) {
      setFormError(`Refund must be between ${formatMoney(1, order.currency)} and ${formatMoney(remainingCents(order), order.currency)}.`);
      return;
    }
    const stored = loadPendingRefund(order.id);
    if (idempotencyKey.current === null && stored !== null) {
      // Another tab holds an attempt for this order with no known outcome: finish that one, never start a second.
      idempotencyKey.current = stored.key;
      setAmount(stored.amount);
      setReason(stored.reason);
      setUnresolved(true);
      setFormError("Another refund attempt for this order has no known outcome: retry to finish it, it will not be applied twice.");
      return;
    }
    setSubmitting(true);
    const isRetry = unresolved;
    const key = (idempotencyKey.current ??= crypto.randomUUID());
    // Saved before sending, so a reload while the request is in flight still finds the key.
    savePendingRefund(order.id, { key, amount: amount.trim(), reason });
    ordersApi
      .refund(order.id, cents, reason.trim(), key)
      .then(() => {
        forgetAttempt();
        setAmount("");
        setReason("");
        return onRefunded();
      })
      .catch((err: unknown) => {
        if (isInconclusive(err)) {
          setUnresolved(true);
          setFormError(`${describeError(err)} The refund may already have gone through: retry to finish it, it will not be applied twice.`);
          void onRefunded();
        } else if (isRetry) {
          // A refused retry says nothing about the earlier attempt, which may still have been applied: keep its key.
          setFormError(`${describeError(err)} An earlier attempt may already have gone through, so this refund stays tied to it: retry once the problem is fixed.`);
          void onRefunded();
        } else {
          // The server answered the first attempt and refused it: nothing was refunded, so an edited request may use a new key.
          forgetAttempt();
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
      {unresolved && !submitting && (
        <button type="button" className="button--secondary" onClick={discardAttempt}>
          Discard attempt
        </button>
      )}
    </form>
  );
}

export function OrderDetails({ orderId }: { orderId: string }) {
  const { order, error, loading, refresh } = useOrder(orderId);

  // Sent once per opened order, not on every 30 s poll or refresh (which replace the order object).
  const openedId = order?.id;
  const openedNumber = order?.number;
  useEffect(() => {
    if (!openedId || window.parent === window) return;
    window.parent.postMessage({ type: "support:order-opened", orderId: openedId, number: openedNumber }, CRM_ORIGIN);
  }, [openedId, openedNumber]);

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
