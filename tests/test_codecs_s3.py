"""The claim check on S3-compatible storage (aqless.codecs.s3) against an S3 server the test
starts (moto's server, over HTTP on a local port) and a real Valkey: large payloads kept as
objects and read back, blobs swept with their jobs, a missing object and an unreachable
server as typed errors, and a put refused before anything is queued."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import aqless
from aqless.codecs import PayloadCodec, sweep_blobs
from aqless.errors import BlobMissingError, BlobStoreError

pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

from botocore.config import Config  # noqa: E402  (after the skip: boto3 is needed)

from aqless.codecs.s3 import S3Store  # noqa: E402

CREDENTIALS = {
    "region_name": "us-east-1",
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
}
BIG = {"blob": os.urandom(6000).hex()}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def store(endpoint: str) -> S3Store:
    bucket = f"aqless-{uuid.uuid4().hex}"
    made = S3Store(bucket, prefix="jobs/", endpoint_url=endpoint, **CREDENTIALS)
    made.client.create_bucket(Bucket=bucket)
    return made


@pytest.fixture
async def client(server_url: str, store: S3Store) -> AsyncIterator[aqless.Client]:
    codec = PayloadCodec(store=store, store_threshold=4096)
    async with aqless.Client(server_url, codec=codec) as opened:
        yield opened


def objects(store: S3Store) -> list[str]:
    reply: dict[str, Any] = store.client.list_objects_v2(Bucket=store.bucket)
    return sorted(entry["Key"] for entry in reply.get("Contents", ()))


async def stored(client: aqless.Client, jid: str) -> dict[str, Any]:
    text = await client.redis.hget(f"ql:j:{jid}", "data")
    assert isinstance(text, str)
    envelope: dict[str, Any] = json.loads(text)
    return envelope


async def test_a_large_payload_is_kept_as_an_object_and_read_back(
    client: aqless.Client, store: S3Store
) -> None:
    queue = client.queues["s3-kept"]
    jid = await queue.put("app.Job", BIG)
    small = await queue.put("app.Job", {"small": True})
    envelope = await stored(client, jid)
    assert envelope["blob"].startswith(f"{jid}.")
    assert "data" not in envelope
    assert objects(store) == [f"jobs/{envelope['blob']}"]
    assert json.loads(store.get(envelope["blob"]))  # the envelope's payload, as written
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert job.data == BIG
    popped = await queue.pop_many(2)
    assert {job.jid: job.data for job in popped} == {jid: BIG, small: {"small": True}}


async def test_blobs_whose_job_is_gone_are_swept_and_the_others_kept(
    client: aqless.Client, store: S3Store
) -> None:
    queue = client.queues["s3-sweep"]
    kept, gone = await queue.put("app.Job", BIG), await queue.put("app.Job", BIG)
    await client.jobs.cancel(gone)
    assert len(objects(store)) == 2
    assert await sweep_blobs(client, grace=0) == 1
    assert objects(store) == [f"jobs/{(await stored(client, kept))['blob']}"]
    assert await sweep_blobs(client, grace=3600) == 0  # too young to judge


async def test_a_missing_object_reads_as_blob_missing(store: S3Store) -> None:
    with pytest.raises(BlobMissingError, match="is not in s3://"):
        store.get("no-such-jid.abc")
    store.delete("no-such-jid.abc")  # deleting what is gone is no error


async def test_an_unreachable_server_refuses_the_put_before_anything_is_queued(
    server_url: str,
) -> None:
    unreachable = S3Store(
        "bucket",
        endpoint_url="http://127.0.0.1:9",
        config=Config(connect_timeout=1, retries={"max_attempts": 0}),
        **CREDENTIALS,
    )
    codec = PayloadCodec(store=unreachable, store_threshold=10)
    async with aqless.Client(server_url, codec=codec) as client:
        queue = client.queues["s3-unreachable"]
        with pytest.raises(BlobStoreError, match="did not keep"):
            await queue.put("app.Job", {"x": "y" * 100})
        assert await queue.length() == 0


async def test_a_bucket_that_does_not_exist_is_a_store_error(endpoint: str) -> None:
    absent = S3Store("no-such-bucket", endpoint_url=endpoint, **CREDENTIALS)
    with pytest.raises(BlobStoreError, match="s3://no-such-bucket did not keep"):
        absent.put("jid.1", b"payload")
