"""Concept recognition in raw text: word-form keys, an order-free name matcher, coordination
expansion and document-level abbreviations. Library code: `recognition/annotate.py` puts it together."""
