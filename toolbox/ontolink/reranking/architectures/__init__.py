"""Reranker architectures: one module per architecture, its class registered in ``RERANKERS`` under its name."""
