"""The alignment model: trained heads over frozen text vectors and encoded triples (docs/alignment.md).

Directions:

    text2kg  a head g maps document vectors into the triple space; score cos(g(x), φ(t))
    kg2text  a head h maps composed triples into the text space;    score cos(x, h(φ(t)))
    both     one head per direction; D2T ranks with g and T2D with h.

With a hybrid triple encoding (a verbalised block in the documents' own space) the
heads are residual and a ``gate`` may weigh the two blocks of each triple.
"""

from ontolink.core.errors import InputError
from ontolink.kg.alignment.choices import COMBINES, DIRECTIONS
from ontolink.kg.options import AlignFitOptions


def _module():
    # torch, and heads.py which imports it, only when a model is built
    import torch
    from torch import nn

    from ontolink.kg.alignment.heads import make_head  # late: loads torch

    class AlignmentModel(nn.Module):
        """The trained heads; ``spaces`` gives the (document, triple) vectors a direction ranks with."""

        def __init__(self, direction, head, text_dim, triple_dim, hidden=AlignFitOptions.hidden,
                     dropout=AlignFitOptions.dropout, text_block=0, combine=None):
            super().__init__()
            if direction not in DIRECTIONS:
                raise InputError(f"unknown direction {direction!r} (known: {', '.join(DIRECTIONS)})")
            if combine not in (None,) + COMBINES:
                raise InputError(f"unknown combination {combine!r} (known: {', '.join(COMBINES)})")
            self.direction, self.head_kind = direction, head
            self.text_block, self.combine = text_block, combine
            self.heads = nn.ModuleDict()
            if direction in ("text2kg", "both"):
                self.heads["text2kg"] = make_head(head, text_dim, triple_dim, hidden=hidden, dropout=dropout)
            if direction in ("kg2text", "both"):
                self.heads["kg2text"] = make_head(head, triple_dim, text_dim, hidden=hidden, dropout=dropout)
            if text_block:
                # residual heads: a zero last layer, so training starts at the frozen-encoder baseline
                for module in self.heads.values():
                    last = [layer for layer in module.modules() if isinstance(layer, nn.Linear)][-1]
                    nn.init.zeros_(last.weight)
                    nn.init.zeros_(last.bias)
            if combine == "gate":
                # one weight per triple, from both blocks; zero-initialised: an even mix (= concat) at the start
                self.gate = nn.Linear(triple_dim, 1)
                nn.init.zeros_(self.gate.weight)
                nn.init.zeros_(self.gate.bias)

        def triple(self, raw):
            """The triple vector the heads and the ranking read: raw, or the hybrid's two blocks combined."""
            if self.combine is None:
                return raw
            verbalized, kg = raw[..., :self.text_block], raw[..., self.text_block:]
            if self.combine == "gate":
                share = torch.sigmoid(self.gate(raw))
                verbalized, kg = (1 - share) * verbalized, share * kg
            return torch.nn.functional.normalize(torch.cat([verbalized, kg], dim=-1), dim=-1)

        def project(self, head, documents, raw):
            """(documents, triples) in the space ``head`` compares them in. With a verbalised block (in the
            documents' own space) the heads are residual: text2kg adds the document to that block, kg2text
            adds the verbalised triple to its output."""
            normalize = torch.nn.functional.normalize
            triples = self.triple(raw)
            if head == "text2kg":
                projected = self.heads["text2kg"](documents)
                if self.text_block:
                    projected = projected + torch.nn.functional.pad(documents,
                                                                    (0, projected.shape[-1] - self.text_block))
                return normalize(projected, dim=-1), triples
            projected = self.heads["kg2text"](triples)
            if self.text_block:
                projected = projected + raw[..., :self.text_block]
            return normalize(documents, dim=-1), normalize(projected, dim=-1)

        def head_for(self, retrieval):
            """d2t ranks with the text→KG head when there is one, t2d with the KG→text head."""
            preferred = "text2kg" if retrieval == "d2t" else "kg2text"
            return preferred if preferred in self.heads else next(iter(self.heads))

        def spaces(self, retrieval, documents, triples):
            return self.project(self.head_for(retrieval), documents, triples)

    return AlignmentModel


def alignment_model(direction, head, text_dim, triple_dim, hidden=AlignFitOptions.hidden,
                    dropout=AlignFitOptions.dropout, text_block=0, combine=None):
    return _module()(direction, head, text_dim, triple_dim, hidden=hidden, dropout=dropout, text_block=text_block,
                     combine=combine)
