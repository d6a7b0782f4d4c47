"""A claim-check store on S3-compatible object storage (AWS S3, MinIO, Ceph, R2...).

``S3Store("bucket", prefix="aqless/")`` keeps each blob as one object named ``prefix`` +
the blob's name, through boto3 (the ``s3`` extra). Like `DirectoryStore` it is called
synchronously while the codec encodes or decodes, so a put or a read waits for the request:
keep the store near the workers. Credentials, region and endpoint come from boto3's usual
places (environment, profile, instance role) unless a client is given.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from aqless.errors import BlobMissingError, BlobStoreError, needs_extra

with needs_extra("s3", "aqless.codecs.s3"):
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

__all__ = ["S3Store"]

#: The error codes S3 answers for an object that is not there.
_MISSING = frozenset({"NoSuchKey", "404", "NotFound"})


class S3Store:
    """Blobs as objects of `bucket`, under `prefix`.

    Args:
        bucket: the bucket's name; it must exist (the store creates none).
        prefix: put before each blob's name, so that one bucket serves other things too.
        client: a boto3 S3 client to use; one is made from `client_options` otherwise.
        **client_options: passed to ``boto3.client("s3", ...)``: ``endpoint_url`` for a
            server that is not AWS, ``region_name``, credentials.

    Raises:
        ConfigurationError: the ``s3`` extra (boto3) is not installed (at import).

    Example:
        ```python notest
        from aqless.codecs import PayloadCodec
        from aqless.codecs.s3 import S3Store

        store = S3Store("job-payloads", prefix="prod/", endpoint_url="http://minio:9000")
        codec = PayloadCodec(store=store, store_threshold=256 * 1024)
        ```
    """

    def __init__(
        self, bucket: str, *, prefix: str = "", client: Any = None, **client_options: Any
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.client = client if client is not None else boto3.client("s3", **client_options)

    def __repr__(self) -> str:
        return f"S3Store({self.bucket!r}, prefix={self.prefix!r})"

    @contextmanager
    def _failing_as(self, name: str, doing: str) -> Iterator[None]:
        try:
            yield
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code in _MISSING:
                raise BlobMissingError("", f"blob {name} is not in s3://{self.bucket}") from error
            raise BlobStoreError(f"s3://{self.bucket} did not {doing} {name}: {error}") from error
        except BotoCoreError as error:
            raise BlobStoreError(f"s3://{self.bucket} did not {doing} {name}: {error}") from error

    def put(self, name: str, blob: bytes) -> None:
        """Writes the blob (an S3 put is all or nothing: no reader sees part of one).

        Raises:
            BlobStoreError: the server refused it or could not be reached.
        """
        with self._failing_as(name, "keep"):
            self.client.put_object(Bucket=self.bucket, Key=self.prefix + name, Body=blob)

    def get(self, name: str) -> bytes:
        """The blob's bytes.

        Raises:
            BlobMissingError: no such object.
            BlobStoreError: the server refused it or could not be reached.
        """
        with self._failing_as(name, "read"):
            reply = self.client.get_object(Bucket=self.bucket, Key=self.prefix + name)
            body: bytes = reply["Body"].read()
            return body

    def delete(self, name: str) -> None:
        """Deletes the blob; one already gone is no error.

        Raises:
            BlobStoreError: the server refused it or could not be reached.
        """
        with self._failing_as(name, "delete"):
            self.client.delete_object(Bucket=self.bucket, Key=self.prefix + name)

    def names(self, older_than: float) -> Iterable[str]:
        """The names of the blobs under the prefix written more than `older_than` seconds
        ago, listed a page (1,000 objects) at a time.

        Raises:
            BlobStoreError: the server refused the listing or could not be reached.
        """
        before = time.time() - older_than
        pages = self.client.get_paginator("list_objects_v2")
        with self._failing_as(self.prefix + "*", "list"):
            for page in pages.paginate(Bucket=self.bucket, Prefix=self.prefix):
                for entry in page.get("Contents", ()):
                    if entry["LastModified"].timestamp() < before:
                        yield entry["Key"][len(self.prefix) :]
