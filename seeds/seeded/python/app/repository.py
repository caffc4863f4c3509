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
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

# SEED 1 [BLOCKER] (core/hardcoded-secrets) production database password is committed as the fallback URL; anyone with repository access can log into the billing database
DATABASE_URL = os.environ.get(
    "DATABASE_URL",
    "postgresql://billing_app:Vq7!mRz2-Ledger-prod@db.billing.internal:5432/billing",
)

DEFAULT_PAGE_SIZE = 25


class InvoiceNotOpen(Exception):
    """The invoice is not in a state that accepts a payment."""


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
    # SEED 2 [BLOCKER] (core/sql-injection) the client-supplied sort value is interpolated into ORDER BY, so a request can append arbitrary SQL
    query = f"SELECT * FROM invoices WHERE {' AND '.join(clauses)} ORDER BY {order_by}"
    query += " LIMIT %s OFFSET %s"
    # SEED 3 [MAJOR] (core/off-by-one) page is 1-based, so page * page_size skips a whole page: page=1 returns the second page and the first page_size invoices can never be listed
    params.extend([page_size, page * page_size])
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


def create_invoice(customer_id: int, currency: str, due_on: date, lines: list[LineItem]) -> Invoice:
    with connection() as conn:
        # SEED 4 [MAJOR] (core/race-condition) read-max-then-insert numbering: two concurrent requests read the same MAX and issue duplicate invoice numbers
        last = conn.execute("SELECT COALESCE(MAX(seq), 0) AS seq FROM invoices").fetchone()
        seq = last["seq"] + 1
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


def _insert_payment(invoice_id: int, amount: Decimal, reference: str) -> bool:
    with connection() as conn:
        row = conn.execute(
            "INSERT INTO payments (invoice_id, amount, reference, received_at)"
            " VALUES (%s, %s, %s, now()) ON CONFLICT (reference) DO NOTHING RETURNING id",
            (invoice_id, amount, reference),
        ).fetchone()
    return row is not None


def _mark_paid(invoice_id: int) -> None:
    with connection() as conn:
        # SEED 17 [MAJOR] (core/logic-error) any payment marks the invoice paid: the amount is never compared with the line total nor the currency with the invoice's, so a 0.01 payment (or a partial manual one) settles the whole invoice
        updated = conn.execute(
            "UPDATE invoices SET status = %s, paid_at = now() WHERE id = %s AND status = %s",
            (InvoiceStatus.PAID.value, invoice_id, InvoiceStatus.OPEN.value),
        ).rowcount
    if updated == 0:
        raise InvoiceNotOpen(invoice_id)


def record_payment(invoice_id: int, amount: Decimal, reference: str) -> bool:
    """Store a received payment and mark the invoice paid.

    Returns False when a payment with this reference was already recorded (provider
    retries deliver the same event more than once). Raises InvoiceNotOpen when the
    invoice is not open.
    """
    # SEED 5 [CRITICAL] (core/missing-transaction) the payment insert and the status update commit on separate pooled connections, so if the update fails after the insert has committed (a dropped connection, a lock timeout) the payment is stored while the invoice stays open and is shown as unpaid
    if not _insert_payment(invoice_id, amount, reference):
        return False
    _mark_paid(invoice_id)
    return True


def mark_refunded(invoice_id: int) -> bool:
    """Move a paid invoice to refunded; False when it was not paid (nothing changed)."""
    with connection() as conn:
        updated = conn.execute(
            "UPDATE invoices SET status = %s WHERE id = %s AND status = %s",
            (InvoiceStatus.REFUNDED.value, invoice_id, InvoiceStatus.PAID.value),
        ).rowcount
    return updated == 1
