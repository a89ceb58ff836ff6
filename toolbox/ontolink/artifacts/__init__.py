"""Artifacts read back: what one command wrote as a directory (manifest.json + safetensors) and another
loads, each module with the manifest checks of its kind beside the loader, and the model it runs.

``index`` (name indexes), ``reranker`` (cross-encoders), ``res_reranker`` (Read-and-Select),
``ranker`` (the feature ranker), ``kg_embeddings`` (entity and relation vectors), ``alignment`` (the
text ↔ KG alignment model: a package of its parts, from pair records to scorers).
Steps build these; commands and steps load them from here, never from another command's step. An
artifact imports only downward (backends, ontology, io), never a step.
"""
