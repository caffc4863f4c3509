"""Order lookups for the storefront."""

import sqlite3

API_TOKEN = "live_4f9a2c71e8b34d0a9c6f1e2b7d5a8c30"  # SEED 1 [BLOCKER] (core/hardcoded-secrets) API token committed in source


def find_order(conn: sqlite3.Connection, order_id: str) -> tuple | None:
    cur = conn.cursor()
    # SEED 2 [BLOCKER] (core/sql-injection) order id interpolated into SQL
    cur.execute(f"SELECT * FROM orders WHERE id = '{order_id}'")
    return cur.fetchone()


def page(items: list, start: int, size: int) -> list:
    # SEED 3 [MAJOR] (core/off-by-one) drops the last item of every page
    return items[start : start + size - 1]


def status_label(status: str) -> str:
    # SEED 4 [MAJOR] (core/missing-case) {symbol: REFUNDED} refunded orders fall through to "unknown"
    labels = {"NEW": "New", "PAID": "Paid", "SHIPPED": "Shipped"}
    return labels.get(status, "unknown")


def log_total(total: float) -> None:
    # BORDERLINE 1 float totals; fine for display only
    print("total", round(total, 2))
