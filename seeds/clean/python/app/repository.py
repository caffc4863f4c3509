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
    conn: psycopg.Connection, invoice_id: int, amount: Decimal, reference: str
) -> bool:
    row = conn.execute(
        "INSERT INTO payments (invoice_id, amount, reference, received_at)"
        " VALUES (%s, %s, %s, now()) ON CONFLICT (reference) DO NOTHING RETURNING id",
        (invoice_id, amount, reference),
    ).fetchone()
    return row is not None


def _mark_paid(conn: psycopg.Connection, invoice_id: int) -> None:
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
    with connection() as conn:
        if not _insert_payment(conn, invoice_id, amount, reference):
            return False
        _mark_paid(conn, invoice_id)
    return True


def mark_refunded(invoice_id: int) -> None:
    with connection() as conn:
        conn.execute(
            "UPDATE invoices SET status = %s WHERE id = %s AND status = %s",
            (InvoiceStatus.REFUNDED.value, invoice_id, InvoiceStatus.PAID.value),
        )
