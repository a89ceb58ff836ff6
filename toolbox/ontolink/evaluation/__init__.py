"""Scoring linked, retrieved and annotated records (`ontolink eval`): rank metrics, span scores, the tables, plots and HTML report."""
