"""PostgreSQL access for invoices, line items and payments."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Iterator, Optional

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

DATABASE_URL = os.environ["DATABASE_URL"]

DEFAULT_PAGE_SIZE = 25
SORTABLE_COLUMNS = frozenset({"issued_on", "due_on", "number"})


class InvoiceNotOpen(Exception):
    """The invoice is not in a state that accepts a payment."""


class PaymentResult(str, Enum):
    DUPLICATE = "duplicate"  # this reference was already recorded
    PAID = "paid"  # the invoice's payments now cover its total
    PARTIAL = "partial"  # recorded, but the invoice is not yet covered in its currency


class RefundResult(str, Enum):
    DUPLICATE = "duplicate"  # this refund was already recorded
    PARTIAL = "partial"  # recorded; refunds do not cover the payments, the status is unchanged
    REFUNDED = "refunded"  # the paid invoice is now fully refunded
    UNKNOWN_INVOICE = "unknown_invoice"  # no such invoice; nothing recorded
    AHEAD_OF_PAYMENT = "ahead_of_payment"  # more refunded than paid so far; nothing recorded, retry later


class InvoiceStatus(str, Enum):
    DRAFT = "draft"
    OPEN = "open"
    PAID = "paid"
    VOID = "void"
    REFUNDED = "refunded"


@dataclass(frozen=True)
class Invoice:
    id: int
    customer_id: int
    number: str
    status: InvoiceStatus
    currency: str
    issued_on: date
    due_on: date
    paid_at: Optional[datetime]


@dataclass(frozen=True)
class LineItem:
    invoice_id: int
    description: str
    quantity: int
    unit_price: Decimal


_pool = ConnectionPool(
    DATABASE_URL,
    min_size=1,
    max_size=10,
    kwargs={"row_factory": dict_row},
    open=False,
)


def open_pool() -> None:
    _pool.open(wait=True, timeout=10)


def close_pool() -> None:
    _pool.close()


@contextmanager
def connection() -> Iterator[psycopg.Connection]:
    """Borrow a pooled connection; the block commits on success and rolls back on error."""
    with _pool.connection() as conn:
        yield conn


def _to_invoice(row: dict) -> Invoice:
    return Invoice(
        id=row["id"],
        customer_id=row["customer_id"],
        number=row["number"],
        status=InvoiceStatus(row["status"]),
        currency=row["currency"],
        issued_on=row["issued_on"],
        due_on=row["due_on"],
        paid_at=row["paid_at"],
    )


def get_invoice(invoice_id: int) -> Optional[Invoice]:
    with connection() as conn:
        row = conn.execute(
            "SELECT * FROM invoices WHERE id = %s", (invoice_id,)
        ).fetchone()
    return _to_invoice(row) if row else None


def list_invoices(
    customer_id: int,
    status: Optional[InvoiceStatus],
    order_by: str,
    page: int,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> list[Invoice]:
    """One page of a customer's invoices. ``page`` starts at 1."""
    clauses = ["customer_id = %s"]
    params: list[object] = [customer_id]
    if status is not None:
        clauses.append("status = %s")
        params.append(status.value)
    if order_by not in SORTABLE_COLUMNS:
        raise ValueError(f"cannot sort invoices by {order_by!r}")
    query = sql.SQL("SELECT * FROM invoices WHERE {} ORDER BY {}, id").format(
        sql.SQL(" AND ").join(sql.SQL(clause) for clause in clauses), sql.Identifier(order_by)
    )
    query += sql.SQL(" LIMIT %s OFFSET %s")
    params.extend([page_size, (page - 1) * page_size])
    with connection() as conn:
        rows = conn.execute(query, params).fetchall()
    return [_to_invoice(r) for r in rows]


def get_line_items(invoice_id: int) -> list[LineItem]:
    with connection() as conn:
        rows = conn.execute(
            "SELECT invoice_id, description, quantity, unit_price"
            " FROM invoice_lines WHERE invoice_id = %s ORDER BY position",
            (invoice_id,),
        ).fetchall()
    return [LineItem(**r) for r in rows]


def get_line_items_for(invoice_ids: list[int]) -> dict[int, list[LineItem]]:
    """Line items of several invoices in one query, keyed by invoice id."""
    items: dict[int, list[LineItem]] = {invoice_id: [] for invoice_id in invoice_ids}
    if not invoice_ids:
        return items
    with connection() as conn:
        rows = conn.execute(
            "SELECT invoice_id, description, quantity, unit_price"
            " FROM invoice_lines WHERE invoice_id = ANY(%s) ORDER BY invoice_id, position",
            (invoice_ids,),
        ).fetchall()
    for r in rows:
        items[r["invoice_id"]].append(LineItem(**r))
    return items


def create_invoice(customer_id: int, currency: str, due_on: date, lines: list[LineItem]) -> Invoice:
    with connection() as conn:
        seq = conn.execute("SELECT nextval('invoice_number_seq') AS seq").fetchone()["seq"]
        row = conn.execute(
            "INSERT INTO invoices (customer_id, seq, number, status, currency, issued_on, due_on)"
            " VALUES (%s, %s, %s, %s, %s, CURRENT_DATE, %s) RETURNING *",
            (customer_id, seq, f"INV-{seq:06d}", InvoiceStatus.OPEN.value, currency, due_on),
        ).fetchone()
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO invoice_lines (invoice_id, position, description, quantity, unit_price)"
                " VALUES (%s, %s, %s, %s, %s)",
                [
                    (row["id"], pos, line.description, line.quantity, line.unit_price)
                    for pos, line in enumerate(lines, start=1)
                ],
            )
    return _to_invoice(row)


def _insert_payment(
    conn: psycopg.Connection, invoice_id: int, amount: Decimal, currency: str, reference: str
) -> bool:
    row = conn.execute(
        "INSERT INTO payments (invoice_id, amount, currency, reference, received_at)"
        " VALUES (%s, %s, %s, %s, now()) ON CONFLICT (reference) DO NOTHING RETURNING id",
        (invoice_id, amount, currency, reference),
    ).fetchone()
    return row is not None


def _mark_paid_if_covered(conn: psycopg.Connection, invoice_id: int) -> bool:
    """Mark the invoice paid once its net payments (payments less refunds, both in the
    invoice currency) cover the line total."""
    updated = conn.execute(
        "UPDATE invoices i SET status = %s, paid_at = now()"
        " WHERE i.id = %s AND i.status = %s"
        " AND (SELECT COALESCE(SUM(p.amount), 0) FROM payments p"
        "      WHERE p.invoice_id = i.id AND p.currency = i.currency)"
        "  - (SELECT COALESCE(SUM(r.amount), 0) FROM refunds r"
        "      WHERE r.invoice_id = i.id AND r.currency = i.currency)"
        "  >= (SELECT COALESCE(SUM(l.quantity * l.unit_price), 0) FROM invoice_lines l"
        "      WHERE l.invoice_id = i.id)",
        (InvoiceStatus.PAID.value, invoice_id, InvoiceStatus.OPEN.value),
    ).rowcount
    return updated == 1


def record_payment(
    invoice_id: int,
    amount: Decimal,
    currency: str,
    reference: str,
    *,
    keep_if_not_open: bool = False,
) -> PaymentResult:
    """Store a received payment and mark the invoice paid once it is covered.

    Returns DUPLICATE when a payment with this reference was already recorded (provider
    retries deliver the same event more than once). Raises InvoiceNotOpen when the
    invoice is missing or not open; the payment is then rolled back, unless
    ``keep_if_not_open`` is set (money the provider already collected stays on record
    for reconciliation).
    """
    with connection() as conn:
        row = conn.execute(
            "SELECT status FROM invoices WHERE id = %s FOR UPDATE", (invoice_id,)
        ).fetchone()
        if row is None:
            raise InvoiceNotOpen(invoice_id)
        is_open = row["status"] == InvoiceStatus.OPEN.value
        if not is_open and not keep_if_not_open:
            raise InvoiceNotOpen(invoice_id)
        if not _insert_payment(conn, invoice_id, amount, currency, reference):
            return PaymentResult.DUPLICATE
        paid = is_open and _mark_paid_if_covered(conn, invoice_id)
    if not is_open:
        raise InvoiceNotOpen(invoice_id)
    return PaymentResult.PAID if paid else PaymentResult.PARTIAL


def record_refund(invoice_id: int, amount: Decimal, currency: str, reference: str) -> RefundResult:
    """Store a provider refund and mark a paid invoice refunded once refunds cover its payments.

    A partial refund is recorded but leaves the invoice paid. Only refunds and payments in
    the invoice currency are compared, so a refund in another currency never flips it.
    Providers do not deliver events in order: a refund that would exceed the payments
    recorded so far is not stored (AHEAD_OF_PAYMENT) so the provider delivers it again
    after the payment it refunds.
    """
    with connection() as conn:
        row = conn.execute(
            "SELECT status FROM invoices WHERE id = %s FOR UPDATE", (invoice_id,)
        ).fetchone()
        if row is None:
            return RefundResult.UNKNOWN_INVOICE
        totals = conn.execute(
            "SELECT (SELECT COALESCE(SUM(p.amount), 0) FROM payments p WHERE p.invoice_id = %s AND p.currency = %s) AS paid,"
            " (SELECT COALESCE(SUM(r.amount), 0) FROM refunds r WHERE r.invoice_id = %s AND r.currency = %s) AS refunded,"
            " EXISTS (SELECT 1 FROM refunds r WHERE r.reference = %s) AS seen",
            (invoice_id, currency, invoice_id, currency, reference),
        ).fetchone()
        if totals["seen"]:
            return RefundResult.DUPLICATE
        if totals["refunded"] + amount > totals["paid"]:
            return RefundResult.AHEAD_OF_PAYMENT
        inserted = conn.execute(
            "INSERT INTO refunds (invoice_id, amount, currency, reference, received_at)"
            " VALUES (%s, %s, %s, %s, now()) ON CONFLICT (reference) DO NOTHING RETURNING id",
            (invoice_id, amount, currency, reference),
        ).fetchone()
        if inserted is None:
            return RefundResult.DUPLICATE
        updated = conn.execute(
            "UPDATE invoices i SET status = %s"
            " WHERE i.id = %s AND i.status = %s"
            " AND (SELECT COALESCE(SUM(r.amount), 0) FROM refunds r"
            "      WHERE r.invoice_id = i.id AND r.currency = i.currency)"
            "  >= (SELECT COALESCE(SUM(p.amount), 0) FROM payments p"
            "      WHERE p.invoice_id = i.id AND p.currency = i.currency)",
            (InvoiceStatus.REFUNDED.value, invoice_id, InvoiceStatus.PAID.value),
        ).rowcount
    return RefundResult.REFUNDED if updated == 1 else RefundResult.PARTIAL
