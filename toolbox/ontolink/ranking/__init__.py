"""A learned candidate ranker (`ontolink train ranker`, `link --ranker`): cheap features of each retrieved
candidate that the frozen encoder does not use, combined by a logistic regression fitted without gold labels.

features.py computes them, priors.py reads entity priors, abbreviations.py expands short forms from the
mention's document, queries.py makes the training queries, fit.py fits the model (saved and applied by
ontolink.artifacts.ranker).
"""
