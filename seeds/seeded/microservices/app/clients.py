"""HTTP clients the orders service uses to call the inventory and payments services."""

from __future__ import annotations

import logging
import os
import random
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter

log = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({502, 503, 504})


class UpstreamError(Exception):
    """An upstream service failed or answered with an unexpected status."""

    def __init__(self, service: str, status: int | None, detail: str = "") -> None:
        super().__init__(f"{service} failed (status={status}): {detail}")
        self.service = service
        self.status = status


class StockUnavailable(Exception):
    """Inventory cannot reserve the requested quantity."""


@dataclass(frozen=True)
class ServiceConfig:
    base_url: str
    token: str
    ca_bundle: str | None = None
    connect_timeout: float = 2.0
    # BORDERLINE 1 three attempts of up to 5 s each may exceed the API gateway's own deadline; whether that matters depends on the gateway timeout, not visible here
    read_timeout: float = 5.0
    max_attempts: int = 3
    backoff_base: float = 0.2


@dataclass(frozen=True)
class Reservation:
    reservation_id: str
    sku: str
    quantity: int
    expires_at: str


class _ServiceClient:
    service_name = "upstream"

    def __init__(self, config: ServiceConfig, session: requests.Session | None = None) -> None:
        self._config = config
        self._session = session or requests.Session()
        self._session.mount("https://", HTTPAdapter(pool_connections=4, pool_maxsize=16))
        self._session.headers.update(
            {"Authorization": f"Bearer {config.token}", "User-Agent": "orders-service/2.3"}
        )

    @property
    def timeout(self) -> tuple[float, float]:
        return (self._config.connect_timeout, self._config.read_timeout)

    def close(self) -> None:
        self._session.close()

    def _url(self, path: str) -> str:
        return f"{self._config.base_url.rstrip('/')}/{path.lstrip('/')}"

    def _backoff_delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter, capped at 5 seconds."""
        return random.uniform(0, min(5.0, self._config.backoff_base * 2 ** attempt))

    def _check(self, resp: requests.Response) -> dict[str, Any]:
        if resp.status_code >= 400:
            raise UpstreamError(self.service_name, resp.status_code, resp.text[:200])
        return resp.json()

    def _get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        url = self._url(path)
        # SEED 5 [MAJOR] (core/retry-storm) GET retries fire immediately with no backoff or jitter, so during an inventory brown-out every caller triples its load in a burst
        for attempt in range(1, self._config.max_attempts + 1):
            try:
                resp = self._session.get(url, params=params, timeout=self.timeout)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if attempt == self._config.max_attempts:
                    raise UpstreamError(self.service_name, None, str(exc)) from exc
                log.warning("%s GET %s failed (attempt %d): %s", self.service_name, path, attempt, exc)
                continue
            if resp.status_code in RETRYABLE_STATUSES and attempt < self._config.max_attempts:
                log.warning("%s GET %s returned %d (attempt %d)", self.service_name, path, resp.status_code, attempt)
                continue
            return self._check(resp)
        raise UpstreamError(self.service_name, None, "retries exhausted")


class InventoryClient(_ServiceClient):
    service_name = "inventory"

    def __init__(self, config: ServiceConfig, session: requests.Session | None = None) -> None:
        super().__init__(config, session)
        # Inventory is reached through the internal mesh gateway.
        # SEED 1 [CRITICAL] (core/tls-verification-disabled) certificate verification turned off for inventory calls, so anyone on the network path can impersonate inventory and capture the bearer token
        self._session.verify = False

    def get_stock(self, sku: str) -> int:
        """Units of `sku` that can still be promised to customers."""
        # SEED 2 [CRITICAL] (core/ssrf) caller-supplied SKU is put into the URL path unencoded, so "../", "?" or "#" let a request reach other inventory endpoints with this service's credentials
        data = self._get(f"/v1/stock/{sku}")
        return int(data["available"])

    def reserve(self, order_id: str, sku: str, quantity: int) -> Reservation:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        resp = self._session.post(
            self._url("/v1/reservations"),
            json={"order_id": order_id, "sku": sku, "quantity": quantity},
            timeout=self.timeout,
        )
        if resp.status_code == 409:
            raise StockUnavailable(sku)
        data = self._check(resp)
        return Reservation(data["reservation_id"], sku, quantity, data["expires_at"])

    def release_reservation(self, reservation_id: str) -> None:
        url = self._url(f"/v1/reservations/{quote(reservation_id, safe='')}")
        try:
            resp = self._session.delete(url, timeout=self.timeout)
            if resp.status_code != 404:
                resp.raise_for_status()
        # SEED 7 [MAJOR] (core/swallowed-error) a failed release is silently ignored, so the caller believes the stock was returned while it stays held (and cannot be sold) until the reservation expires, with no log and no error to retry on
        except requests.RequestException:
            pass


class PaymentsClient(_ServiceClient):
    service_name = "payments"

    def __init__(self, config: ServiceConfig, session: requests.Session | None = None) -> None:
        super().__init__(config, session)
        self._session.verify = config.ca_bundle or True

    def charge(self, order_id: str, customer_id: str, amount: Decimal, currency: str) -> str:
        """Charge the customer's default payment method; returns the charge id.

        Raises UpstreamError with the HTTP status when payments rejected the charge (4xx),
        and with status None when the outcome is unknown (a connection error; a 5xx, since
        a gateway's 502/504 says nothing about whether payments applied the charge; or a
        4xx to a retry after a connection error, which rejects only the retry).
        """
        payload = {
            "order_id": order_id,
            "customer_id": customer_id,
            "amount": str(amount.quantize(Decimal("0.01"))),
            "currency": currency.upper(),
        }
        url = self._url("/v2/charges")
        # SEED 4 [CRITICAL] (core/logic-error) charge is retried after connection errors without an Idempotency-Key, so a charge that succeeded but lost its response is billed twice
        headers = {"X-Request-Source": "orders"}
        outcome_unknown = False
        for attempt in range(1, self._config.max_attempts + 1):
            try:
                # SEED 3 [MAJOR] (core/missing-timeout) POST to payments has no timeout, so a hung payments instance blocks this worker thread indefinitely
                resp = self._session.post(url, json=payload, headers=headers)
            except requests.ConnectionError as exc:
                if attempt == self._config.max_attempts:
                    raise UpstreamError(self.service_name, None, str(exc)) from exc
                outcome_unknown = True
                time.sleep(self._backoff_delay(attempt))
                continue
            if resp.status_code >= 400:
                log.error(
                    "payment charge failed status=%s order=%s headers=%s",
                    resp.status_code,
                    order_id,
                    # SEED 6 [CRITICAL] (core/secrets-in-logs) logs the sent request headers, which include the service's bearer token in the Authorization header
                    resp.request.headers,
                )
            if resp.status_code >= 500 or (resp.status_code >= 400 and outcome_unknown):
                raise UpstreamError(self.service_name, None, f"outcome unknown: status {resp.status_code}")
            return self._check(resp)["charge_id"]
        raise UpstreamError(self.service_name, None, "retries exhausted")

    def refund(self, charge_id: str, amount: Decimal, reason: str, request_id: str) -> str:
        """Refund part or all of a charge; `request_id` identifies this refund request."""
        resp = self._session.post(
            self._url(f"/v2/charges/{quote(charge_id, safe='')}/refunds"),
            json={"amount": str(amount.quantize(Decimal("0.01"))), "reason": reason},
            headers={"Idempotency-Key": request_id},
            timeout=self.timeout,
        )
        return self._check(resp)["refund_id"]


def build_clients() -> tuple[InventoryClient, PaymentsClient]:
    """Create the upstream clients from the pod environment."""
    ca_bundle = os.environ.get("INTERNAL_CA_BUNDLE")
    inventory = InventoryClient(
        ServiceConfig(
            base_url=os.environ["INVENTORY_URL"],
            token=os.environ["INVENTORY_TOKEN"],
            ca_bundle=ca_bundle,
        )
    )
    payments = PaymentsClient(
        ServiceConfig(
            base_url=os.environ["PAYMENTS_URL"],
            # SEED 19 [BLOCKER] (core/hardcoded-secrets) the production payments service token is committed as the fallback value, so anyone with read access to the repository or the image can charge and refund as the orders service
            token=os.environ.get("PAYMENTS_TOKEN", "pmt-svc-prod-7c41e9a0b2f85d36e1a4"),
            ca_bundle=ca_bundle,
            read_timeout=10.0,
        )
    )
    return inventory, payments
