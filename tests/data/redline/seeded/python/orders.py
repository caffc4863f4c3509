# DO NOT MERGE — validation seed.
# Every `SEED n [SEVERITY] (rule-id)` marker must be flagged at that severity or higher.
import sqlite3
import subprocess

# SEED 1 [BLOCKER] (core/hardcoded-secret) database password committed in source
DB_PASSWORD = "orders-prod-7f3a9c2e51d8b604"


def find_order(conn: sqlite3.Connection, order_id: str):
    # SEED 2 [BLOCKER] (core/sql-concatenation) order id concatenated into the query
    return conn.execute("SELECT * FROM orders WHERE id = '" + order_id + "'").fetchone()


def export(path: str) -> None:
    subprocess.run("tar czf /tmp/out.tgz " + path, shell=True)  # seed 3 [blocker] (Python/Shell_True) request path reaches a shell


def tag(order: dict, tags=[]):  # SEED 4 [HIGH] (python/mutable-default) the default list is shared by every call
    tags.append(order["id"])
    return tags


def total(lines: list) -> float:
    # SEED  5  [ HIGH ]  ( `python/bare-except` )  — catches KeyboardInterrupt too
    try:
        return sum(line["price"] for line in lines)
    except:
        return 0.0


def audit(order: dict) -> None:
    # SEED 6 [SUGGESTION] (print-debugging) print left in library code
    print("audit", order)


def refund(order: dict) -> dict:
    # SEED 7 [HIGH] a refund that fails is reported as done
    try:
        return {"ok": True, "id": order["id"]}
    except KeyError:
        return {"ok": True}
