"""How pushes are batched before the channel layer: merged per group in order, and a
worker's pushes gathered without holding any back."""
import asyncio
import threading
import time

from timeline.push import EVENTS, _hand_over, _send_batch, coalesced, pushes_gathered


def test_batches_handed_over_together_are_merged_per_group_in_order():
    other = {"type": "approval.changed", "approval": "7"}
    batch = [("conversation.1", events(1, 2)), ("conversation.2", events(1)), ("conversation.1", events(3)),
             ("conversation.1", other), ("conversation.1", events(4)), ("conversation.2", events(2, 3))]
    assert coalesced(batch) == [("conversation.1", events(1, 2, 3)), ("conversation.2", events(1, 2, 3)),
                                ("conversation.1", other), ("conversation.1", events(4))]


def recording_layer():
    """A channel layer that notes what it is sent, and the list it notes it in."""
    sent = []

    class Layer:
        async def group_send(self, group, message):
            sent.append((group, message))

    return sent, Layer


def events(*seqs):
    return {"type": EVENTS, "events": [{"seq": s} for s in seqs]}


def test_a_workers_gathered_pushes_go_out_merged_and_a_stalled_step_holds_none_back():
    sent, Layer = recording_layer()

    def until(n):
        deadline = time.monotonic() + 5
        while len(sent) < n and time.monotonic() < deadline:
            time.sleep(0.005)
        return len(sent)

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    try:
        with pushes_gathered(window=0.3):
            _hand_over(Layer(), loop, [("conversation.1", events(1))])  # after a quiet spell: at once
            assert until(1) == 1
            _hand_over(Layer(), loop, [("conversation.1", events(2))])
            _hand_over(Layer(), loop, [("conversation.1", events(3)), ("conversation.2", events(1))])
            # …and then the worker's next step takes long: nothing else is pushed.
        assert until(3) == 3
        assert sent == [("conversation.1", events(1)), ("conversation.1", events(2, 3)),
                        ("conversation.2", events(1))]
    finally:
        loop.call_soon_threadsafe(loop.stop)


def test_a_push_that_waits_goes_after_the_pushes_gathered_before_it():
    sent, Layer = recording_layer()

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    try:
        with pushes_gathered(window=5):
            _hand_over(Layer(), loop, [("conversation.1", events(1))])  # after a quiet spell: at once
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0.05), loop).result()
            _hand_over(Layer(), loop, [("conversation.1", events(2))])  # gathered: held for the window
            # What group_send_many(wait=True) does: sent now, and the gathered one with it, first.
            asyncio.run_coroutine_threadsafe(_send_batch(Layer(), [("conversation.1", events(3))]), loop).result(5)
        assert [message["events"] for _, message in sent] == [[{"seq": 1}], [{"seq": 2}, {"seq": 3}]]
    finally:
        loop.call_soon_threadsafe(loop.stop)
