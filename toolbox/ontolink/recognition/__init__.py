"""Concept recognition in raw text: word-form keys, an order-free name matcher, coordination
expansion and document-level abbreviations. Library code: `steps/annotate.py` puts it together."""
