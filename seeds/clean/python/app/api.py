"""HTTP API for customer invoices."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Literal, Optional

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, status
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

from app import repository as repo
from app.auth import Principal, current_principal, require_role
from app.notifications import router as webhooks_router

log = logging.getLogger(__name__)

ATTACHMENT_ROOT = Path(os.environ.get("ATTACHMENT_ROOT", "/var/lib/billing/attachments")).resolve()
CENT = Decimal("0.01")

SortKey = Literal["issued_on", "due_on", "number"]

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
    total = sum((line.quantity * line.unit_price for line in lines), Decimal(0)).quantize(CENT)
    overdue = 0
    if invoice.status is repo.InvoiceStatus.OPEN:
        overdue = max(0, (datetime.now(timezone.utc).date() - invoice.due_on).days)
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
        total=total,
    )


@router.get("", response_model=list[InvoiceOut])
def list_my_invoices(
    status_filter: Optional[repo.InvoiceStatus] = Query(None, alias="status"),
    sort: SortKey = Query("issued_on"),
    page: int = Query(1, ge=1),
    page_size: int = Query(repo.DEFAULT_PAGE_SIZE, ge=1, le=100),
    principal: Principal = Depends(current_principal),
) -> list[InvoiceOut]:
    invoices = repo.list_invoices(principal.customer_id, status_filter, sort, page, page_size)
    lines = repo.get_line_items_for([inv.id for inv in invoices])
    return [_invoice_out(inv, lines[inv.id]) for inv in invoices]


@router.get("/{invoice_id}", response_model=InvoiceOut)
def get_invoice(invoice_id: int, principal: Principal = Depends(current_principal)) -> InvoiceOut:
    invoice = repo.get_invoice(invoice_id)
    if invoice is None or invoice.customer_id != principal.customer_id:
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
    folder = ATTACHMENT_ROOT / str(invoice.id)
    path = (folder / name).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
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
        # Manual references get their own namespace, so one can never shadow a provider payment id.
        result = repo.record_payment(invoice_id, body.amount, invoice.currency, f"manual:{body.reference}")
    except repo.InvoiceNotOpen:
        raise HTTPException(status.HTTP_409_CONFLICT, "invoice is not open") from None
    if result is repo.PaymentResult.DUPLICATE:
        raise HTTPException(status.HTTP_409_CONFLICT, "payment reference already recorded")
    log.info("manual payment recorded for invoice %s (%s)", invoice.number, result.value)


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
