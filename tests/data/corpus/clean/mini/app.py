"""Order lookups for the storefront."""

import os
import sqlite3

API_TOKEN = os.environ["STOREFRONT_API_TOKEN"]


def find_order(conn: sqlite3.Connection, order_id: str) -> tuple | None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM orders WHERE id = ?", (order_id,))
    return cur.fetchone()


def page(items: list, start: int, size: int) -> list:
    return items[start : start + size]


def status_label(status: str) -> str:
    labels = {"NEW": "New", "PAID": "Paid", "SHIPPED": "Shipped", "REFUNDED": "Refunded"}
    return labels.get(status, "unknown")


def log_total(total: float) -> None:
    # BORDERLINE 1 float totals; fine for display only
    print("total", round(total, 2))
