"""Where a store lives: a local folder, or a prefix in object storage (``s3://bucket/path``).

Lance and LanceDB read and write object storage themselves; they take their credentials from
the usual environment variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_REGION``...). What they do not read is added here, once, for both
of them and for the small objects this store keeps beside its tables (the properties record):
the endpoint of an S3-compatible server (``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL``),
and plain HTTP when that endpoint is an ``http://`` URL (the user chose it).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ObjectFolder", "remote_uri", "single_uploads", "storage_options", "writer_lock_path",
]

#: URI schemes of object storage that Lance reads and writes (``s3`` is the one tested here).
REMOTE_SCHEMES = ("s3", "s3+ddb", "gs", "az", "abfs")


def remote_uri(text: str) -> str | None:
    """``text`` as the URI of a store in object storage (no trailing slash), or ``None`` for a
    local path (``file://`` URIs included).

    Raises:
        ValueError: a URI of a scheme Lance does not store to, or without a bucket.
    """
    if "://" not in text:
        return None
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return None
    if scheme not in REMOTE_SCHEMES:
        raise ValueError(
            f"an index is a local folder or a URI of object storage "
            f"({', '.join(s + '://' for s in REMOTE_SCHEMES)}), got {text!r}"
        )
    if not parts.netloc:
        raise ValueError(f"{text!r} names no bucket: write s3://BUCKET/PATH")
    return f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def _endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def storage_options(uri: str) -> dict[str, str]:
    """What Lance and LanceDB are given as ``storage_options`` for the store at ``uri``, on top
    of the environment they read themselves (see the module)."""
    if not uri.startswith(("s3://", "s3+ddb://")):
        return {}
    options: dict[str, str] = {}
    endpoint = _endpoint()
    if endpoint:
        options["aws_endpoint"] = endpoint
        if endpoint.startswith("http://") and "AWS_ALLOW_HTTP" not in os.environ:
            options["allow_http"] = "true"
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        options["aws_region"] = region
    return options


#: Bytes Lance buffers before it begins a multipart upload (Lance's default: 5 MB, the least
#: S3 takes). A batch's data file (a few thousand chunks) is 10-20 MB: one PUT instead of a
#: multipart upload of four requests or more (start, parts, completion).
UPLOAD_SIZE = 32 << 20


def single_uploads() -> None:
    """Have Lance upload a file of up to :data:`UPLOAD_SIZE` bytes in one request, unless the
    environment says otherwise. Lance reads ``LANCE_INITIAL_UPLOAD_SIZE`` from the
    environment only (no storage option), once, at its first write: this is called when a
    store in object storage is made, before it writes (a process that wrote with Lance
    before keeps the size it read then). A process that makes no such store is left alone."""
    os.environ.setdefault("LANCE_INITIAL_UPLOAD_SIZE", str(UPLOAD_SIZE))


def writer_lock_path(uri: str) -> Path:
    """The local file that writers of the store at ``uri`` on this machine lock (object
    storage has no lock a process holds until it ends): in ragloom's cache folder
    (``$XDG_CACHE_HOME/ragloom/locks``, else ``~/.cache/ragloom/locks``), named after a
    digest of the URI."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(uri.encode()).hexdigest()[:32]
    return Path(base) / "ragloom" / "locks" / f"{digest}.lock"


class ObjectFolder:
    """The objects under a store's URI, through pyarrow's file systems (no other client):
    whether a prefix holds anything, small objects read and written whole (a PUT replaces an
    object atomically), an object deleted, a prefix removed."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._fs: Any = None
        self._base = ""

    def _filesystem(self) -> tuple[Any, str]:
        if self._fs is None:
            import pyarrow.fs as pafs

            parts = urlsplit(self.uri)
            if parts.scheme.startswith("s3"):
                endpoint = _endpoint()
                options: dict[str, Any] = {
                    "region": os.environ.get("AWS_REGION")
                    or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
                }
                if endpoint:
                    target = urlsplit(endpoint)
                    options["endpoint_override"] = target.netloc or endpoint
                    options["scheme"] = target.scheme or "https"
                self._fs = pafs.S3FileSystem(**options)
                self._base = f"{parts.netloc}{parts.path}"
            else:
                self._fs, self._base = pafs.FileSystem.from_uri(self.uri)
        return self._fs, self._base

    def _path(self, name: str) -> str:
        _, base = self._filesystem()
        return f"{base}/{name}" if name else base

    def exists(self, name: str = "") -> bool:
        """Whether an object or a prefix ``name`` (relative; ``""``: the store's own) exists."""
        import pyarrow.fs as pafs

        fs, _ = self._filesystem()
        # an object, or a prefix with objects under it (S3 has no folders: pyarrow lists one)
        return bool(fs.get_file_info(self._path(name)).type != pafs.FileType.NotFound)

    def read(self, name: str) -> bytes | None:
        """The object ``name`` (``None``: there is none)."""
        fs, _ = self._filesystem()
        try:
            with fs.open_input_stream(self._path(name)) as stream:
                data: bytes = stream.read()
        except FileNotFoundError:
            return None
        return data

    def write(self, name: str, data: bytes) -> None:
        """Write the object ``name`` whole."""
        fs, _ = self._filesystem()
        with fs.open_output_stream(self._path(name)) as stream:
            stream.write(data)

    def delete(self, name: str) -> None:
        """Delete the object ``name`` (nothing when there is none)."""
        fs, _ = self._filesystem()
        try:
            fs.delete_file(self._path(name))
        except FileNotFoundError:
            pass

    def remove(self, name: str) -> None:
        """Remove everything under the prefix ``name``."""
        fs, _ = self._filesystem()
        fs.delete_dir(self._path(name))
