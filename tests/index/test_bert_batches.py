"""How MiniLM groups texts into padded batches (pure: no model needed)."""

from votr_mcp.index.bert import PADDING_FILL, length_batches


def test_every_text_is_in_exactly_one_batch_longest_first():
    lengths = [12, 80, 15, 60, 13, 79]
    batches = length_batches(lengths, batch_size=64)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_no_text_is_padded_below_the_fill_share_of_its_batch():
    lengths = [12, 80, 15, 60, 13, 79, 7, 40, 41, 39]
    for batch in length_batches(lengths, batch_size=64):
        longest = max(lengths[i] for i in batch)
        assert all(lengths[i] >= PADDING_FILL * longest for i in batch), batch


def test_texts_of_one_length_share_batches_up_to_the_batch_size():
    batches = length_batches([20] * 10, batch_size=4)
    assert [len(b) for b in batches] == [4, 4, 2]


def test_a_whole_tasks_mixed_needs_are_not_padded_to_the_longest():
    # The measured case: a short need next to a long one is encoded on its own.
    assert length_batches([9, 58], batch_size=64) == [[1], [0]]
    assert length_batches([], batch_size=64) == []
