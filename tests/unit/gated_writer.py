"""A stream writer for connection tests (not collected by pytest)."""

from __future__ import annotations

import asyncio


class GatedWriter:
    """A stream writer whose first drain waits for ``gate`` (a slow pipe):
    the writes it holds up queue behind the connection's write lock. It has
    no flow-control flag, so every write goes through that lock."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.gate = asyncio.Event()
        self.drains = 0

    def write(self, data: bytes) -> None:
        self.out.append(data)

    async def drain(self) -> None:
        self.drains += 1
        if self.drains == 1:
            await self.gate.wait()

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass
