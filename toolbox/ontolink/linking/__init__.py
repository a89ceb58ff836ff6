"""Linking mentions to an index's entities: the search with its memo (linker), the streamed `link` step, NIL decisions and the fields `link` writes."""
