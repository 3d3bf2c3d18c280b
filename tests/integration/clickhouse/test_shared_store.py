"""A job in the worker hands the store thread one statement at a time (SharedStore), on
real chDB: the worker's own calls run between a job's statements, and a staged table
stays with the call that reads it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from turnstream.adapters.clickhouse.shared_store import SharedStore
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.errors import StoreError

pytestmark = pytest.mark.integration

PEOPLE = [("space_id", "String"), ("profile_id", "String")]


@pytest.fixture
def shared(store: Store):  # type: ignore[no-untyped-def]
    async_store = AsyncStore(store)
    yield async_store
    async_store.shutdown()


def test_the_workers_calls_run_between_a_jobs_statements(shared: AsyncStore) -> None:
    between = threading.Event()
    resume = threading.Event()

    def job() -> list[int]:
        jobs_store = SharedStore(shared)
        first = jobs_store.scalar("SELECT 1")
        between.set()
        assert resume.wait(30)
        return [first, jobs_store.scalar("SELECT 2")]

    with ThreadPoolExecutor(1) as jobs_thread:
        running = jobs_thread.submit(job)
        assert between.wait(30)
        # The job is midway: a call of the worker's gets the store thread now, not after.
        assert shared.call(lambda: shared.store.scalar("SELECT 42")) == 42
        assert not running.done()
        resume.set()
        assert running.result(30) == [1, 2]


def test_a_staged_table_is_read_by_the_call_after_it_whoever_staged_between(
    shared: AsyncStore,
) -> None:
    staged = threading.Event()
    resume = threading.Event()

    def job() -> list[tuple]:
        jobs_store = SharedStore(shared)
        jobs_store.stage("_people", PEOPLE, [("acme", "p_job")])
        staged.set()
        assert resume.wait(30)
        return jobs_store.query("SELECT space_id, profile_id FROM _people").rows

    with ThreadPoolExecutor(1) as jobs_thread:
        running = jobs_thread.submit(job)
        assert staged.wait(30)
        # A firing's state look-up stages the same table on the store thread meanwhile.
        shared.call(shared.store.stage, "_people", PEOPLE, [("vida", "p_firing")])
        resume.set()
        assert running.result(30) == [("acme", "p_job")]
    # The firing's own read after the job's: the job's stage did not stay as the firing's.
    shared.call(shared.store.stage, "_people", PEOPLE, [("vida", "p_firing")])
    assert shared.call(shared.store.query, "SELECT profile_id FROM _people").rows == [("p_firing",)]


def test_a_jobs_last_stage_is_written_when_it_closes_and_a_unit_gets_the_real_store(
    shared: AsyncStore,
) -> None:
    def job() -> tuple[str, list[tuple]]:
        jobs_store = SharedStore(shared)
        jobs_store.stage("_people", PEOPLE, [("acme", "p_1"), ("acme", "p_2")])
        jobs_store.close()  # nothing read it: written all the same, as the job left it
        name = jobs_store.unit(lambda real: threading.current_thread().name)
        rows = jobs_store.unit(lambda real: real.query("SELECT count() FROM _people").rows)
        return name, rows

    with ThreadPoolExecutor(1, thread_name_prefix="jobs") as jobs_thread:
        name, rows = jobs_thread.submit(job).result(30)
    assert name.startswith("store")  # the store thread's, not the job's
    assert rows == [(2,)]


def test_a_failed_statement_fails_the_job_and_the_store_thread_goes_on(
    shared: AsyncStore,
) -> None:
    jobs_store = SharedStore(shared)
    with pytest.raises(StoreError):
        jobs_store.command("SELECT * FROM no_such_table_here")
    assert jobs_store.scalar("SELECT 7") == 7
    with pytest.raises(TypeError, match="worker owns it"):
        jobs_store.claim_ownership("http://127.0.0.1:1")
