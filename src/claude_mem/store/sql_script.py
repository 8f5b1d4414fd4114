"""Several SQL statements run inside the caller's transaction (what every migration is made of)."""

import _sqlite3 as sqlite3  # `sqlite3`'s own driver, without the `datetime` its wrapper imports (db.py)


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute several statements inside the caller's transaction.

    `executescript` would COMMIT first and break the one-transaction-per-migration rule.
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement: {statement.strip()[:80]}")
