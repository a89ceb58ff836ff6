"""Rerankers of a retriever's top K: the BLINK-style cross-encoder and Read-and-Select, each with its trainer."""
