"""`ragloom __PREFIX__-stats`: this plugin's command (imported when it runs)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("__PREFIX__-stats")
@click.argument("chunks", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def chunk_stats(chunks: Path, as_json: bool) -> int:
    """Count the chunks, documents and characters of a chunks file (ragloom ingest -o)."""
    count, characters, documents = 0, 0, set()
    with chunks.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                chunk = json.loads(line)
            except json.JSONDecodeError as exc:
                raise click.BadParameter(
                    f"line {number} is not JSON: {exc.msg}", param_hint="CHUNKS"
                ) from None
            if not isinstance(chunk, dict) or not isinstance(chunk.get("content"), str):
                raise click.BadParameter(
                    f"line {number} is not a chunk (no content)", param_hint="CHUNKS"
                )
            count += 1
            characters += len(chunk["content"])
            documents.add(chunk.get("parent_id") or chunk.get("id"))
    stats = {"chunks": count, "documents": len(documents), "characters": characters}
    if as_json:
        click.echo(json.dumps(stats))
    else:
        click.echo(f"{count} chunks of {len(documents)} documents, {characters} characters")
    return 0
