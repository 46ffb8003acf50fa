"""Waiting for PostgreSQL's notifications: woken by a NOTIFY, and by `stop` however long the
wait was asked to be (a replica's watcher and a worker close without waiting an interval)."""

from __future__ import annotations

import threading

import sqlalchemy

from windowpack.storage import VersionListener
from windowpack.storage.database import create_database_engine

FOREVER_S = 3_600.0  # a wait no test sits out: only a NOTIFY or `stop` can end it
HANG_S = 120.0  # a bound that only catches a hang


def _waiting(
    listener: VersionListener, stop: threading.Event
) -> tuple[threading.Thread, list[bool]]:
    woken: list[bool] = []
    thread = threading.Thread(target=lambda: woken.append(listener.wait(FOREVER_S, stop)))
    thread.start()
    return thread, woken


def test_a_long_wait_ends_when_stop_is_set(postgres_url: str) -> None:
    engine = create_database_engine(postgres_url)
    listener = VersionListener(engine, channel="windowpack_test_stop")
    stop = threading.Event()
    try:
        thread, woken = _waiting(listener, stop)
        stop.set()
        thread.join(HANG_S)
        assert not thread.is_alive() and woken == [False]
    finally:
        listener.close()
        engine.dispose()


def test_a_notify_wakes_a_long_wait(postgres_url: str) -> None:
    engine = create_database_engine(postgres_url)
    listener = VersionListener(engine, channel="windowpack_test_wake")
    stop = threading.Event()
    try:
        listener.wait(0.01, stop)  # connects and listens before the NOTIFY is sent
        thread, woken = _waiting(listener, stop)
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text("NOTIFY windowpack_test_wake"))
        thread.join(HANG_S)
        assert not thread.is_alive() and woken == [True]
    finally:
        stop.set()
        listener.close()
        engine.dispose()
