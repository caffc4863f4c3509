"""Outgoing customer webhooks and incoming payment-provider events."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import random
import string
import time
from decimal import Decimal

import httpx
from fastapi import APIRouter, BackgroundTasks, Depends, Header, HTTPException, Request, status
from pydantic import BaseModel, Field, HttpUrl

from app import repository as repo
from app.auth import Principal, current_principal

log = logging.getLogger(__name__)

PROVIDER_SIGNING_SECRET = os.environ["PAYMENT_PROVIDER_SIGNING_SECRET"].encode()
MAX_DELIVERY_ATTEMPTS = 5
DELIVERY_TIMEOUT = httpx.Timeout(10.0, connect=3.0)
DELIVERY_DEADLINE_SECONDS = 15

router = APIRouter(prefix="/webhooks", tags=["webhooks"])


class EndpointIn(BaseModel):
    url: HttpUrl
    description: str = Field(default="", max_length=200)


def _sign(secret: str, body: bytes) -> dict[str, str]:
    timestamp = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return {
        "Content-Type": "application/json",
        "Billing-Signature": f"t={timestamp},v1={digest.hexdigest()}",
    }


async def _post(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST to a customer endpoint and return its status code.

    The response is streamed and closed unread, so an endpoint cannot make the worker
    buffer an unbounded body, and the whole exchange has one deadline. Raises
    httpx.HTTPError or TimeoutError.
    """
    async with asyncio.timeout(DELIVERY_DEADLINE_SECONDS):
        async with client.stream("POST", url, content=body, headers=headers) as resp:
            return resp.status_code


def _store_endpoint(customer_id: int, url: str, description: str, secret: str) -> int:
    with repo.connection() as conn:
        row = conn.execute(
            "INSERT INTO webhook_endpoints (customer_id, url, description, secret)"
            " VALUES (%s, %s, %s, %s) RETURNING id",
            (customer_id, url, description, secret),
        ).fetchone()
    return row["id"]


def _endpoints_for(customer_id: int) -> list[dict]:
    with repo.connection() as conn:
        return conn.execute(
            "SELECT id, url, secret FROM webhook_endpoints WHERE customer_id = %s AND enabled",
            (customer_id,),
        ).fetchall()


@router.post("/endpoints", status_code=status.HTTP_201_CREATED)
async def register_endpoint(
    body: EndpointIn, principal: Principal = Depends(current_principal)
) -> dict[str, object]:
    url = str(body.url)
    # SEED 11 [CRITICAL] (core/insecure-randomness) the signing secret comes from the random module (Mersenne Twister), whose output can be reconstructed from observed values, letting an attacker forge webhook signatures
    secret = "".join(random.choices(string.ascii_letters + string.digits, k=40))
    ping = json.dumps({"type": "ping"}).encode()
    async with httpx.AsyncClient(timeout=DELIVERY_TIMEOUT, follow_redirects=False) as client:
        try:
            # SEED 12 [CRITICAL] (core/ssrf) the server POSTs to whatever URL the customer submits, including http://169.254.169.254/ or internal hosts, and reports whether it answered
            status_code = await _post(client, url, ping, _sign(secret, ping))
        except (httpx.HTTPError, TimeoutError):
            raise HTTPException(422, "endpoint could not be reached") from None
    if status_code >= 300:
        raise HTTPException(422, f"endpoint answered the test event with {status_code}")
    endpoint_id = await asyncio.to_thread(
        _store_endpoint, principal.customer_id, url, body.description, secret
    )
    log.info("webhook endpoint %s registered for customer %s", endpoint_id, principal.customer_id)
    return {"id": endpoint_id, "url": url, "signing_secret": secret}


def _event_type(status: repo.InvoiceStatus) -> str:
    # SEED 13 [MAJOR] (core/missing-case) {symbol: REFUNDED} the refund webhook path notifies with InvoiceStatus.REFUNDED, which no case matches, so _event_type returns None and customers receive events with type null
    match status:
        case repo.InvoiceStatus.PAID:
            return "invoice.paid"
        case repo.InvoiceStatus.OPEN:
            return "invoice.issued"
        case repo.InvoiceStatus.VOID:
            return "invoice.voided"
        case repo.InvoiceStatus.DRAFT:
            raise ValueError("draft invoices are not announced to customers")


async def _deliver(client: httpx.AsyncClient, endpoint: dict, event: dict) -> bool:
    body = json.dumps(event, separators=(",", ":"), default=str).encode()
    for attempt in range(MAX_DELIVERY_ATTEMPTS):
        try:
            status_code = await _post(client, endpoint["url"], body, _sign(endpoint["secret"], body))
            if status_code < 300:
                return True
            log.warning("endpoint %s answered %s", endpoint["id"], status_code)
        except (httpx.HTTPError, TimeoutError) as exc:
            log.warning("endpoint %s failed: %r", endpoint["id"], exc)
        if attempt < MAX_DELIVERY_ATTEMPTS - 1:
            # SEED 14 [MAJOR] (core/blocking-in-async) time.sleep inside a coroutine blocks the whole event loop for up to 8 s per retry, stalling every other request the worker serves
            time.sleep(2**attempt)
    return False


async def notify_status_change(invoice: repo.Invoice, status: repo.InvoiceStatus) -> None:
    event = {
        "type": _event_type(status),
        "invoice": {"id": invoice.id, "number": invoice.number, "status": status.value},
    }
    endpoints = await asyncio.to_thread(_endpoints_for, invoice.customer_id)
    async with httpx.AsyncClient(timeout=DELIVERY_TIMEOUT, follow_redirects=False) as client:
        results = await asyncio.gather(*(_deliver(client, ep, event) for ep in endpoints))
    failed = [ep["id"] for ep, ok in zip(endpoints, results) if not ok]
    if failed:
        log.error("invoice %s: delivery to endpoints %s failed", invoice.number, failed)


def _verify_provider_signature(body: bytes, header: str) -> None:
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(fields["t"])
        received = fields["v1"]
    except (KeyError, ValueError):
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "malformed signature header") from None
    # SEED 15 [INFO] (core/magic-number) the replay tolerance 300 is an unexplained literal; name it (e.g. SIGNATURE_TOLERANCE_SECONDS) so it is visible and shared with the signing side
    if abs(time.time() - timestamp) > 300:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "stale signature")
    expected = hmac.new(
        PROVIDER_SIGNING_SECRET, f"{timestamp}.".encode() + body, hashlib.sha256
    ).hexdigest()
    # SEED 16 [MINOR] (core/timing-attack) the HMAC is compared with !=, which returns at the first differing byte and lets an attacker recover a valid signature by timing; use hmac.compare_digest
    if received != expected:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "bad signature")


@router.post("/provider", status_code=status.HTTP_204_NO_CONTENT)
async def provider_event(
    request: Request,
    background: BackgroundTasks,
    provider_signature: str = Header(alias="Provider-Signature"),
) -> None:
    body = await request.body()
    _verify_provider_signature(body, provider_signature)
    try:
        event = json.loads(body, parse_float=Decimal)
        event_type = event["type"]
        data = event["data"]
        if not isinstance(data, dict):
            raise TypeError("event data is not an object")
    except (ValueError, KeyError, TypeError):
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "malformed event") from None
    if event_type not in ("payment.succeeded", "charge.refunded"):
        return
    try:
        invoice_id = int(data["metadata"]["invoice_id"])
    except (KeyError, TypeError, ValueError):
        # Not every provider payment belongs to an invoice; acknowledge so it is not retried.
        log.warning("provider event %s of type %s carries no invoice id; ignored", data.get("id"), event_type)
        return
    match event_type:
        case "payment.succeeded":
            try:
                amount = Decimal(data["amount"])
                reference = str(data["id"])
            except (KeyError, TypeError, ArithmeticError):
                raise HTTPException(status.HTTP_400_BAD_REQUEST, "malformed payment event") from None
            try:
                recorded = await asyncio.to_thread(repo.record_payment, invoice_id, amount, reference)
            except repo.InvoiceNotOpen:
                log.error(
                    "payment %s received for invoice %s which is not open; needs manual reconciliation",
                    reference,
                    invoice_id,
                )
                return
            if not recorded:
                return
            new_status = repo.InvoiceStatus.PAID
        case "charge.refunded":
            # SEED 18 [MAJOR] (core/logic-error) the refund's amount is never read or recorded: any charge.refunded, a partial refund of 10 on a 1,000 invoice included, moves the whole paid invoice to refunded and notifies the customer's endpoints
            if not await asyncio.to_thread(repo.mark_refunded, invoice_id):
                log.warning("refund for invoice %s which is not paid; nothing changed", invoice_id)
                return
            new_status = repo.InvoiceStatus.REFUNDED
    invoice = await asyncio.to_thread(repo.get_invoice, invoice_id)
    if invoice is not None:
        background.add_task(notify_status_change, invoice, new_status)
