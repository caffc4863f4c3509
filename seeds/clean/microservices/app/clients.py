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


def _amount(amount: Decimal) -> str:
    """An amount as payments takes it: a positive decimal string with two places.

    An amount it cannot carry exactly is refused, never rounded: charging 10.00 for a
    10.005 order would be a silent wrong charge.
    """
    cents = amount.quantize(Decimal("0.01")) if amount.is_finite() else amount
    if not amount.is_finite() or amount <= 0 or cents != amount:
        raise ValueError(f"amount must be a positive number of cents, got {amount}")
    return str(cents)


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
        try:
            data = resp.json()
        except ValueError as exc:
            # A success answer we cannot read (e.g. a proxy's HTML page): what happened is unknown.
            raise UpstreamError(self.service_name, None, f"unreadable {resp.status_code} response") from exc
        if not isinstance(data, dict):
            raise UpstreamError(self.service_name, None, f"unexpected {resp.status_code} response body")
        return data

    def _field(self, data: dict[str, Any], key: str) -> str:
        try:
            return str(data[key])
        except KeyError as exc:
            raise UpstreamError(self.service_name, None, f"response has no {key!r}") from exc

    def _get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        url = self._url(path)
        for attempt in range(1, self._config.max_attempts + 1):
            if attempt > 1:
                time.sleep(self._backoff_delay(attempt - 1))
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
        # Inventory is reached through the internal mesh gateway, whose certificate is
        # issued by the internal CA.
        self._session.verify = config.ca_bundle or True

    def get_stock(self, sku: str) -> int:
        """Units of `sku` that can still be promised to customers."""
        data = self._get(f"/v1/stock/{quote(sku, safe='')}")
        return int(data["available"])

    # BORDERLINE 5 a timeout or malformed answer escapes as a raw requests exception or KeyError and may leave an expiring hold behind; whether that matters depends on the callers and on inventory's handling of a repeated order_id, neither in this diff
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
        except requests.RequestException as exc:
            log.error("releasing reservation %s failed: %s", reservation_id, exc)
            raise UpstreamError(self.service_name, getattr(exc.response, "status_code", None), str(exc)) from exc


class PaymentsClient(_ServiceClient):
    service_name = "payments"

    def __init__(self, config: ServiceConfig, session: requests.Session | None = None) -> None:
        super().__init__(config, session)
        self._session.verify = config.ca_bundle or True

    def _post_money(self, url: str, payload: dict[str, Any], headers: dict[str, str], what: str) -> dict[str, Any]:
        """POST a request that moves money, with the caller's Idempotency-Key on every attempt.

        Raises UpstreamError with the HTTP status when payments rejected the request (a 4xx
        other than 409/429 while no earlier attempt's outcome is unknown), and with status
        None when the outcome is unknown: connection errors, timeouts, 5xx answers (a
        gateway's 502/504 says nothing about whether payments applied the request), 409 and
        429 answers (the same key may still be being applied by an earlier attempt or an
        earlier call) that persist through the retries, a 4xx to a retry after such an
        attempt, or a success answer that cannot be read.
        """
        last_failure = "no attempt made"
        outcome_unknown = False
        for attempt in range(1, self._config.max_attempts + 1):
            if attempt > 1:
                time.sleep(self._backoff_delay(attempt - 1))
            try:
                resp = self._session.post(url, json=payload, headers=headers, timeout=self.timeout)
            except requests.RequestException as exc:
                # Not only ConnectionError/Timeout: a reset or bad encoding while the answer
                # is read (ChunkedEncodingError, ContentDecodingError) also leaves it unknown.
                last_failure = str(exc)
                outcome_unknown = True
                log.warning("payment %s failed (attempt %d): %s", what, attempt, exc)
                continue
            if resp.status_code >= 500 or resp.status_code in (409, 429):
                last_failure = f"status {resp.status_code}"
                outcome_unknown = True
                log.warning(
                    "payment %s answered %s (attempt %d) request_id=%s",
                    what,
                    resp.status_code,
                    attempt,
                    resp.headers.get("X-Request-Id", "-"),
                )
                continue
            if resp.status_code >= 400:
                log.error(
                    "payment %s failed status=%s request_id=%s",
                    what,
                    resp.status_code,
                    resp.headers.get("X-Request-Id", "-"),
                )
                if outcome_unknown:
                    # An earlier attempt may already have been applied (or still be running),
                    # so this 4xx rejects only the retry, not the request.
                    raise UpstreamError(
                        self.service_name,
                        None,
                        f"outcome unknown: retry answered {resp.status_code} after {last_failure}",
                    )
            return self._check(resp)
        raise UpstreamError(
            self.service_name, None, f"outcome unknown after {self._config.max_attempts} attempts: {last_failure}"
        )

    def charge(self, order_id: str, customer_id: str, amount: Decimal, currency: str, request_id: str) -> str:
        """Charge the customer's default payment method; returns the charge id.

        `request_id` identifies this charge request and is sent as the Idempotency-Key.
        Raises UpstreamError with the HTTP status when payments rejected the charge, and
        with status None when the outcome is unknown (see _post_money). A caller that
        retries the same checkout after status None must pass the same id again.
        """
        payload = {
            "order_id": order_id,
            "customer_id": customer_id,
            "amount": _amount(amount),
            "currency": currency.upper(),
        }
        # The caller's key on every attempt: payments answers a repeated key with the
        # original charge, so retrying after a lost response or a 5xx cannot bill twice.
        headers = {"X-Request-Source": "orders", "Idempotency-Key": request_id}
        data = self._post_money(self._url("/v2/charges"), payload, headers, f"charge for order {order_id}")
        return self._field(data, "charge_id")

    def refund(self, charge_id: str, amount: Decimal, reason: str, request_id: str) -> str:
        """Refund part or all of a charge; returns the refund id.

        `request_id` identifies this refund request and is sent as the Idempotency-Key on
        every attempt. Errors are reported as for charge(): status None means the outcome is
        unknown and the refund must be retried with the same id.
        """
        data = self._post_money(
            self._url(f"/v2/charges/{quote(charge_id, safe='')}/refunds"),
            {"amount": _amount(amount), "reason": reason},
            {"Idempotency-Key": request_id},
            f"refund of charge {charge_id}",
        )
        return self._field(data, "refund_id")


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
            token=os.environ["PAYMENTS_TOKEN"],
            ca_bundle=ca_bundle,
            read_timeout=10.0,
        )
    )
    return inventory, payments
