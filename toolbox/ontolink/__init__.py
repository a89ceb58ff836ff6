"""ontolink: link scientific text to ontologies and knowledge graphs."""

__version__ = "0.1.0"
