"""Write transactions that take the lock up front and nest as savepoints. Stdlib only."""

import _sqlite3 as sqlite3  # `sqlite3`'s own driver, without the `datetime` its wrapper imports (db.py)


class transaction:
    """`with transaction(conn):` runs the block in `BEGIN IMMEDIATE` … `COMMIT`, or rolls it back.

    IMMEDIATE takes the write lock up front (waiting up to the connection's busy timeout), so a
    writer never fails half-way on a lock upgrade. Inside an open transaction it nests as a
    SAVEPOINT: the inner block's failure rolls back only its own writes. A class, not
    `contextlib`: the hooks use it too.
    """

    __slots__ = ("conn", "savepoint")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.savepoint = ""

    def __enter__(self) -> sqlite3.Connection:
        if self.conn.in_transaction:
            self.savepoint = f"nested_{id(self):x}"
            self.conn.execute(f"SAVEPOINT {self.savepoint}")
        else:
            self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if self.savepoint:
            if exc_type is None:
                self.conn.execute(f"RELEASE {self.savepoint}")
            elif self.conn.in_transaction:
                self.conn.execute(f"ROLLBACK TO {self.savepoint}")
                self.conn.execute(f"RELEASE {self.savepoint}")
            return
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
