"""``client.jobs``: jobs by id, tag, tracking, completion and failure; their progress,
checkpoints and kept results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aqless import rules
from aqless.codecs import decoded_value
from aqless.contracts import ScriptClient as Client
from aqless.contracts.derived import JobsScripted
from aqless.job import Job, RecurringJob
from aqless.models import JobResult, Page, listed
from aqless.progress import Progress
from aqless.results import read_result


class Jobs(JobsScripted):
    """Jobs by id, tag, tracking, completion and failure: ``client.jobs``.

    Examples:
        ```python
        job = await client.jobs.get(jid)
        page = await client.jobs.tagged("invoices", count=50)
        print(job and job.state, page.total, page.jids)
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    async def get(self, jid: str) -> Job | RecurringJob | None:
        """The job or recurring job with this id, or None.

        Args:
            jid: the job's (or the recurring job's) id.

        Examples:
            ```python
            job = await client.jobs.get(jid)
            if isinstance(job, aqless.Job):
                print(job.queue_name, job.state)
            ```
        """
        fields = await self._client.protocol.json("job.get", jid)
        if fields is not None:
            return Job(self._client, fields)
        template = await self._client.protocol.json("recurringJob.get", jid)
        if template is not None:
            return RecurringJob(self._client, template)
        return None

    async def stored_result(self, jid: str) -> JobResult | None:
        """The job's kept return value and state now, without waiting; None when the job
        does not exist (see `Client.result` to wait for it).

        Args:
            jid: the job's id.

        Examples:
            ```python
            stored = await client.jobs.stored_result(jid)
            if stored is not None:
                print(stored.state, stored.value)
            ```
        """
        return await read_result(self._client, jid)

    async def get_many(self, jids: Sequence[str]) -> list[Job]:
        """The jobs that exist among `jids`, in order (missing ones are skipped), read in
        one call.

        Args:
            jids: the ids to read; none: no call, an empty list.

        Examples:
            ```python
            jobs = await client.jobs.get_many([first_jid, second_jid])
            print([job.state for job in jobs])
            ```
        """
        if not jids:
            return []
        reply = await self._client.protocol.json("job.getMulti", *jids)
        return [Job(self._client, fields) for fields in reply or []]

    async def progress(self, *jids: str) -> dict[str, Progress]:
        """The last progress report of each job among `jids` that made one (`job.progress`),
        by jid; a job that made none, or does not exist, is left out.

        Args:
            *jids: the jobs to read; none: no call, an empty dict.

        Examples:
            ```python
            reports = await client.jobs.progress(first_jid, second_jid)
            for jid, report in reports.items():
                print(jid, report.fraction)
            ```
        """
        if not jids:
            return {}
        reply = await self._client.protocol.json("jobs.progress", *jids)
        return {
            str(jid): Progress.from_json(fields)
            for jid, fields in (reply or {}).items()
            if isinstance(fields, dict)
        }

    async def checkpoints(self, *jids: str) -> dict[str, Any]:
        """The last checkpoint state (decoded JSON) of each job among `jids` that holds one
        (`Job.checkpoint`), by jid; a job without one is left out.

        Args:
            *jids: the jobs to read; none: no call, an empty dict.

        Examples:
            ```python
            states = await client.jobs.checkpoints(jid)
            print(states.get(jid))  # e.g. {"row": 1200}
            ```
        """
        if not jids:
            return {}
        reply = await self._client.protocol.json("jobs.checkpoints", *jids)
        codec = self._client.codec
        return {str(jid): decoded_value(codec, state) for jid, state in (reply or {}).items()}

    async def tagged(self, tag: str, *, offset: int = 0, count: int = 25) -> Page:
        """The jids tagged `tag`, a page at a time, with the total.

        Args:
            tag: the tag.
            offset: how many jids to skip (default 0).
            count: the most jids in the page (default 25).

        Raises:
            InvalidValueError: `offset` or `count` outside its rule; nothing read.

        Examples:
            ```python
            page = await client.jobs.tagged("invoices", offset=0, count=50)
            print(page.total, page.jids)
            ```
        """
        return await self._page("jobs.tagged", tag, offset, count)

    async def tracked(self) -> tuple[list[Job], list[str]]:
        """The tracked jobs, and the tracked jids whose jobs are gone.

        Examples:
            ```python
            jobs, gone = await client.jobs.tracked()
            print([job.jid for job in jobs], gone)
            ```
        """
        reply = await self._client.protocol.json("jobs.tracked")
        jobs = [Job(self._client, fields) for fields in listed_objects(reply.get("jobs"))]
        return jobs, listed(reply.get("expired"))

    async def failed(self, group: str, *, offset: int = 0, count: int = 25) -> Page:
        """The jids failed in `group`, most recent first, a page at a time, with the total.

        Args:
            group: the failure group (the `group` a job failed with).
            offset: how many jids to skip (default 0).
            count: the most jids in the page (default 25).

        Raises:
            InvalidValueError: `offset` or `count` outside its rule; nothing read.

        Examples:
            ```python
            page = await client.jobs.failed("app.errors.Timeout", count=10)
            print(page.total, page.jids)
            ```
        """
        return await self._page("jobs.failedByGroup", group, offset, count)

    async def _page(self, command: str, key: str, offset: object, count: object) -> Page:
        """A page of the jids `command` lists under `key`, its offset and count checked."""
        offset, count = rules.checked_listing(offset, count, command)
        reply = await self._client.protocol.json(command, key, offset, count)
        return Page(total=int(reply["total"]), jids=tuple(listed(reply["jobs"])))

    async def failure_groups(self) -> dict[str, int]:
        """Every failure group with the number of jobs failed in it.

        Examples:
            ```python
            for group, count in (await client.jobs.failure_groups()).items():
                print(group, count)
            ```
        """
        reply = await self._client.protocol.json("failureGroups.counts")
        return {str(group): int(count) for group, count in (reply or {}).items()}

    async def cancel(self, *jids: str) -> list[str]:
        """Cancel several jobs in one call; returns the jids cancelled: `jids`, then those of
        the jobs below a flow parent among them, which go with it (docs/guides/flows.md).
        Jobs that depend on each other can only be cancelled together; a job of a flow
        whose parent stays leaves it (the parent stops waiting for it).

        Raises:
            JobDependedOnError: a job outside `jids` (other than a flow parent) depends on
                one of them; nothing was cancelled.
            FlowRunningError: a job of a flow it would remove is running; nothing was
                cancelled.

        Examples:
            ```python
            cancelled = await client.jobs.cancel(first_jid, second_jid)
            print(cancelled)  # the two jids, then any flow children that went with them
            ```
        """
        if not jids:
            return []
        return listed(await self._client.protocol.call("job.cancel", *jids))


def listed_objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
