"""In-process publish/subscribe for what the worker learns (the SSE stream and viewer subscribe):
rows written to memory and forgets (published by `change_feed`), queue counts, health.

Publishing never blocks and never fails: each subscriber has a bounded queue, and a subscriber that
falls behind loses its oldest events (and is told how many through a `dropped` count) instead of
slowing the observer down.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

KINDS = ("observation", "summary", "prompt", "queue", "health", "forget")
DEFAULT_QUEUE_SIZE = 256


@dataclass(frozen=True)
class Event:
    kind: str
    data: object


# Delivered to every subscriber when the bus closes (worker shutdown): iteration then ends.
CLOSED = Event("closed", None)


@dataclass(eq=False)
class Subscription:
    """One subscriber's bounded mailbox: `async with bus.subscribe() as events: async for event in events`."""

    bus: EventBus
    kinds: frozenset[str]
    queue: asyncio.Queue[Event] = field(default_factory=lambda: asyncio.Queue(DEFAULT_QUEUE_SIZE))
    loop: asyncio.AbstractEventLoop | None = None
    dropped: int = 0

    def offer(self, event: Event) -> None:
        """Enqueue without blocking, dropping the oldest event when full (runs on `loop`)."""
        if event is not CLOSED and event.kind not in self.kinds:
            return
        while True:
            try:
                self.queue.put_nowait(event)
                return
            except asyncio.QueueFull:
                try:
                    self.queue.get_nowait()
                    self.dropped += 1
                except asyncio.QueueEmpty:
                    pass

    async def get(self) -> Event:
        return await self.queue.get()

    def close(self) -> None:
        self.bus.unsubscribe(self)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        event = await self.queue.get()
        if event is CLOSED:
            self.queue.put_nowait(CLOSED)  # stays ended for any later read
            raise StopAsyncIteration
        return event

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


class EventBus:
    """Fan-out of `Event`s to every current subscriber; safe to publish from any thread."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self.queue_size = queue_size
        self._subscribers: set[Subscription] = set()
        self._lock = threading.Lock()
        self.published = 0
        self.closed = False

    def subscribe(self, kinds: tuple[str, ...] | list[str] | None = None) -> Subscription:
        """A new subscription to `kinds` (default all); must be created inside the running loop."""
        wanted = frozenset(kinds) if kinds else frozenset(KINDS)
        unknown = wanted - set(KINDS)
        if unknown:
            raise ValueError(f"unknown event kind(s): {', '.join(sorted(unknown))}")
        subscription = Subscription(
            bus=self, kinds=wanted, queue=asyncio.Queue(self.queue_size), loop=asyncio.get_running_loop()
        )
        with self._lock:
            if self.closed:
                subscription.offer(CLOSED)
            else:
                self._subscribers.add(subscription)
        return subscription

    def close(self) -> None:
        """End every subscription (worker shutdown): their iteration stops after what is queued."""
        with self._lock:
            self.closed = True
            subscribers = list(self._subscribers)
            self._subscribers.clear()
        for subscription in subscribers:
            self._deliver(subscription, CLOSED)

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(subscription)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def publish(self, kind: str, data: object) -> None:
        """Deliver `data` to every subscriber of `kind`; never blocks the caller."""
        if kind not in KINDS:
            raise ValueError(f"unknown event kind {kind!r} (known: {', '.join(KINDS)})")
        event = Event(kind, data)
        with self._lock:
            subscribers = list(self._subscribers)
            self.published += 1
        for subscription in subscribers:
            self._deliver(subscription, event)

    def _deliver(self, subscription: Subscription, event: Event) -> None:
        loop = subscription.loop
        if loop is None or loop.is_closed():
            self.unsubscribe(subscription)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            subscription.offer(event)
        else:
            try:
                loop.call_soon_threadsafe(subscription.offer, event)
            except RuntimeError:
                self.unsubscribe(subscription)
