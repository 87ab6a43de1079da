"""model.heads: one head type, one parser of ?off= for every model, one HeadsOff."""
import pytest

from model.heads import Head, HeadsOff, head_id, parse_heads
from model.kinds import Block

ONE = (Block.DECODER,)  # a GPT's: its heads are layer.head
ALL = tuple(Block)  # an encoder-decoder's: block.layer.head


def test_a_model_of_one_block_reads_layer_dot_head():
    assert parse_heads("1.2, 0.3", ONE) == (Head(Block.DECODER, 1, 2), Head(Block.DECODER, 0, 3))
    assert parse_heads("", ONE) == () and parse_heads(" , ", ONE) == ()
    for bad in ("1", "a.b", "1.2.3", "-1.0", "cross.1.2"):
        with pytest.raises(ValueError, match="layer.head"):
            parse_heads(bad, ONE)
    assert head_id(Head(Block.DECODER, 1, 2), ONE) == "1.2"


def test_an_encoder_decoder_reads_block_dot_layer_dot_head():
    assert parse_heads("cross.1.2,encoder.0.3", ALL) == (Head(Block.CROSS, 1, 2), Head(Block.ENCODER, 0, 3))
    for bad in ("1.2", "self.1.2", "cross.1", "cross.a.2"):
        with pytest.raises(ValueError, match="block.layer.head"):
            parse_heads(bad, ALL)
    assert head_id(Head(Block.CROSS, 1, 2), ALL) == "cross.1.2"


def test_heads_off_are_checked_and_become_a_factor_per_head():
    with pytest.raises(ValueError, match="no head 2.0"):
        HeadsOff([(2, 0)], 2, 4, ONE)
    with pytest.raises(ValueError, match="no head cross.0.4"):
        HeadsOff([Head(Block.CROSS, 0, 4)], 2, 4, ALL)
    with pytest.raises(ValueError, match="no head cross.0.1"):
        HeadsOff([Head(Block.CROSS, 0, 1)], 2, 4, ONE)  # a GPT has no cross-attention
    off = HeadsOff([(1, 3)], 2, 4, ONE)  # a pair names a head of a model of one block
    assert off.keep(Block.DECODER, 0) is None and off.keep(Block.DECODER, 1).tolist() == [1, 1, 1, 0]
    off = HeadsOff([("cross", 1, 2), Head(Block.ENCODER, 0, 1)], 2, 4, ALL)
    assert off.keep(Block.CROSS, 1).tolist() == [1, 1, 0, 1] and off.keep(Block.DECODER, 1) is None
    assert off.keep(Block.ENCODER, 0).tolist() == [1, 0, 1, 1]
