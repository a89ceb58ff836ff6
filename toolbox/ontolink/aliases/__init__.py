"""From an ontology and an unlabeled corpus to pseudo-labeled pairs: select-entities, gen-aliases (with its LLM backends), the drift filter and make-pairs."""
