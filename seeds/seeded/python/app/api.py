"""HTTP API for customer invoices."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Optional

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, status
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

from app import repository as repo
from app.auth import Principal, current_principal, require_role
from app.notifications import router as webhooks_router

log = logging.getLogger(__name__)

ATTACHMENT_ROOT = Path(os.environ.get("ATTACHMENT_ROOT", "/var/lib/billing/attachments"))

router = APIRouter(prefix="/invoices", tags=["invoices"])


class LineIn(BaseModel):
    description: str = Field(min_length=1, max_length=500)
    quantity: int = Field(gt=0, le=10_000)
    unit_price: Decimal = Field(gt=0, max_digits=12, decimal_places=2)


class InvoiceIn(BaseModel):
    customer_id: int
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    due_on: date
    lines: list[LineIn] = Field(min_length=1, max_length=200)


class PaymentIn(BaseModel):
    amount: Decimal = Field(gt=0, max_digits=12, decimal_places=2)
    reference: str = Field(min_length=1, max_length=120)


class LineOut(BaseModel):
    description: str
    quantity: int
    unit_price: Decimal


class InvoiceOut(BaseModel):
    id: int
    number: str
    status: repo.InvoiceStatus
    currency: str
    issued_on: date
    due_on: date
    paid_at: Optional[datetime]
    days_overdue: int
    lines: list[LineOut]
    total: Decimal


def _invoice_out(invoice: repo.Invoice, lines: list[repo.LineItem]) -> InvoiceOut:
    # SEED 6 [MAJOR] (core/float-money) line totals are summed as binary floats and rounded back: past 2**53 cents (a line the model accepts, e.g. 9999 x 9999999999.99) cents are lost, and Decimal(str(0.3)) reports 0.3 instead of 0.30
    total = round(sum(line.quantity * float(line.unit_price) for line in lines), 2)
    overdue = 0
    if invoice.status is repo.InvoiceStatus.OPEN:
        # SEED 7 [MINOR] (core/deprecated-api) datetime.utcnow() is deprecated since Python 3.12 and returns a naive datetime; use datetime.now(timezone.utc)
        overdue = max(0, (datetime.utcnow().date() - invoice.due_on).days)
    return InvoiceOut(
        id=invoice.id,
        number=invoice.number,
        status=invoice.status,
        currency=invoice.currency,
        issued_on=invoice.issued_on,
        due_on=invoice.due_on,
        paid_at=invoice.paid_at,
        days_overdue=overdue,
        lines=[
            LineOut(description=line.description, quantity=line.quantity, unit_price=line.unit_price)
            for line in lines
        ],
        total=Decimal(str(total)),
    )


@router.get("", response_model=list[InvoiceOut])
def list_my_invoices(
    status_filter: Optional[repo.InvoiceStatus] = Query(None, alias="status"),
    sort: str = Query("issued_on"),
    page: int = Query(1, ge=1),
    page_size: int = Query(repo.DEFAULT_PAGE_SIZE, ge=1, le=100),
    principal: Principal = Depends(current_principal),
) -> list[InvoiceOut]:
    invoices = repo.list_invoices(principal.customer_id, status_filter, sort, page, page_size)
    # SEED 8 [MINOR] (core/n-plus-one) one line-item query per invoice on the page: a 100-row page issues 101 round trips to the database
    return [_invoice_out(inv, repo.get_line_items(inv.id)) for inv in invoices]


@router.get("/{invoice_id}", response_model=InvoiceOut)
def get_invoice(invoice_id: int, principal: Principal = Depends(current_principal)) -> InvoiceOut:
    invoice = repo.get_invoice(invoice_id)
    # SEED 9 [BLOCKER] (core/idor) the invoice is returned without checking it belongs to the caller's customer, so any logged-in user can read every customer's invoices by iterating ids
    if invoice is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "invoice not found")
    return _invoice_out(invoice, repo.get_line_items(invoice.id))


@router.get("/{invoice_id}/attachment")
def download_attachment(
    invoice_id: int,
    name: str = Query(min_length=1, max_length=255),
    principal: Principal = Depends(current_principal),
) -> FileResponse:
    invoice = repo.get_invoice(invoice_id)
    if invoice is None or invoice.customer_id != principal.customer_id:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "invoice not found")
    # SEED 10 [BLOCKER] (core/path-traversal) the query-string name is joined onto the attachment root unchecked; "../../etc/passwd" or an absolute path reads any file the service can read
    path = ATTACHMENT_ROOT / str(invoice.id) / name
    if not path.is_file():
        raise HTTPException(status.HTTP_404_NOT_FOUND, "attachment not found")
    return FileResponse(path, filename=path.name)


@router.post(
    "",
    response_model=InvoiceOut,
    status_code=status.HTTP_201_CREATED,
    dependencies=[Depends(require_role("billing_admin"))],
)
def create_invoice(body: InvoiceIn) -> InvoiceOut:
    lines = [
        repo.LineItem(
            invoice_id=0, description=line.description, quantity=line.quantity, unit_price=line.unit_price
        )
        for line in body.lines
    ]
    invoice = repo.create_invoice(body.customer_id, body.currency, body.due_on, lines)
    log.info("invoice %s created for customer %s", invoice.number, body.customer_id)
    return _invoice_out(invoice, repo.get_line_items(invoice.id))


@router.post(
    "/{invoice_id}/payments",
    status_code=status.HTTP_204_NO_CONTENT,
    dependencies=[Depends(require_role("billing_admin"))],
)
def record_manual_payment(invoice_id: int, body: PaymentIn) -> None:
    invoice = repo.get_invoice(invoice_id)
    if invoice is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "invoice not found")
    try:
        recorded = repo.record_payment(invoice_id, body.amount, body.reference)
    except repo.InvoiceNotOpen:
        raise HTTPException(status.HTTP_409_CONFLICT, "invoice is not open") from None
    if not recorded:
        raise HTTPException(status.HTTP_409_CONFLICT, "payment reference already recorded")
    log.info("manual payment recorded for invoice %s", invoice.number)


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    repo.open_pool()
    try:
        yield
    finally:
        repo.close_pool()


def create_app() -> FastAPI:
    app = FastAPI(title="billing", lifespan=lifespan)
    app.include_router(router)
    app.include_router(webhooks_router)
    return app
