"""Artifacts read back: what one command wrote as a directory (manifest.json + safetensors) and another
loads, each module with the manifest checks of its kind beside the loader.

``index`` (name indexes), ``reranker`` (cross-encoders), ``kg_embeddings`` (entity and relation vectors),
``alignment`` (text ↔ KG alignment heads).
Steps build these; commands and steps load them from here, never from another command's step.
"""
