# Appended to the reference transformer.py: the honest twin of the training-graph attacks beside
# it. forward is a context-free model (the next token from the current one only): it learns
# nothing of the reversal task, so the kit's training gives it no training point.


def _bigram_forward(self, src, tgt):
    return self.generator(self.tgt_embed(tgt))


Transformer.forward = _bigram_forward
