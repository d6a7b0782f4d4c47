"""reqless (reqless-py, synchronous; the same protocol as aqless): ``queue.put`` one at a
time; it has no batch call, so "fastest" pipelines its script (see ``_put_many``). The worker is
reqless's ``GeventWorker`` with ``greenlets=concurrency`` (its way to run jobs
concurrently in one process; gevent patches the socket module) and ``interval=0.1``: it
polls, a pop per job, and the job code completes its own job (the qless convention)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from benchmarks.peers import _common
from benchmarks.peers._common import (
    QUEUE,
    TAIL,
    WARMUP,
    Countdown,
    Latencies,
    Meter,
    Options,
    Result,
    Runner,
    drained,
    main,
    paced_sync,
    payload,
)

KLASS = "benchmarks.peers.reqless.Noop"
INTERVAL = 0.1  # seconds between polls of an idle worker


class Noop:
    """The job class reqless imports by name."""

    @staticmethod
    def process(job: Any) -> None:
        # the runner of this process (its module runs as __main__, this one is imported)
        runner: Any = _common.ACTIVE
        runner.job(**json.loads(job.data))
        job.complete()


def _patch() -> None:
    from gevent import monkey

    monkey.patch_all()


class ReqlessRunner(Runner):
    library = "reqless"
    distribution = "reqless"
    countdown: Countdown | None = None
    latencies: Latencies | None = None
    on_done: Any = None
    sandboxes = ""

    def job(self, n: int, pad: str) -> None:
        if self.latencies is not None:
            self.latencies.started(n)
        if self.countdown is not None:
            self.countdown.tick()
            if self.countdown.done.is_set() and self.on_done is not None:
                self.on_done()
                self.on_done = None

    def _queue(self, options: Options) -> Any:
        from reqless import Client

        self.client = Client(options.url)
        queue = self.client.queues[QUEUE]
        self.client.redis.ping()
        return queue

    def _put(self, queue: Any, i: int) -> None:
        queue.put(KLASS, json.dumps(payload(i)))

    def _put_many(self, queue: Any, total: int, batch: int = 1000) -> None:
        """reqless-py has no batch put: this pipelines its own script (``Client._lua``) with
        the arguments ``Queue.put`` sends, 1,000 per round trip, as aqless's put_many."""
        script, worker = self.client._lua, self.client.worker_name
        for start in range(0, total, batch):
            pipe = self.client.redis.pipeline(transaction=False)
            for i in range(start, min(start + batch, total)):
                arguments = ["put", repr(time.time()), worker, QUEUE, uuid.uuid4().hex, KLASS]
                arguments += [json.dumps(payload(i)), 0, "priority", 0, "tags", "[]"]
                arguments += ["retries", 5, "depends", "[]", "throttles", "[]"]
                script(keys=[], args=arguments, client=pipe)
            pipe.execute()

    def enqueue_one_by_one(self, options: Options) -> Result:
        _patch()
        queue = self._queue(options)
        meter = Meter(options.url)
        with meter.measuring():
            for i in range(options.jobs):
                self._put(queue, i)
        return meter.fill(self.result("enqueue_one_by_one", options))

    def enqueue_fastest(self, options: Options) -> Result:
        _patch()
        queue = self._queue(options)
        meter = Meter(options.url)
        with meter.measuring():
            self._put_many(queue, options.jobs)
        return meter.fill(self.result("enqueue_fastest", options))

    def _worker(self, options: Options) -> Any:
        from reqless.workers.greenlet import GeventWorker

        # reqless makes and removes a folder for every job; keep them out of the work tree
        self.sandboxes = sandboxes = tempfile.mkdtemp(prefix="reqless-bench-")
        worker = GeventWorker(
            [QUEUE],
            self.client,
            interval=INTERVAL,
            greenlets=options.concurrency,
            sandbox_path=sandboxes,
        )
        worker.signals = lambda *signals: None  # leave our signal handlers alone
        return worker

    def drain(self, options: Options) -> Result:
        _patch()
        queue = self._queue(options)
        self._put_many(queue, options.jobs)
        self.countdown = Countdown(options.jobs)
        worker = self._worker(options)
        meter = Meter(options.url)

        def done() -> None:
            if not worker.shutdown:
                meter.stop()
                worker.shutdown = True

        import gevent

        self.on_done = done
        meter.start()
        timer = gevent.spawn_later(options.budget, done)  # what ran by then is measured
        worker.run()
        shutil.rmtree(self.sandboxes, ignore_errors=True)
        finished = self.countdown.done.is_set()
        timer.kill()
        return drained(self, meter, options, None if finished else self.countdown.count)

    def latency(self, options: Options) -> Result:
        _patch()
        queue = self._queue(options)
        self.latencies = latencies = Latencies()

        def put(i: int) -> None:
            latencies.putting(i)
            self._put(queue, i)

        return self._paced(
            "latency", options, latencies, lambda: paced_sync(options.rate, options.seconds, put)
        )

    def latency_2proc(self, options: Options) -> Result:
        """The worker here, the producer (``produce``) in a process of its own."""
        _patch()
        from benchmarks.peers import _two_process

        self._queue(options)
        self.latencies = latencies = _two_process.WallLatencies()
        return self._paced(
            _two_process.LATENCY_2PROC,
            options,
            latencies,
            lambda: _two_process.run_producer(self, options),
        )

    def _paced(
        self, workload: str, options: Options, latencies: Latencies, feed: Callable[[], int]
    ) -> Result:
        """The worker run here while a greenlet, after the warm-up, `feed`s it jobs at the
        steady rate (returning how many it put); `latencies` filled in for `workload`."""
        import gevent

        worker = self._worker(options)
        meter = Meter(options.url)

        def produce() -> None:
            time.sleep(WARMUP)
            meter.start()
            options.jobs = feed()
            time.sleep(TAIL)
            meter.stop()
            worker.shutdown = True

        producer = gevent.spawn(produce)
        worker.run()
        shutil.rmtree(self.sandboxes, ignore_errors=True)
        producer.get()
        result = meter.fill(self.result(workload, options, concurrency=options.concurrency))
        return latencies.fill(result)

    def produce(self, options: Options) -> Result:
        from benchmarks.peers import _two_process

        queue = self._queue(options)
        jobs = paced_sync(options.rate, options.seconds, lambda _: self._put(queue, time.time_ns()))
        return _two_process.produce_result(self, options, jobs)


RUNNER = ReqlessRunner()

if __name__ == "__main__":
    main(RUNNER)
