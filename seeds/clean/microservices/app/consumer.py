"""Consumes payment events from RabbitMQ and moves orders through their payment states."""

from __future__ import annotations

import json
import logging
import os
import signal
import time
from datetime import datetime, timezone
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any, Callable

import pika
import psycopg2

log = logging.getLogger("orders.payment_events")

EXCHANGE = "payments.events"
QUEUE = "orders.payment-events"
RETRY_EXCHANGE = "orders.payment-events.retry"
RETRY_QUEUE = "orders.payment-events.retry"
PARKING_QUEUE = "orders.payment-events.parked"
RETRY_DELAY_MS = 30_000
MAX_ATTEMPTS = 5
DATABASE_RETRY_PAUSE_S = 5  # between redeliveries while the database is unreachable
# BORDERLINE 2 a fixed /tmp path is a shared-temp-dir risk on a multi-user host; inside the container its /tmp is private to the process
HEARTBEAT_FILE = Path(os.environ.get("HEARTBEAT_FILE", "/tmp/heartbeat"))
HEARTBEAT_INTERVAL_S = 15


class EventType(str, Enum):
    SETTLED = "payment.settled"
    FAILED = "payment.failed"
    REFUNDED = "payment.refunded"


class PermanentEventError(Exception):
    """The event can never be processed (malformed or unknown type); it must not be retried."""


class EventNotReady(Exception):
    """The event depends on another one that has not been processed yet; retry it later."""


def decode_event(body: bytes) -> dict[str, Any]:
    try:
        event = json.loads(body, parse_float=Decimal)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PermanentEventError("event body is not valid JSON") from exc
    if not isinstance(event, dict):
        raise PermanentEventError("event body is not a JSON object")
    missing = {"event_id", "type", "order_id"} - set(event)
    if missing:
        raise PermanentEventError(f"event is missing fields: {sorted(missing)}")
    return event


def delivery_attempts(properties: pika.BasicProperties) -> int:
    """How many times the message has already been dead-lettered to the retry queue."""
    deaths = (properties.headers or {}).get("x-death") or []
    return sum(int(d.get("count", 0)) for d in deaths if d.get("queue") == QUEUE)


class PaymentEventProcessor:
    def __init__(self, connect: Callable[[], psycopg2.extensions.connection]) -> None:
        self._connect = connect
        self._conn = connect()
        self._handlers: dict[EventType, Callable[[dict[str, Any]], None]] = {
            EventType.SETTLED: self._on_settled,
            EventType.FAILED: self._on_failed,
            EventType.REFUNDED: self._on_refunded,
        }

    def process(self, event: dict[str, Any]) -> None:
        try:
            event_type = EventType(event["type"])
        except ValueError as exc:
            raise PermanentEventError(f"unknown event type {event['type']!r}") from exc
        handler = self._handlers.get(event_type)
        if handler is None:
            log.debug("no handler for %s, skipping event %s", event_type.value, event["event_id"])
            return
        handler(event)

    def rollback(self) -> None:
        """Undo the failed event's transaction.

        A failure that closed the connection (database restart, failover, idle kill) gets a
        new one, so the event goes to the retry queue instead of the consumer dying; while
        the database is still down the next event fails and comes back here.
        """
        try:
            if not self._conn.closed:
                self._conn.rollback()
                return
        except psycopg2.Error:
            log.warning("rollback failed; reconnecting to the database")
        try:
            self._conn = self._connect()
        except psycopg2.OperationalError:
            log.warning("database unreachable; the event will be retried")

    def connection_lost(self) -> bool:
        """True when the last failure closed the connection: the database, not the event, failed."""
        return bool(self._conn.closed)

    def close(self) -> None:
        self._conn.close()

    def _on_settled(self, event: dict[str, Any]) -> None:
        amount = Decimal(event["amount"])
        settled_at = datetime.now(timezone.utc)
        with self._conn, self._conn.cursor() as cur:
            cur.execute(
                """
                INSERT INTO order_payments (event_id, order_id, charge_id, amount, currency, settled_at)
                VALUES (%s, %s, %s, %s, %s, %s)
                ON CONFLICT (event_id) DO NOTHING
                """,
                (event["event_id"], event["order_id"], event["charge_id"], amount, event["currency"], settled_at),
            )
            if cur.rowcount == 0:
                log.info("settlement %s already recorded, skipping", event["event_id"])
                return
            # BORDERLINE 3 the settled amount and currency are not compared with the order total; whether payments can ever settle a different amount than orders charged depends on the payments contract, not visible here
            cur.execute(
                "UPDATE orders SET status = 'paid', paid_at = %s "
                "WHERE id = %s AND status = 'awaiting_payment'",
                (settled_at, event["order_id"]),
            )
            # BORDERLINE 4 a settlement whose order row is not visible yet is parked, not retried; whether a settlement can arrive before the order's insert commits depends on how the API stores the order before charging, not visible here
            if cur.rowcount == 0:
                # Money was taken for an order that is not waiting for it (failed, cancelled,
                # paid by another charge, or unknown). Roll back and park the event so it is
                # reconciled by hand instead of being recorded as an ordinary payment.
                raise PermanentEventError(
                    f"settlement {event['event_id']} does not apply: order {event['order_id']} "
                    "is not awaiting payment"
                )
        log.info("order %s paid (charge %s)", event["order_id"], event["charge_id"])

    def _on_failed(self, event: dict[str, Any]) -> None:
        with self._conn, self._conn.cursor() as cur:
            cur.execute(
                "UPDATE orders SET status = 'payment_failed', failure_reason = %s "
                "WHERE id = %s AND status = 'awaiting_payment'",
                (event.get("reason", "unknown")[:200], event["order_id"]),
            )
        log.info("payment failed for order %s", event["order_id"])

    def _on_refunded(self, event: dict[str, Any]) -> None:
        amount = Decimal(event["amount"])
        refunded_at = datetime.now(timezone.utc)
        with self._conn, self._conn.cursor() as cur:
            # Lock the order first, so refunds of one order are applied one at a time and each
            # sees the refunds committed before it (otherwise two concurrent partial refunds
            # can each miss the other and leave a fully refunded order "paid").
            cur.execute("SELECT status FROM orders WHERE id = %s FOR UPDATE", (event["order_id"],))
            row = cur.fetchone()
            if row is None:
                raise PermanentEventError(f"refund {event['event_id']} for unknown order {event['order_id']}")
            if row[0] == "awaiting_payment":
                raise EventNotReady(f"refund {event['event_id']} arrived before the order's settlement")
            # Only refunds of recorded charges count against what was paid. A refund of a charge
            # whose settlement was parked (e.g. a duplicate charge on an already paid order) must
            # not make the order look fully refunded; park it for the same manual reconciliation.
            cur.execute(
                "SELECT 1 FROM order_payments WHERE order_id = %s AND charge_id = %s",
                (event["order_id"], event["charge_id"]),
            )
            if cur.fetchone() is None:
                raise PermanentEventError(
                    f"refund {event['event_id']} is for charge {event['charge_id']}, "
                    f"which is not a recorded payment of order {event['order_id']}"
                )
            cur.execute(
                """
                INSERT INTO order_refunds (event_id, order_id, charge_id, amount, currency, refunded_at)
                VALUES (%s, %s, %s, %s, %s, %s)
                ON CONFLICT (event_id) DO NOTHING
                """,
                (event["event_id"], event["order_id"], event["charge_id"], amount, event["currency"], refunded_at),
            )
            if cur.rowcount == 0:
                log.info("refund %s already recorded, skipping", event["event_id"])
                return
            # Only a refund that covers everything paid moves the order to "refunded".
            cur.execute(
                """
                UPDATE orders SET status = 'refunded', refunded_at = %s
                WHERE id = %s AND status = 'paid'
                  AND (SELECT COALESCE(SUM(amount), 0) FROM order_refunds WHERE order_id = %s)
                      >= (SELECT COALESCE(SUM(amount), 0) FROM order_payments WHERE order_id = %s)
                """,
                (refunded_at, event["order_id"], event["order_id"], event["order_id"]),
            )
        log.info("refund of %s recorded for order %s", amount, event["order_id"])


class PaymentEventConsumer:
    def __init__(self, amqp_url: str, processor: PaymentEventProcessor, prefetch: int = 20) -> None:
        self._params = pika.URLParameters(amqp_url)
        self._processor = processor
        self._prefetch = prefetch
        self._connection: pika.BlockingConnection | None = None
        self._channel = None
        self._stopping = False

    def _declare_topology(self, channel) -> None:
        channel.exchange_declare(EXCHANGE, exchange_type="topic", durable=True)
        channel.exchange_declare(RETRY_EXCHANGE, exchange_type="fanout", durable=True)
        channel.queue_declare(QUEUE, durable=True, arguments={"x-dead-letter-exchange": RETRY_EXCHANGE})
        channel.queue_declare(
            RETRY_QUEUE,
            durable=True,
            arguments={
                "x-message-ttl": RETRY_DELAY_MS,
                "x-dead-letter-exchange": "",
                "x-dead-letter-routing-key": QUEUE,
            },
        )
        channel.queue_declare(PARKING_QUEUE, durable=True)
        channel.queue_bind(QUEUE, EXCHANGE, routing_key="payment.*")
        channel.queue_bind(RETRY_QUEUE, RETRY_EXCHANGE)

    def _park(self, channel, method, properties, body: bytes) -> None:
        # The channel is in confirm mode, so basic_publish returns only once the broker has
        # taken the (persistent, mandatory) copy; if it refuses it, the error propagates and
        # the original stays unacked, to be redelivered instead of lost.
        parked = pika.BasicProperties(
            content_type=properties.content_type,
            headers=properties.headers,
            message_id=properties.message_id,
            timestamp=properties.timestamp,
            delivery_mode=2,
        )
        channel.basic_publish("", PARKING_QUEUE, body, parked, mandatory=True)
        channel.basic_ack(delivery_tag=method.delivery_tag)

    def _on_message(self, channel, method, properties, body: bytes) -> None:
        try:
            event = decode_event(body)
            self._processor.process(event)
        except PermanentEventError as exc:
            log.error("parking undeliverable event (tag=%s): %s", method.delivery_tag, exc)
            self._park(channel, method, properties, body)
            return
        except (psycopg2.OperationalError, psycopg2.InterfaceError) as exc:
            if not self._processor.connection_lost():
                # An error of this statement (a lock or statement timeout, say), not an outage:
                # it counts as one of the event's attempts like any other failure.
                self._retry_or_park(channel, method, properties, body, exc)
                return
            # The connection is gone, which says nothing about this event: it goes back to the
            # queue after a pause without using one of its attempts, so an outage parks nothing.
            log.warning("database unavailable; requeueing event (tag=%s)", method.delivery_tag)
            self._processor.rollback()
            self._connection.sleep(DATABASE_RETRY_PAUSE_S)
            # Waiting out an outage is the consumer working as meant: liveness must not restart it.
            HEARTBEAT_FILE.touch()
            channel.basic_nack(delivery_tag=method.delivery_tag, requeue=True)
            return
        except Exception as exc:
            self._retry_or_park(channel, method, properties, body, exc)
            return
        channel.basic_ack(delivery_tag=method.delivery_tag)

    def _retry_or_park(self, channel, method, properties, body: bytes, exc: Exception) -> None:
        log.error("payment event failed (tag=%s)", method.delivery_tag, exc_info=exc)
        self._processor.rollback()
        if delivery_attempts(properties) + 1 >= MAX_ATTEMPTS:
            self._park(channel, method, properties, body)
            return
        # Dead-lettered to the retry queue, which re-delivers it after RETRY_DELAY_MS.
        channel.basic_nack(delivery_tag=method.delivery_tag, requeue=False)

    def _heartbeat(self) -> None:
        HEARTBEAT_FILE.touch()
        if self._connection is not None:
            self._connection.call_later(HEARTBEAT_INTERVAL_S, self._heartbeat)

    def stop(self, *_: object) -> None:
        # Runs as a signal handler, possibly in the middle of pika's own I/O, which is not
        # reentrant: only record the request and let the connection's loop act on it.
        self._stopping = True
        if self._connection is not None:
            self._connection.add_callback_threadsafe(self._stop_consuming)

    def _stop_consuming(self) -> None:
        if self._channel is not None:
            self._channel.stop_consuming()

    def run(self) -> None:
        self._connection = pika.BlockingConnection(self._params)
        self._channel = self._connection.channel()
        self._channel.confirm_delivery()
        self._declare_topology(self._channel)
        self._channel.basic_qos(prefetch_count=self._prefetch)
        self._channel.basic_consume(QUEUE, on_message_callback=self._on_message)
        self._heartbeat()
        log.info("consuming %s", QUEUE)
        try:
            if not self._stopping:  # a SIGTERM that came while connecting
                self._channel.start_consuming()
        finally:
            self._connection.close()


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO").upper())
    processor = PaymentEventProcessor(
        lambda: psycopg2.connect(
            os.environ["DATABASE_URL"],
            application_name="orders-payment-consumer",
            connect_timeout=5,
            # Bounded statements and lock waits: a stuck query must not hold the AMQP connection's only thread.
            options="-c statement_timeout=10000 -c lock_timeout=5000",
        )
    )
    consumer = PaymentEventConsumer(os.environ["AMQP_URL"], processor)
    signal.signal(signal.SIGTERM, consumer.stop)
    started = time.monotonic()
    try:
        consumer.run()
    finally:
        processor.close()
        log.info("consumer stopped after %.0f s", time.monotonic() - started)


if __name__ == "__main__":
    main()
